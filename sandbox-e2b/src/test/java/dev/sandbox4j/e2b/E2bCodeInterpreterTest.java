package dev.sandbox4j.e2b;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.sandbox4j.api.Execution;
import dev.sandbox4j.api.RunRequest;
import dev.sandbox4j.api.RunResult;
import dev.sandbox4j.api.RunStatus;
import dev.sandbox4j.api.Sandbox;
import dev.sandbox4j.api.exception.SandboxException;
import dev.sandbox4j.api.SandboxSpec;
import dev.sandbox4j.spi.CreateRequest;
import dev.sandbox4j.policy.Language;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import mockwebserver3.MockResponse;
import mockwebserver3.RecordedRequest;
import okio.Buffer;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Code cells through the code interpreter's /execute NDJSON stream. */
class E2bCodeInterpreterTest extends WireTestBase {
    private E2bSandboxRunner cells;

    @BeforeEach
    void cells() {
        cells = builder().codeInterpreter(true).build();
    }

    @Test
    void aCellIsThreeRequestsShapedLikeTheRecording() throws Exception {
        JsonNode rec = recording("e2b-c-runcode.json");
        fake.executes.add(r -> recordedNdjson(rec.get(1)));
        RunResult r;
        String runId;
        try (Sandbox s = cells.open(SandboxSpec.defaults())) {
            runId = s.runId();
            r = s.exec(Execution.python("print(1)"));
        }
        assertEquals("1\n", r.stdout());
        assertEquals(RunStatus.EXITED, r.status());
        assertEquals(0, r.exitCode().orElseThrow());
        assertEquals(List.of("POST /v2/sandboxes", "POST /execute", "DELETE /sandboxes/isbx1fake0000000"), fake.requestLines());

        JsonNode create = FakeE2b.read(fake.requests.get(0));
        assertEquals(rec.get(0).path("body").path("decoded").path("templateID"), create.path("templateID"));
        assertEquals(runId, create.path("metadata").path(CreateRequest.RUN_ID_LABEL).asText());

        RecordedRequest execute = fake.requests.get(1);
        assertEquals(rec.get(1).path("body").path("decoded"), FakeE2b.read(execute));
        E2bWireTest.assertRecordedHeaders(rec.get(1), execute, List.of("content-type", "e2b-sandbox-port", "x-access-token"));
        assertEquals("isbx1fake0000000", execute.getHeaders().get("e2b-sandbox-id"));
        assertEquals(FakeE2b.TOKEN, execute.getHeaders().get("x-access-token"));
    }

    @Test
    void anErrorBecomesItsTracebackOnStderrAndExitCodeOne() {
        fake.executes.add(r -> FakeE2b.ndjson(List.of(
                "{\"type\": \"stdout\", \"text\": \"before\\n\", \"timestamp\": \"2026-09-21T10:00:00Z\"}",
                "{\"type\": \"error\", \"name\": \"ZeroDivisionError\", \"value\": \"division by zero\", "
                        + "\"traceback\": \"Traceback (most recent call last):\\nZeroDivisionError: division by zero\"}",
                "{\"type\": \"end_of_execution\"}")));
        RunResult r = cells.run(RunRequest.python("print('before'); 1/0"));
        assertEquals("before\n", r.stdout());
        assertEquals("Traceback (most recent call last):\nZeroDivisionError: division by zero\n", r.stderr());
        assertEquals(1, r.exitCode().orElseThrow());
        assertEquals(RunStatus.EXITED, r.status());
    }

    @Test
    void resultTextIsKeptAndKeepalivesIgnored() {
        fake.executes.add(r -> FakeE2b.ndjson(List.of("{\"type\": \"keepalive\"}",
                "{\"type\": \"number_of_executions\", \"execution_count\": 3}",
                "{\"type\": \"result\", \"text\": \"42\", \"is_main_result\": true, \"png\": \"iVBORw0KGgo=\"}",
                "{\"type\": \"stderr\", \"text\": \"warn\\n\"}",
                "{\"type\": \"end_of_execution\"}")));
        RunResult r = cells.run(RunRequest.python("6 * 7"));
        assertEquals("42\n", r.stdout());
        assertEquals("warn\n", r.stderr());
        assertEquals(0, r.exitCode().orElseThrow());
    }

