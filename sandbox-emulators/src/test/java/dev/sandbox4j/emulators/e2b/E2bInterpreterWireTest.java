package dev.sandbox4j.emulators.e2b;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import okhttp3.Request;
import okhttp3.Response;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The code interpreter's {@code POST /execute} NDJSON stream on port 49999 (recording e2b-c-runcode.json). */
class E2bInterpreterWireTest extends WireTestSupport {
    String id;
    String token;

    @BeforeEach
    void sandbox() throws IOException {
        JsonNode sb = create("{\"templateID\":\"code-interpreter-v1\"}");
        id = sb.get("sandboxID").asText();
        token = sb.get("envdAccessToken").asText();
        assertEquals("code-interpreter-v1", sb.get("alias").asText());
    }

    Request execute(String body) {
        return new Request.Builder().url(url("/execute")).header("E2b-Sandbox-Id", id).header("E2b-Sandbox-Port", "49999")
                .header("X-Access-Token", token).post(json(body)).build();
    }

    /** The lines without keepalives (sent every 200 ms here, so a slow start shows some). */
    List<String> lines(String body) throws IOException {
        List<String> out = new ArrayList<>(allLines(body));
        out.removeIf(l -> l.equals("{\"type\": \"keepalive\"}"));
        return out;
    }

    List<String> allLines(String body) throws IOException {
        try (Response r = http.newCall(execute(body)).execute()) {
            assertEquals(200, r.code());
            assertEquals(null, r.header("Content-Type"), "the server sets no media type");
            List<String> out = new ArrayList<>();
            BufferedReader reader = new BufferedReader(new InputStreamReader(r.body().byteStream(), StandardCharsets.UTF_8));
            String line;
            while ((line = reader.readLine()) != null) {
                out.add(line);
            }
            return out;
        }
    }

    @Test
    void recordedRunCode() throws IOException {
        List<String> lines = lines("{\"code\":\"print(1)\"}");
        assertEquals("{\"type\": \"number_of_executions\", \"execution_count\": 1}", lines.get(0));
        assertTrue(lines.get(1).matches("\\{\"type\": \"stdout\", \"text\": \"1\\\\n\", \"timestamp\": \"[0-9T:.\\-]+Z\"}"), lines.get(1));
        assertEquals("{\"type\": \"end_of_execution\"}", lines.get(2));
        assertEquals(3, lines.size());
        assertEquals(204, kill(id));
    }

    @Test
    void errorsStderrLanguagesAndCounting() throws IOException {
        List<String> lines = lines("{\"code\":\"import sys\\nprint('x', file=sys.stderr)\\nraise ValueError('bad \\u00e9')\"}");
        assertEquals("{\"type\": \"number_of_executions\", \"execution_count\": 1}", lines.get(0));
        // what the cell printed to stderr comes first; the traceback becomes the error
        JsonNode printed = JSON.readTree(lines.get(1));
        assertEquals("stderr", printed.get("type").asText());
        assertEquals("x\n", printed.get("text").asText());
        JsonNode error = JSON.readTree(lines.get(2));
        assertEquals("error", error.get("type").asText());
        assertEquals("ValueError", error.get("name").asText());
        assertEquals("bad é", error.get("value").asText());
        assertTrue(error.get("traceback").asText().startsWith("Traceback (most recent call last):"));
        assertTrue(lines.get(2).contains("\\u00e9"), "non-ASCII escaped as Python's json.dumps does");

        // sys.exit(n) in a kernel is a SystemExit error, not an exit code
        lines = lines("{\"code\":\"import sys\\nsys.exit(3)\"}");
        error = JSON.readTree(lines.get(1));
        assertEquals("SystemExit", error.get("name").asText());
        assertEquals("3", error.get("value").asText());

        // a SyntaxError has no Traceback header, and is still the error
        lines = lines("{\"code\":\"print('unclosed\"}");
        error = JSON.readTree(lines.get(1));
        assertEquals("SyntaxError", error.get("name").asText(), lines.toString());

        // a cell larger than one argument can hold reaches the interpreter
        String big = "x = 0\n" + "x += 1\n".repeat(40_000) + "print(x)";
        lines = lines(JSON.createObjectNode().put("code", big).toString());
        assertEquals("40000\n", JSON.readTree(lines.get(1)).get("text").asText(), lines.toString());
        // and a NUL inside a JavaScript string literal too (argv cannot carry one)
        String nul = "const s = 'a\u0000b'; console.log(s.length, s.charCodeAt(1))";
        lines = lines(JSON.createObjectNode().put("code", nul).put("language", "javascript").toString());
        assertEquals("3 0\n", JSON.readTree(lines.get(1)).get("text").asText(), lines.toString());

        lines = lines("{\"code\":\"console.log(6*7); console.error('warn')\",\"language\":\"javascript\"}");
        assertEquals("{\"type\": \"number_of_executions\", \"execution_count\": 6}", lines.get(0));
        assertEquals("42\n", JSON.readTree(lines.get(1)).get("text").asText());
        assertEquals("stderr", JSON.readTree(lines.get(2)).get("type").asText());

        lines = lines("{\"code\":\"echo $GREETING\",\"language\":\"bash\",\"env_vars\":{\"GREETING\":\"hi there\"}}");
        assertEquals("hi there\n", JSON.readTree(lines.get(1)).get("text").asText());

        try (Response r = http.newCall(execute("{\"code\":\"1\",\"language\":\"python\",\"context_id\":\"abc\"}")).execute()) {
            assertEquals(400, r.code());
        }
        try (Response r = http.newCall(execute("{\"code\":\"1\",\"language\":\"cobol\"}")).execute()) {
            assertEquals(404, r.code());
        }
        assertEquals(204, kill(id));
    }

