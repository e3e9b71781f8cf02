package dev.sandbox4j.vercel;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.sandbox4j.api.Execution;
import dev.sandbox4j.api.RunRequest;
import dev.sandbox4j.api.RunResult;
import dev.sandbox4j.api.RunStatus;
import dev.sandbox4j.api.Sandbox;
import dev.sandbox4j.api.exception.SandboxAuthenticationException;
import dev.sandbox4j.api.exception.SandboxException;
import dev.sandbox4j.api.exception.SandboxInterruptedException;
import dev.sandbox4j.api.exception.SandboxNotFoundException;
import dev.sandbox4j.api.exception.SandboxRateLimitException;
import dev.sandbox4j.api.SandboxRunner;
import dev.sandbox4j.api.SandboxSpec;
import dev.sandbox4j.api.Teardown;
import dev.sandbox4j.policy.EgressPolicy;
import dev.sandbox4j.policy.HeaderRule;
import dev.sandbox4j.policy.SecretRef;
import dev.sandbox4j.policy.UnsupportedPolicyException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import mockwebserver3.MockResponse;
import mockwebserver3.RecordedRequest;
import mockwebserver3.SocketEffect;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Every failure ends in a typed exception or result, with the session stopped and, when the command
 * outlived the client, killed.
 */
class VercelFailureTest extends StubTestBase {
    private static final String SECRET = "sk-live-SECRET-4242";
    private static final JsonNode FIRST_LINE = VercelStub.lines(VercelStub.REC_A.get(2)).get(0);

    private static MockResponse error(int status, String code, String message) {
        return VercelStub.json(status, "{\"error\":{\"code\":\"" + code + "\",\"message\":\"" + message + "\"}}");
    }

    /** The recorded create answer for whatever name the request carried, as a GET of that name returns it. */
    private MockResponse found(RecordedRequest get) {
        String name = get.getUrl().pathSegments().get(get.getUrl().pathSize() - 1);
        JsonNode body = VercelStub.REC_A.get(0).path("response").path("body").deepCopy();
        ((com.fasterxml.jackson.databind.node.ObjectNode) body.path("sandbox")).put("name", name);
        return VercelStub.json(200, body);
    }

    private void assertKilledWithSigkill(String commandId) {
        RecordedRequest kill = stub.first("kill");
        assertEquals("/api/v2/sandboxes/sessions/sbx_000002/cmd/" + commandId + "/kill", kill.getUrl().encodedPath());
        assertEquals(TEAM, kill.getUrl().queryParameter("teamId"));
        assertEquals(VercelStub.parse("{\"signal\":9}"), VercelStub.body(kill));
    }

    @Test
    void a5xxOnCreateIsNeverRetriedBlindly_theSandboxIsFoundByNameAndStopped() {
        stub.on("create", error(503, "internal_error", "upstream timeout"));
        stub.on("get", this::found);
        SandboxException e;
        try (SandboxRunner vercel = runner()) {
            e = assertThrows(SandboxException.class, () -> vercel.run(RunRequest.python("print(1)")));
        }
        assertEquals(503, e.httpStatus().orElseThrow());
        assertTrue(e.requestMayHaveSucceeded());
        assertEquals(List.of("create", "get", "stop"), stub.routes());
        RecordedRequest get = stub.first("get");
        String name = VercelStub.body(stub.first("create")).path("name").asText();
        assertEquals("/api/v2/sandboxes/" + name, get.getUrl().encodedPath());
        assertEquals(TEAM, get.getUrl().queryParameter("teamId"));
        assertEquals(PROJECT, get.getUrl().queryParameter("projectId"));
        assertEquals("false", get.getUrl().queryParameter("resume"), "a lookup must not boot a new session");
    }

