package dev.sandbox4j.cli.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.sandbox4j.api.RunResult;
import dev.sandbox4j.api.RunStatus;
import dev.sandbox4j.api.Teardown;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class JsonOutputTest {
    private static final ObjectMapper MAPPER = new ObjectMapper();

    private static JsonNode parse(String json) throws Exception {
        return MAPPER.readTree(json);
    }

    @Test
    void escapesQuotesBackslashesAndShortEscapes() {
        assertEquals("\"a\\\"b\\\\c\"", JsonOutput.quote("a\"b\\c"));
        assertEquals("\"\\n\\r\\t\\b\\f\"", JsonOutput.quote("\n\r\t\b\f"));
        assertEquals("\"\"", JsonOutput.quote(""));
        assertEquals("\"/ ok ~\"", JsonOutput.quote("/ ok ~"));
    }

    @Test
    void escapesOtherControlCharactersAsUnicodeEscapes() {
        assertEquals("\"\\u0000\\u0001\\u001b[31m\\u001f\\u007f\"", JsonOutput.quote("\u0000\u0001\u001b[31m\u001f\u007f"));
    }

    @Test
    void nonAsciiBecomesLowercaseUnicodeEscapesAndSurrogatePairsStayPairs() {
        assertEquals("\"caf\\u00e9 \\u4e2d \\ud83d\\ude00 \\u2028\"", JsonOutput.quote("caf\u00e9 \u4e2d \ud83d\ude00 \u2028"));
    }

    @Test
    void everyCharacterRoundTripsThroughAnIndependentParserAndTheOutputIsAscii() throws Exception {
        StringBuilder all = new StringBuilder();
        for (int c = 0; c < 0x10000; c++) {
            if (!Character.isSurrogate((char) c)) {
                all.append((char) c);
            }
        }
        all.appendCodePoint(0x1F600).appendCodePoint(0x10FFFF).appendCodePoint(0x10000);
        String quoted = JsonOutput.quote(all.toString());
        assertTrue(quoted.chars().allMatch(ch -> ch >= 0x20 && ch <= 0x7e), "printable ASCII only");
        assertEquals(all.toString(), parse(quoted).textValue());
    }

    @Test
    void resultIsExactlyOneObjectWithTheDocumentedFieldsInOrder() throws Exception {
        RunResult r = RunResult.builder()
                .stdout("42\n\"quoted\" \\ back\u0000slash \u00e9\ud83d\ude00\n")
                .stderr("Traceback\r\n\tline\u001b[0m")
                .exitCode(7).status(RunStatus.EXITED)
                .stdoutTruncated(true).stderrTruncated(false)
                .stdoutBytes(123_456).duration(Duration.ofMillis(1234))
                .provider("local").sandboxId("lx-\"id\"").teardown(Teardown.DESTROYED)
                .build();
        String json = JsonOutput.result(r);
        assertFalse(json.contains("\n"), "one line");
        JsonNode n = parse(json);
        List<String> names = new ArrayList<>();
        n.fieldNames().forEachRemaining(names::add);
        assertEquals(List.of("stdout", "stderr", "exitCode", "status", "stdoutTruncated", "stderrTruncated",
                "durationMs", "provider", "sandboxId", "teardown", "files", "notCollected"), names);
        assertEquals(r.stdout(), n.get("stdout").textValue());
        assertEquals(r.stderr(), n.get("stderr").textValue());
        assertTrue(n.get("exitCode").isInt());
        assertEquals(7, n.get("exitCode").intValue());
        assertEquals("EXITED", n.get("status").textValue());
        assertTrue(n.get("stdoutTruncated").booleanValue());
        assertTrue(n.get("stderrTruncated").isBoolean());
        assertFalse(n.get("stderrTruncated").booleanValue());
        assertEquals(1234, n.get("durationMs").longValue());
        assertEquals("local", n.get("provider").textValue());
        assertEquals("lx-\"id\"", n.get("sandboxId").textValue());
        assertEquals("DESTROYED", n.get("teardown").textValue());
    }

    @Test
    void exitCodeIsNullWhenTheProcessWasKilledBeforeExiting() throws Exception {
        RunResult r = RunResult.builder().status(RunStatus.TIMED_OUT).duration(Duration.ofSeconds(2))
                .provider("local").sandboxId("x").teardown(Teardown.FAILED).build();
        JsonNode n = parse(JsonOutput.result(r));
        assertTrue(n.has("exitCode"));
        assertTrue(n.get("exitCode").isNull());
        assertEquals("TIMED_OUT", n.get("status").textValue());
        assertEquals("FAILED", n.get("teardown").textValue());
        assertEquals("", n.get("stdout").textValue());
    }

    @Test
    void negativeExitCodesAreNumbers() throws Exception {
        RunResult r = RunResult.builder().exitCode(-9).status(RunStatus.KILLED).build();
        assertEquals(-9, parse(JsonOutput.result(r)).get("exitCode").intValue());
    }
}