    @Test
    void keepalivesWhileACellRuns() throws IOException {
        List<String> lines = allLines("{\"code\":\"import time\\ntime.sleep(0.8)\\nprint('done')\"}");
        assertTrue(lines.contains("{\"type\": \"keepalive\"}"), lines.toString());
        assertEquals("{\"type\": \"end_of_execution\"}", lines.get(lines.size() - 1));
        assertEquals(204, kill(id));
    }

    @Test
    void aDroppedStreamHasNoEndOfExecution() throws IOException {
        emulator.faults().dropStream(1);
        try (Response r = http.newCall(execute("{\"code\":\"print('a' * 10)\"}")).execute()) {
            BufferedReader reader = new BufferedReader(new InputStreamReader(r.body().byteStream(), StandardCharsets.UTF_8));
            assertTrue(reader.readLine().contains("number_of_executions"));
            assertTrue(reader.readLine().contains("stdout"));
            assertThrows(IOException.class, reader::readLine);
        }
        assertEquals(204, kill(id));
    }

    @Test
    void aHostileLineIsAGigabyteWithoutANewline() throws IOException {
        emulator.faults().hostileFraming(true);
        try (Response r = http.newCall(execute("{\"code\":\"print(1)\"}")).execute()) {
            InputStream in = r.body().byteStream();
            byte[] some = readUpTo(in, 4 << 20);
            assertEquals(4 << 20, some.length);
            assertFalse(new String(some, StandardCharsets.US_ASCII).contains("\n"));
        }
        emulator.faults().reset();
        assertEquals(204, kill(id));
    }

    @Test
    void theDebugModeSandboxNeedsNoCreate() throws IOException {
        assertEquals(204, kill(id));
        emulator.close();
        emulator = E2bEmulator.builder().apiKey(KEY).machines(workspaces).debugSandbox(true).build();
        // what the SDK sends with E2B_DEBUG=true and E2B_SANDBOX_URL: no create, no token
        Request start = new Request.Builder().url(url("/process.Process/Start")).header("E2b-Sandbox-Id", "debug_sandbox_id")
                .header("E2b-Sandbox-Port", "49983").post(startBody("{\"process\":{\"cmd\":\"echo\",\"args\":[\"dbg\"]}}")).build();
        try (Response r = http.newCall(start).execute()) {
            assertEquals("dbg\n", stdout(readAll(r.body().byteStream()), "stdout"));
        }
        assertTrue(workspaces.last().hostNetwork, "no egress config: E2B allows everything");
        assertEquals(1, emulator.ledger().live());
        emulator.close(); // the debug-mode SDK never kills: the emulator's close does
        assertEquals(0, emulator.ledger().live());
    }
}