    @Test
    void a429OnCreateWaitsRetryAfterAndRetriesWithTheSameName() {
        stub.on("create", error(429, "rate_limited", "slow down").newBuilder().setHeader("Retry-After", "0").build());
        RunResult r;
        try (SandboxRunner vercel = runner()) {
            r = vercel.run(RunRequest.python("print(1)"));
        }
        assertEquals(RunStatus.EXITED, r.status());
        assertEquals(List.of("create", "create", "cmd", "stop"), stub.routes());
        List<RecordedRequest> creates = stub.all("create");
        assertEquals(VercelStub.body(creates.get(0)).path("name"), VercelStub.body(creates.get(1)).path("name"));
        assertEquals(2, r.attempts().size());
    }

    @Test
    void aLostCreateResponseIsFoundByNameAndStopped() {
        stub.on("create", new MockResponse.Builder().onResponseStart(SocketEffect.ShutdownConnection.INSTANCE).build());
        stub.on("get", this::found);
        SandboxException e;
        try (SandboxRunner vercel = runner()) {
            e = assertThrows(SandboxException.class, () -> vercel.run(RunRequest.python("print(1)")));
        }
        assertTrue(e.requestMayHaveSucceeded(), e.getMessage());
        assertEquals(List.of("create", "get", "stop"), stub.routes());
        assertEquals("/api/v2/sandboxes/sessions/sbx_000002/stop", stub.first("stop").getUrl().encodedPath());
    }

    @Test
    void aCreateAnswerWithoutASessionStillGetsItsSandboxStopped() {
        stub.on("create", VercelStub.json(200, "{\"sandbox\":{\"status\":\"pending\"}}"));
        stub.on("get", this::found);
        try (SandboxRunner vercel = runner()) {
            SandboxException e = assertThrows(SandboxException.class, () -> vercel.run(RunRequest.python("print(1)")));
            assertTrue(e.getMessage().contains("without a session id"), e.getMessage());
        }
        assertEquals(List.of("create", "get", "stop"), stub.routes());
    }

    @Test
    void aDroppedStreamIsATypedErrorAndTheCommandIsKilled() {
        stub.on("cmd", r -> stub.stream(List.of(FIRST_LINE), VercelStub.Then.DROP));
        SandboxException e;
        try (SandboxRunner vercel = runner()) {
            e = assertThrows(SandboxException.class, () -> vercel.run(RunRequest.python("print(1)")));
        }
        assertTrue(e.codeMayHaveRun());
        assertFalse(e.isRetriable());
        assertTrue(e.getMessage().contains("ended before the command finished"), e.getMessage());
        assertEquals(List.of("create", "cmd", "kill", "stop"), stub.routes());
        assertKilledWithSigkill("cmd_000003");
    }

    @Test
    void aStreamErrorLineIsATypedErrorAndTheCommandIsKilled() {
        stub.on("cmd", VercelStub.ndjson(List.of(FIRST_LINE, VercelStub.parse("{\"stream\":\"error\",\"data\":"
                + "{\"code\":\"sandbox_stream_closed\",\"message\":\"Sandbox stream was closed\"}}"))));
        SandboxException e;
        try (SandboxRunner vercel = runner()) {
            e = assertThrows(SandboxException.class, () -> vercel.run(RunRequest.python("print(1)")));
        }
        assertEquals("sandbox_stream_closed", e.providerCode().orElseThrow());
        assertTrue(e.codeMayHaveRun());
        assertEquals(List.of("create", "cmd", "kill", "stop"), stub.routes());
    }

    @Test
    void aDetachedJsonAnswerIsRefusedAndItsCommandKilled() {
        stub.on("cmd", VercelStub.json(200, "{\"command\":{\"id\":\"cmd_000003\",\"exitCode\":null}}"));
        try (SandboxRunner vercel = runner()) {
            SandboxException e = assertThrows(SandboxException.class, () -> vercel.run(RunRequest.python("print(1)")));
            assertTrue(e.getMessage().contains("expected application/x-ndjson"), e.getMessage());
        }
        assertEquals(List.of("create", "cmd", "kill", "stop"), stub.routes());
    }