    @Test
    void richResultsComeBackTypedInOrder() {
        byte[] png = {(byte) 0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n', 0, 1, 2};
        byte[] jpeg = {(byte) 0xff, (byte) 0xd8, (byte) 0xff, 0x10};
        String b64 = java.util.Base64.getEncoder().encodeToString(png);
        fake.executes.add(r -> FakeE2b.ndjson(List.of(
                "{\"type\": \"result\", \"png\": \"" + b64 + "\", \"text\": \"<Figure>\", \"is_main_result\": false}",
                "{\"type\": \"result\", \"jpeg\": \"" + java.util.Base64.getEncoder().encodeToString(jpeg) + "\"}",
                "{\"type\": \"result\", \"svg\": \"<svg/>\", \"html\": \"<table/>\", "
                        + "\"json\": {\"a\": 1}, \"text\": \"df\", \"is_main_result\": true}",
                "{\"type\": \"result\", \"png\": \"%%% not base64\"}",
                "{\"type\": \"end_of_execution\"}")));
        RunResult r = cells.run(RunRequest.of(SandboxSpec.defaults(), Execution.builder("plot()").collectFileBytes(10).build()));
        List<dev.sandbox4j.api.RichResult> rr = r.richResults();
        assertEquals(List.of("image/png", "text/plain", "image/jpeg", "image/svg+xml", "text/html", "application/json", "text/plain"),
                rr.stream().map(dev.sandbox4j.api.RichResult::mediaType).toList());
        assertEquals(png.length, rr.get(0).size());
        assertTrue(rr.get(0).truncated(), "cut at the per-result cap of 10 bytes");
        assertEquals(10, rr.get(0).content().length);
        assertEquals("<Figure>", rr.get(1).text());
        org.junit.jupiter.api.Assertions.assertArrayEquals(jpeg, rr.get(2).content());
        assertEquals("<svg/>", rr.get(3).text());
        assertEquals("<table/>", rr.get(4).text());
        assertEquals("{\"a\":1}", rr.get(5).text());
        assertTrue(rr.get(5).mainResult());
        assertEquals("<Figure>\ndf\n", r.stdout(), "result text still reaches stdout");
    }

    @Test
    void javascriptNamesItsLanguageAndBashRunsAsAProcess() {
        try (Sandbox s = cells.open(SandboxSpec.defaults())) {
            s.exec(Execution.of(Language.JAVASCRIPT, "console.log(1)"));
            s.exec(Execution.of(Language.BASH, "echo hi"));
        }
        assertEquals(E2bWireTest.tree("{'code':'console.log(1)','language':'javascript'}"),
                FakeE2b.read(fake.requests("POST", "/execute").get(0)));
        assertEquals(E2bWireTest.startJson("bash", "-c", "echo hi"),
                FakeE2b.startMessage(fake.requests("POST", "/process.Process/Start").get(0)));
    }

    @Test
    void aGiganticLineStopsReadingWithoutBufferingIt() {
        String huge = "{\"type\": \"stdout\", \"text\": \"" + "z".repeat(5 << 20) + "\"}\n";
        fake.executes.add(r -> new MockResponse.Builder().code(200).body(new Buffer().writeUtf8(huge)).build());
        RunResult r = cells.run(RunRequest.python("print('z' * 5_000_000)"));
        assertEquals(RunStatus.OUTPUT_LIMIT, r.status());
    }

    @Test
    void theHardCapStopsReading() {
        byte[] line = ("{\"type\": \"stdout\", \"text\": \"" + "q".repeat(1000) + "\"}\n").getBytes(StandardCharsets.UTF_8);
        fake.executes.add(r -> FakeE2b.endless("application/x-ndjson", new byte[0], line, 100_000));
        RunResult r = cells.run(RunRequest.of(SandboxSpec.defaults(),
                Execution.builder("while True: print('q' * 1000)").hardCapBytes(10_000).build()));
        assertEquals(RunStatus.OUTPUT_LIMIT, r.status());
        assertEquals(10_000, r.stdoutBytes());
    }

    @Test
    void aStreamEndingBeforeEndOfExecutionIsATypedError() {
        fake.executes.add(r -> FakeE2b.ndjson(List.of("{\"type\": \"stdout\", \"text\": \"1\\n\"}")));
        SandboxException e = assertThrows(SandboxException.class, () -> cells.run(RunRequest.python("print(1)")));
        assertTrue(e.codeMayHaveRun());
        assertTrue(e.getMessage().contains("end_of_execution"), e.getMessage());
        fake.executes.add(r -> new MockResponse.Builder().code(200).body("{not json\n").build());
        assertThrows(SandboxException.class, () -> cells.run(RunRequest.python("print(1)")));
        assertEquals(2, fake.requests.stream().filter(r -> r.getMethod().equals("DELETE")).count());
    }

    @Test
    void theBudgetEndsACellClientSide() {
        fake.executes.add(r -> fake.stalling("application/x-ndjson",
                List.of("{\"type\": \"stdout\", \"text\": \"tick\\n\"}\n".getBytes(StandardCharsets.UTF_8))));
        RunResult r = cells.run(RunRequest.builder("import time; time.sleep(100)").budget(Duration.ofMillis(300)).build());
        assertEquals(RunStatus.TIMED_OUT, r.status());
        assertEquals("tick\n", r.stdout());
    }
}