    @Test
    void stopFailingTwiceIsRetriedUntilItWorks() {
        stub.on("stop", error(503, "internal_error", "busy")).on("stop", new MockResponse.Builder()
                .onResponseStart(SocketEffect.ShutdownConnection.INSTANCE).build());
        RunResult r;
        try (SandboxRunner vercel = runner()) {
            r = vercel.run(RunRequest.python("print(1)"));
        }
        assertEquals(Teardown.DESTROYED, r.teardown());
        assertEquals(List.of("create", "cmd", "stop", "stop", "stop"), stub.routes());
    }

    @Test
    void stopThatNeverWorksIsReportedNotThrown() {
        for (int i = 0; i < 200; i++) {
            stub.on("stop", error(500, "internal_error", "down"));
        }
        RunResult r;
        try (SandboxRunner vercel = runner(b -> b.teardownTimeout(Duration.ofMillis(300)))) {
            r = vercel.run(RunRequest.python("print(1)"));
        }
        assertEquals(Teardown.FAILED, r.teardown());
        assertEquals(RunStatus.EXITED, r.status(), "what the code did is still the result");
        assertTrue(stub.all("stop").size() >= 2);
    }

    @ParameterizedTest(name = "stop answering {0} means already stopped")
    @CsvSource({"404,not_found", "410,sandbox_stopped", "422,sandbox_stopping"})
    void stopOfAGoneSessionIsAlreadyGone(int status, String code) {
        stub.on("stop", error(status, code, "gone"));
        RunResult r;
        try (SandboxRunner vercel = runner()) {
            r = vercel.run(RunRequest.python("print(1)"));
        }
        assertEquals(Teardown.ALREADY_GONE, r.teardown());
        assertEquals(1, stub.all("stop").size());
    }

    @Test
    void theClientDeadlineKillsTheCommandAndReportsTimedOut() {
        stub.on("cmd", r -> stub.stream(List.of(FIRST_LINE, VercelStub.parse("{\"stream\":\"stdout\",\"data\":\"tick\\n\"}")),
                VercelStub.Then.STALL));
        RunResult r;
        try (SandboxRunner vercel = runner(b -> b.execGrace(Duration.ofMillis(200)))) {
            r = vercel.run(RunRequest.builder("while True: pass").budget(Duration.ofMillis(300)).build());
        }
        assertEquals(RunStatus.TIMED_OUT, r.status());
        assertEquals("tick\n", r.stdout(), "output before the deadline is kept");
        assertEquals(List.of("create", "cmd", "kill", "stop"), stub.routes());
        assertKilledWithSigkill("cmd_000003");
        assertEquals(300, VercelStub.body(stub.first("cmd")).path("timeout").asInt(), "Vercel's own clock too");
        assertEquals(Teardown.DESTROYED, r.teardown());
    }

    @Test
    void anInterruptMidRunKillsStopsAndKeepsTheFlag() throws Exception {
        stub.on("cmd", r -> stub.stream(List.of(FIRST_LINE), VercelStub.Then.STALL_AFTER_FILL));
        AtomicReference<Throwable> thrown = new AtomicReference<>();
        AtomicBoolean flagAfter = new AtomicBoolean();
        try (SandboxRunner vercel = runner()) {
            Thread t = new Thread(() -> {
                try {
                    vercel.run(RunRequest.builder("import time; time.sleep(3600)").budget(Duration.ofHours(1)).build());
                } catch (Throwable e) {
                    thrown.set(e);
                    flagAfter.set(Thread.currentThread().isInterrupted());
                }
            });
            t.start();
            assertTrue(stub.streaming.await(30, TimeUnit.SECONDS), "the client is reading the command's output");
            t.interrupt();
            t.join(30_000);
            assertFalse(t.isAlive());
        }
        assertInstanceOf(SandboxInterruptedException.class, thrown.get());
        assertTrue(((SandboxException) thrown.get()).codeMayHaveRun());
        assertTrue(flagAfter.get(), "the interrupt flag is restored");
        assertEquals(List.of("create", "cmd", "kill", "stop"), stub.routes());
        assertKilledWithSigkill("cmd_000003");
    }

    @Test
    void aGigabyteLineIsCutAtTheHardCapAndTheCommandKilled() {
        stub.on("cmd", r -> stub.stream(List.of(FIRST_LINE), VercelStub.Then.ENDLESS_STDOUT));
        RunResult r;
        try (SandboxRunner vercel = runner()) {
            r = vercel.run(RunRequest.of(SandboxSpec.defaults(), Execution.builder("print('A' * 2**30)")
                    .hardCapBytes(1 << 20).outputLimit(1000).build()));
        }
        assertEquals(RunStatus.OUTPUT_LIMIT, r.status());
        assertEquals("A".repeat(1000), r.stdout());
        assertTrue(r.stdoutTruncated());
        assertEquals(1 << 20, r.stdoutBytes());
        // Counted on the server side, which keeps writing into socket buffers while OkHttp discards what
        // remains for up to 100 ms on close; far below the 1 GiB line, whatever the machine's load.
        assertTrue(stub.endlessBytes.get() < 512L << 20, "the line was cut, not read whole: " + stub.endlessBytes.get());
        assertEquals(List.of("create", "cmd", "kill", "stop"), stub.routes());
        assertKilledWithSigkill("cmd_000003");
    }

    @Test
    void aFailedLockDownTearsDownAndNoUntrustedCodeRuns() {
        for (int i = 0; i < 3; i++) {
            stub.on("policy", error(500, "internal_error", "firewall unavailable"));
        }
        SandboxSpec spec = SandboxSpec.builder().setupEgress(EgressPolicy.allowAll()).egress(EgressPolicy.denyAll())
                .setupCommand("pip install requests").build();
        try (SandboxRunner vercel = runner()) {
            SandboxException e = assertThrows(SandboxException.class,
                    () -> vercel.run(RunRequest.of(spec, Execution.python("print('untrusted')"))));
            assertEquals(500, e.httpStatus().orElseThrow());
        }
        assertEquals(List.of("create", "cmd", "policy", "policy", "policy", "stop"), stub.routes(),
                "the idempotent policy update is retried, then the sandbox is stopped");
    }

    @Test
    void aPolicyTheServerRefusesIsUnsupportedAndTornDown() {
        stub.on("policy", error(400, "bad_request", "networkPolicy.subnets.deny: invalid"));
        SandboxSpec spec = SandboxSpec.builder().setupEgress(EgressPolicy.allowAll())
                .egress(EgressPolicy.builder().allowDomain("pypi.org").denyCidr("10.0.0.0/8").build())
                .setupCommand("true").build();
        try (SandboxRunner vercel = runner()) {
            UnsupportedPolicyException e = assertThrows(UnsupportedPolicyException.class,
                    () -> vercel.run(RunRequest.of(spec, Execution.python("print(1)"))));
            assertTrue(e.getMessage().contains("networkPolicy.subnets.deny"), e.getMessage());
        }
        assertEquals(List.of("create", "cmd", "policy", "stop"), stub.routes());
    }

    @Test
    void aSessionReportedAllowAllAfterAStricterRequestIsStoppedAndRefused() {
        JsonNode body = VercelStub.REC_B.get(0).path("response").path("body"); // reports mode allow-all
        stub.on("create", VercelStub.json(200, body));
        try (SandboxRunner vercel = runner()) {
            UnsupportedPolicyException e = assertThrows(UnsupportedPolicyException.class,
                    () -> vercel.run(RunRequest.python("print('untrusted')")));
            assertTrue(e.getMessage().contains("reports egress allow-all"), e.getMessage());
        }
        assertEquals(List.of("create", "stop"), stub.routes());
        assertEquals("/api/v2/sandboxes/sessions/sbx_000008/stop", stub.first("stop").getUrl().encodedPath());
    }

    @Test
    void aLockDownReportedAsAllowAllIsRefusedAndTornDown() {
        stub.on("policy", VercelStub.json(200, VercelStub.REC_B.get(0).path("response").path("body")));
        SandboxSpec spec = SandboxSpec.builder().setupEgress(EgressPolicy.allowAll())
                .egress(EgressPolicy.allowOnly("pypi.org")).setupCommand("true").build();
        try (SandboxRunner vercel = runner()) {
            assertThrows(UnsupportedPolicyException.class, () -> vercel.run(RunRequest.of(spec, Execution.python("1"))));
        }
        assertEquals(List.of("create", "cmd", "policy", "stop"), stub.routes());
    }

    @Test
    void aFailingSetupCommandTearsDown() {
        JsonNode exit2 = VercelStub.parse("{\"command\":{\"id\":\"cmd_000003\",\"exitCode\":2,\"durationMs\":5}}");
        stub.on("cmd", VercelStub.ndjson(List.of(FIRST_LINE,
                VercelStub.parse("{\"stream\":\"stderr\",\"data\":\"E: no such package\\n\"}"), exit2)));
        SandboxSpec spec = SandboxSpec.builder().setupCommand("apt-get install nothing").build();
        try (SandboxRunner vercel = runner()) {
            SandboxException e = assertThrows(SandboxException.class,
                    () -> vercel.run(RunRequest.of(spec, Execution.python("print(1)"))));
            assertTrue(e.getMessage().contains("E: no such package"), e.getMessage());
        }
        assertEquals(List.of("create", "cmd", "stop"), stub.routes());
    }

    @ParameterizedTest(name = "create answering {0}")
    @CsvSource({
            "400, bad_request, SandboxException, false",
            "401, unauthorized, SandboxAuthenticationException, false",
            "402, payment_required, SandboxException, false",
            "403, forbidden, SandboxAuthenticationException, false",
            "404, not_found, SandboxNotFoundException, false",
            "422, unprocessable, SandboxException, false",
            "429, rate_limited, SandboxRateLimitException, true"})
    void createErrorsMapByStatusAndCode(int status, String code, String type, boolean retriable) {
        // Retry-After above the lifecycle's 20 s ceiling: thrown at once rather than waited for
        stub.on("create", error(status, code, "refused " + code).newBuilder().setHeader("Retry-After", "30").build());
        SandboxException e;
        try (SandboxRunner vercel = runner()) {
            e = assertThrows(SandboxException.class, () -> vercel.run(RunRequest.python("print(1)")));
        }
        assertEquals(type, e.getClass().getSimpleName());
        assertEquals(status, e.httpStatus().orElseThrow());
        assertEquals(code, e.providerCode().orElseThrow());
        assertEquals(retriable, e.isRetriable());
        assertEquals("vercel", e.provider());
        assertFalse(e.requestMayHaveSucceeded());
        assertTrue(e.getMessage().contains("refused " + code), e.getMessage());
        if (status == 429) {
            assertEquals(Duration.ofSeconds(30), e.retryAfter().orElseThrow());
        }
        assertEquals(List.of("create"), stub.routes(), "a refused create created nothing");
    }

    @Test
    void aStoppedSessionIsNotFoundAndTheCodeDidNotRun() {
        stub.on("cmd", error(410, "sandbox_stopped", "Sandbox is stopped"));
        try (SandboxRunner vercel = runner(); Sandbox s = vercel.open(SandboxSpec.defaults())) {
            SandboxNotFoundException e = assertThrows(SandboxNotFoundException.class,
                    () -> s.exec(Execution.python("print(1)")));
            assertEquals(410, e.httpStatus().orElseThrow());
            assertEquals("sandbox_stopped", e.providerCode().orElseThrow());
            assertFalse(e.codeMayHaveRun());
            assertTrue(e.getMessage().contains("is stopped"), e.getMessage());
        }
        assertEquals(List.of("create", "cmd", "stop"), stub.routes());
    }

    @Test
    void a5xxOnTheCommandMayHaveRunTheCode() {
        stub.on("cmd", error(502, "bad_gateway", "upstream"));
        try (SandboxRunner vercel = runner(); Sandbox s = vercel.open(SandboxSpec.defaults())) {
            SandboxException e = assertThrows(SandboxException.class, () -> s.exec(Execution.python("print(1)")));
            assertTrue(e.codeMayHaveRun());
        }
        assertEquals(List.of("create", "cmd", "stop"), stub.routes(), "run-command is never retried");
    }

    @Test
    void secretsStayOutOfLogsMessagesAndToString() {
        captureLogs();
        // the server echoes the brokered secret and the token back in an error: both must be redacted
        stub.on("cmd", error(400, "bad_request", "bad header Authorization: Bearer " + SECRET + " token " + TOKEN));
        EgressPolicy egress = EgressPolicy.builder().allowDomain("api.openai.com")
                .headerRule(HeaderRule.of("api.openai.com", "Authorization", SecretRef.of("openai", () -> SECRET), "Bearer "))
                .build();
        SandboxException e;
        String runnerText;
        String sandboxText;
        try (SandboxRunner vercel = runner()) {
            runnerText = vercel.toString() + vercel.capabilities();
            try (Sandbox s = vercel.open(SandboxSpec.builder().egress(egress).build())) {
                sandboxText = s.toString();
                e = assertThrows(SandboxException.class, () -> s.exec(Execution.python("print(1)")));
            }
        }
        assertTrue(VercelStub.body(stub.first("create")).toString().contains(SECRET), "the secret went to Vercel's proxy");
        assertFalse(VercelStub.body(stub.first("cmd")).toString().contains(SECRET), "and not into the sandbox");
        String logs = logs();
        assertTrue(logs.contains("vercel"), "debug logging was captured: " + logs);
        for (String s : List.of(SECRET, TOKEN)) {
            assertFalse(e.getMessage().contains(s), e.getMessage());
            assertFalse(logs.contains(s), logs);
            assertFalse(runnerText.contains(s));
            assertFalse(sandboxText.contains(s));
        }
        assertTrue(e.getMessage().contains("Bearer ***"), e.getMessage());
    }

    @Test
    void aSecretThatCannotBeAHeaderIsRefusedBeforeAnyCall() {
        EgressPolicy egress = EgressPolicy.builder().allowDomain("api.example.com")
                .headerRule(HeaderRule.of("api.example.com", "x-key", SecretRef.of("bad", () -> "abc\r\nX-Evil: 1")))
                .build();
        try (SandboxRunner vercel = runner()) {
            SandboxException e = assertThrows(SandboxException.class,
                    () -> vercel.run(RunRequest.of(SandboxSpec.builder().egress(egress).build(), Execution.python("1"))));
            assertTrue(e.getMessage().contains("control characters"), e.getMessage());
            assertFalse(e.getMessage().contains("X-Evil"));
        }
        assertEquals(List.of(), stub.routes());
    }

    @Test
    void aResolverFailureEchoingTheSecretDoesNotLeakIt() {
        captureLogs();
        EgressPolicy egress = EgressPolicy.builder().allowDomain("api.example.com")
                .headerRule(HeaderRule.of("api.example.com", "x-key", SecretRef.of("vault", () -> {
                    throw new IllegalStateException("token " + SECRET + " has expired");
                })))
                .build();
        try (SandboxRunner vercel = runner()) {
            SandboxException e = assertThrows(SandboxException.class,
                    () -> vercel.run(RunRequest.of(SandboxSpec.builder().egress(egress).build(), Execution.python("1"))));
            assertTrue(e.getMessage().contains("SecretRef[vault]"), e.getMessage());
            for (Throwable t = e; t != null; t = t.getCause()) {
                assertFalse(String.valueOf(t.getMessage()).contains(SECRET), t.getMessage());
            }
            assertFalse(logs().contains(SECRET));
        }
        assertEquals(List.of(), stub.routes());
    }
}
