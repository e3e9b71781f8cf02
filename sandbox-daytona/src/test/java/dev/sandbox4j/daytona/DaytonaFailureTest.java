package dev.sandbox4j.daytona;

import static dev.sandbox4j.daytona.DaytonaWireTest.line;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.node.ObjectNode;
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
import dev.sandbox4j.api.SandboxSpec;
import dev.sandbox4j.api.Teardown;
import dev.sandbox4j.policy.EgressPolicy;
import dev.sandbox4j.policy.Language;
import dev.sandbox4j.policy.Limits;
import dev.sandbox4j.policy.UnsupportedPolicyException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import mockwebserver3.MockResponse;
import mockwebserver3.RecordedRequest;
import mockwebserver3.SocketEffect;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Every failure ends in a typed exception or result, with the sandbox deleted when one was created. */
class DaytonaFailureTest {
    private final DaytonaFake fake = new DaytonaFake();

    @AfterEach
    void stop() {
        fake.close();
    }

    private RunResult runPython(DaytonaSandboxRunner runner) {
        return runner.run(RunRequest.python("print(1)"));
    }

    @Test
    void a5xxOnCreateIsAmbiguousSoTheRunIdIsLookedUpAndDeleted() {
        fake.json(503, "{\"statusCode\":503,\"message\":\"upstream unavailable\"}");
        fake.listWithRunId("sbx-orphan");
        fake.json(200, fake.sandbox("sbx-orphan", "started"));
        try (DaytonaSandboxRunner runner = fake.runner().build()) {
            SandboxException e = assertThrows(SandboxException.class, () -> runPython(runner));
            assertEquals(503, e.httpStatus().getAsInt());
            assertTrue(e.requestMayHaveSucceeded());
            assertFalse(e.codeMayHaveRun());
        }
        assertEquals("POST /api/sandbox", line(fake.take()));
        assertEquals("GET /api/sandbox", line(fake.take()));
        assertEquals("DELETE /api/sandbox/sbx-orphan", line(fake.take()));
        assertNull(fake.poll(), "one create only: an ambiguous create is never retried");
    }

    @Test
    void createStatusesMapToTypedExceptionsWithTheServersMessage() {
        record Case(int status, Class<? extends SandboxException> type, boolean ambiguous) {
        }
        List<Case> cases = List.of(
                new Case(400, SandboxException.class, true),
                new Case(401, SandboxAuthenticationException.class, false),
                new Case(403, SandboxAuthenticationException.class, false),
                new Case(404, SandboxNotFoundException.class, true),
                new Case(409, SandboxException.class, true),
                new Case(500, SandboxException.class, true));
        try (DaytonaSandboxRunner runner = fake.runner().build()) {
            for (Case c : cases) {
                fake.json(c.status, "{\"path\":\"/api/sandbox\",\"statusCode\":" + c.status
                        + ",\"error\":\"E\",\"message\":\"server says " + c.status + "\"}");
                if (c.ambiguous) {
                    fake.json(200, "{\"items\":[],\"nextCursor\":null}");
                    fake.json(404, "{\"statusCode\":404,\"message\":\"not found\"}");
                }
                SandboxException e = assertThrows(SandboxException.class, () -> runPython(runner));
                assertEquals(c.type, e.getClass(), "HTTP " + c.status);
                assertEquals(c.status, e.httpStatus().getAsInt());
                // an ambiguous create's message goes on to say what became of the sandbox
                assertTrue(e.getMessage().contains("HTTP " + c.status + ": server says " + c.status), e.getMessage());
                assertEquals(c.ambiguous, e.requestMayHaveSucceeded(), "HTTP " + c.status);
                assertFalse(e.codeMayHaveRun());
                assertEquals("POST /api/sandbox", line(fake.take()));
                if (c.ambiguous) {
                    assertEquals("GET /api/sandbox", line(fake.take()));
                    assertEquals("GET /api/sandbox/sandbox4j-" + fake.runId, line(fake.take()));
                }
            }
        }
        assertNull(fake.poll());
    }

    @Test
    void a429OnCreateIsRetriedAfterRetryAfter() {
        fake.enqueue(new MockResponse.Builder().code(429).setHeader("Retry-After", "0")
                .body("{\"statusCode\":429,\"message\":\"ThrottlerException: Too Many Requests\"}").build());
        fake.json(200, fake.sandbox("sbx-1", "started"));
        fake.sessionRun(0, DaytonaFake.stdout("1\n"));
        fake.json(200, fake.sandbox("sbx-1", "started"));
        try (DaytonaSandboxRunner runner = fake.runner().build()) {
            RunResult r = runPython(runner);
            assertEquals("1\n", r.stdout());
            assertEquals(2, r.attempts().size());
        }
        assertEquals("POST /api/sandbox", line(fake.take()));
        assertEquals("POST /api/sandbox", line(fake.take()));
    }

    @Test
    void a429ThatAsksForTooLongIsThrownAndNothingIsLeft() {
        fake.enqueue(new MockResponse.Builder().code(429).setHeader("Retry-After", "3600")
                .body("{\"statusCode\":429,\"message\":\"Too Many Requests\"}").build());
        try (DaytonaSandboxRunner runner = fake.runner().build()) {
            SandboxRateLimitException e = assertThrows(SandboxRateLimitException.class, () -> runPython(runner));
            assertEquals(Duration.ofHours(1), e.retryAfter().orElseThrow());
            assertTrue(e.isRetriable());
            assertFalse(e.requestMayHaveSucceeded());
        }
        fake.take();
        assertNull(fake.poll(), "a 429 created nothing: no lookup, no delete");
    }

    @Test
    void aLostCreateAnswerIsFoundByNameWhenTheListLags() {
        fake.enqueue(new MockResponse.Builder().body("{}").onResponseStart(SocketEffect.ShutdownConnection.INSTANCE).build());
        fake.json(200, "{\"items\":[],\"nextCursor\":null}"); // the list is eventually consistent
        fake.answer(r -> {
            ObjectNode sb = fake.sandbox("sbx-lost", "starting");
            ((ObjectNode) sb.path("labels")).put("sandbox4j-run-id", fake.runId);
            return DaytonaFake.jsonResponse(200, sb);
        });
        fake.json(409, "{\"statusCode\":409,\"message\":\"Sandbox state change in progress\"}");
        fake.json(200, fake.sandbox("sbx-lost", "starting"));
        try (DaytonaSandboxRunner runner = fake.runner().build()) {
            SandboxException e = assertThrows(SandboxException.class, () -> runPython(runner));
            assertTrue(e.requestMayHaveSucceeded(), e.getMessage());
        }
        assertEquals("POST /api/sandbox", line(fake.take()));
        assertEquals("GET /api/sandbox", line(fake.take()));
        assertEquals("GET /api/sandbox/sandbox4j-" + fake.runId, line(fake.take()));
        assertEquals("DELETE /api/sandbox/sbx-lost", line(fake.take())); // 409: a state change is pending
        assertEquals("DELETE /api/sandbox/sbx-lost", line(fake.take()));
    }

    @Test
    void aSandboxThatFailsToStartIsDeleted() {
        fake.json(200, fake.sandbox("sbx-bad", "starting"));
        ObjectNode failed = fake.sandbox("sbx-bad", "error").put("errorReason", "runner out of disk");
        fake.json(200, failed);
        fake.json(200, failed);
        try (DaytonaSandboxRunner runner = fake.runner().build()) {
            SandboxException e = assertThrows(SandboxException.class, () -> runPython(runner));
            assertTrue(e.getMessage().contains("state error (runner out of disk)"), e.getMessage());
            assertEquals("error", e.providerCode().orElseThrow());
        }
        assertEquals("POST /api/sandbox", line(fake.take()));
        assertEquals("GET /api/sandbox/sbx-bad", line(fake.take()));
        // the sandbox from the create answer is known: deleted without a lookup
        assertEquals("DELETE /api/sandbox/sbx-bad", line(fake.take()));
        assertNull(fake.poll());
    }

    @Test
    void aSandboxThatDoesNotHoldTheRequestedEgressIsDeletedBeforeAnyCode() {
        // a server that predates domainAllowList ignores it: the sandbox would have an open network
        fake.enqueue(DaytonaFake.jsonResponse(200, fake.sandbox("sbx-open", "started")));
        fake.json(200, fake.sandbox("sbx-open", "started"));
        try (DaytonaSandboxRunner runner = fake.runner().build()) {
            SandboxException e = assertThrows(SandboxException.class, () -> runner.run(
                    RunRequest.builder("print(1)").egress(EgressPolicy.allowOnly("pypi.org")).build()));
            assertTrue(e.getMessage().contains("domainAllowList sent \"pypi.org\", the sandbox has none"), e.getMessage());
            assertFalse(e.codeMayHaveRun());
        }
        assertEquals("POST /api/sandbox", line(fake.take()));
        assertEquals("DELETE /api/sandbox/sbx-open", line(fake.take()));
        assertNull(fake.poll(), "no code ran");
    }

    @Test
    void aStartThatTakesTooLongIsDeleted() {
        fake.json(200, fake.sandbox("sbx-slow", "creating"));
        for (int i = 0; i < 50; i++) {
            fake.answer(r -> r.getMethod().equals("GET") && r.getUrl().encodedPath().equals("/api/sandbox/sbx-slow")
                    ? DaytonaFake.jsonResponse(200, fake.sandbox("sbx-slow", "pulling_snapshot"))
                    : r.getMethod().equals("GET")
                            ? DaytonaFake.jsonResponse(200, "{\"items\":[],\"nextCursor\":null}")
                            : DaytonaFake.jsonResponse(200, fake.sandbox("sbx-slow", "destroying")));
        }
        try (DaytonaSandboxRunner runner = fake.runner().startTimeout(Duration.ofMillis(50)).build()) {
            SandboxException e = assertThrows(SandboxException.class, () -> runPython(runner));
            assertTrue(e.getMessage().contains("did not start within"), e.getMessage());
        }
        String last = null;
        for (var r = fake.poll(); r != null; r = fake.poll()) {
            last = line(r);
        }
        assertEquals("DELETE /api/sandbox/sbx-slow", last);
    }

    @Test
    void a400FailedToStartIsTreatedAsCreatedAndDeleted() {
        fake.json(400, "{\"statusCode\":400,\"error\":\"Bad Request\",\"message\":\"Sandbox failed to start: image pull failed\"}");
        fake.listWithRunId("sbx-half");
        fake.json(200, fake.sandbox("sbx-half", "error"));
        try (DaytonaSandboxRunner runner = fake.runner().build()) {
            SandboxException e = assertThrows(SandboxException.class, () -> runPython(runner));
            assertTrue(e.getMessage().contains("Sandbox failed to start: image pull failed"), e.getMessage());
        }
        fake.take();
        fake.take();
        assertEquals("DELETE /api/sandbox/sbx-half", line(fake.take()));
    }

    /** A log WebSocket the proxy refuses: a typed failure after the code started; the session and the sandbox go. */
    @Test
    void aRefusedLogStreamIsTypedAndMayHaveRunTheCode() {
        fake.json(200, fake.sandbox("sbx-1", "started"));
        fake.sessionStart();
        fake.json(502, "{\"statusCode\":502,\"message\":\"bad gateway\"}");
        fake.sessionDeleted();
        fake.json(200, fake.sandbox("sbx-1", "started"));
        try (DaytonaSandboxRunner runner = fake.runner().build()) {
            SandboxException e = assertThrows(SandboxException.class,
                    () -> runner.run(RunRequest.builder("while True: pass").budget(Duration.ofMillis(1500)).build()));
            assertEquals(502, e.httpStatus().getAsInt(), e.toString());
            assertTrue(e.codeMayHaveRun(), e.toString());
            assertTrue(e.getMessage().contains("following the log"), e.getMessage());
        }
        assertEquals("POST /api/sandbox", line(fake.take()));
        assertEquals("POST /toolbox/sbx-1/files/bulk-upload", line(fake.take()));
        String session = DaytonaFake.body(fake.take()).path("sessionId").asText();
        assertEquals("POST /toolbox/sbx-1/process/session/" + session + "/exec", line(fake.take()));
        assertTrue(line(fake.take()).endsWith("/command/" + DaytonaFake.CMD_ID + "/logs"));
        assertEquals("DELETE /toolbox/sbx-1/process/session/" + session, line(fake.take()));
        assertEquals("DELETE /api/sandbox/sbx-1", line(fake.take()));
    }

    @Test
    void aDeleteAnswering409IsRetriedUntilItSucceeds() {
        fake.json(200, fake.sandbox("sbx-1", "started"));
        fake.sessionRun(0);
        fake.json(409, "{\"statusCode\":409,\"message\":\"Sandbox state change in progress\"}");
        fake.json(502, "bad gateway");
        fake.json(200, fake.sandbox("sbx-1", "started"));
        try (DaytonaSandboxRunner runner = fake.runner().build()) {
            assertEquals(Teardown.DESTROYED, runPython(runner).teardown());
        }
        assertEquals(1 + 5 + 3, fake.server.getRequestCount());
    }

    @Test
    void aDeleteOfAGoneSandboxIsAlreadyGone() {
        fake.json(200, fake.sandbox("sbx-1", "started"));
        fake.sessionRun(0);
        fake.json(404, "{\"statusCode\":404,\"message\":\"Sandbox with ID or name sbx-1 not found\"}");
        try (DaytonaSandboxRunner runner = fake.runner().build()) {
            assertEquals(Teardown.ALREADY_GONE, runPython(runner).teardown());
        }
    }

    @Test
    void anInterruptMidRunDeletesTheSandboxAndKeepsTheFlag() throws Exception {
        fake.json(200, fake.sandbox("sbx-1", "started"));
        fake.sessionStart();
        fake.logNeverEnding(DaytonaFake.stdout("before\n"));
        fake.sessionDeleted();
        fake.json(200, fake.sandbox("sbx-1", "started"));
        AtomicReference<Throwable> thrown = new AtomicReference<>();
        AtomicReference<Boolean> flag = new AtomicReference<>();
        try (DaytonaSandboxRunner runner = fake.runner().build()) {
            Thread t = new Thread(() -> {
                try {
                    runPython(runner);
                } catch (Throwable e) {
                    thrown.set(e);
                }
                flag.set(Thread.currentThread().isInterrupted());
            });
            t.start();
            fake.take(); // create
            fake.take(); // upload
            String session = DaytonaFake.body(fake.take()).path("sessionId").asText();
            fake.take(); // exec
            fake.take(); // the log, now open without an end
            Thread.sleep(200); // the first line arrives
            t.interrupt();
            t.join(10_000);
            assertFalse(t.isAlive());
            assertEquals("DELETE /toolbox/sbx-1/process/session/" + session, line(fake.take()));
        }
        SandboxInterruptedException e = assertInstanceOf(SandboxInterruptedException.class, thrown.get());
        assertTrue(e.codeMayHaveRun());
        assertEquals("before\n", e.output().stdout(), "what arrived before the interrupt");
        assertTrue(flag.get(), "the interrupt flag is restored");
        assertEquals("DELETE /api/sandbox/sbx-1", line(fake.take()));
    }

    @Test
    void anInterruptWhileWaitingForStartDeletesTheSandbox() throws Exception {
        fake.json(200, fake.sandbox("sbx-1", "starting"));
        fake.enqueue(new MockResponse.Builder().headersDelay(1, TimeUnit.HOURS).body("{}").build());
        fake.json(200, fake.sandbox("sbx-1", "started"));
        AtomicReference<Throwable> thrown = new AtomicReference<>();
        try (DaytonaSandboxRunner runner = fake.runner().build()) {
            Thread t = new Thread(() -> {
                try {
                    runner.open(SandboxSpec.defaults());
                } catch (Throwable e) {
                    thrown.set(e);
                }
            });
            t.start();
            fake.take(); // create
            fake.take(); // status poll, now hanging
            t.interrupt();
            t.join(10_000);
            assertFalse(t.isAlive());
        }
        SandboxInterruptedException e = assertInstanceOf(SandboxInterruptedException.class, thrown.get());
        assertFalse(e.codeMayHaveRun());
        assertEquals("DELETE /api/sandbox/sbx-1", line(fake.take()));
    }

    @Test
    void aHugeResultIsCutByTheLimiterWithoutBeingHeld() {
        long huge = 512L * 1024 * 1024; // more than the JVM heap of the test, if it were kept
        fake.json(200, fake.sandbox("sbx-1", "started"));
        AtomicReference<Long> written = new AtomicReference<>(0L);
        fake.sessionStart();
        fake.enqueue(new MockResponse.Builder().webSocketUpgrade(new EndlessLog(huge, written)).build());
        fake.sessionDeleted();
        fake.json(200, fake.sandbox("sbx-1", "started"));
        try (DaytonaSandboxRunner runner = fake.runner().build()) {
            RunResult r = runner.run(RunRequest.of(SandboxSpec.defaults(),
                    Execution.builder("print('x' * 10**9)").outputLimit(100).hardCapBytes(1_000_000).build()));
            assertEquals(RunStatus.OUTPUT_LIMIT, r.status());
            assertEquals("x".repeat(100), r.stdout());
            assertTrue(r.stdoutTruncated());
            assertEquals(1_000_000, r.stdoutBytes());
            assertEquals(Teardown.DESTROYED, r.teardown());
        }
        for (int i = 0; i < 5; i++) {
            fake.take(); // create, upload, session, exec, log
        }
        assertTrue(line(fake.take()).startsWith("DELETE /toolbox/sbx-1/process/session/"), "the flood's session is deleted");
        assertEquals("DELETE /api/sandbox/sbx-1", line(fake.take()));
        assertTrue(written.get() < 64L * 1024 * 1024, "reading stopped early: " + written.get());
    }

    /** A log closed without end frames, then exit code -1 from the command: KILLED, what arrived kept. */
    @Test
    void exitCodeMinusOneIsKilledAndTheOutputKept() {
        fake.json(200, fake.sandbox("sbx-1", "started"));
        fake.sessionStart();
        fake.log(DaytonaFake.stdout("partial\n"), DaytonaFake.stderr("fork/exec /bin/sh: no such file\n"));
        fake.command(-1);
        fake.sessionDeleted();
        fake.json(200, fake.sandbox("sbx-1", "started"));
        try (DaytonaSandboxRunner runner = fake.runner().build()) {
            RunResult r = runPython(runner);
            assertEquals(RunStatus.KILLED, r.status());
            assertEquals("partial\n", r.stdout());
            assertEquals("fork/exec /bin/sh: no such file\n", r.stderr());
        }
    }

    @Test
    void aFailedUploadIsTypedAndTheSandboxDeleted() {
        fake.json(200, fake.sandbox("sbx-1", "started"));
        fake.json(400, "{\"errors\":[\"/tmp/sandbox4j/exec-1.sh: create: permission denied\"],\"files\":[]}");
        fake.json(200, fake.sandbox("sbx-1", "started"));
        try (DaytonaSandboxRunner runner = fake.runner().build()) {
            SandboxException e = assertThrows(SandboxException.class,
                    () -> runner.run(RunRequest.builder("echo hi").language(Language.BASH).build()));
            assertEquals(400, e.httpStatus().getAsInt());
            assertTrue(e.getMessage().endsWith("create: permission denied"), e.getMessage());
            assertFalse(e.codeMayHaveRun());
        }
        fake.take();
        assertEquals("POST /toolbox/sbx-1/files/bulk-upload", line(fake.take()));
        assertEquals("DELETE /api/sandbox/sbx-1", line(fake.take()));
    }

    @Test
    void aDroppedExecAnswerMayHaveRunTheCode() {
        fake.json(200, fake.sandbox("sbx-1", "started"));
        fake.json(200, "{\"files\":[]}");
        fake.enqueue(new MockResponse.Builder().code(201).build());
        fake.enqueue(new MockResponse.Builder().body("{}").onResponseStart(SocketEffect.ShutdownConnection.INSTANCE).build());
        fake.sessionDeleted();
        fake.json(200, fake.sandbox("sbx-1", "started"));
        try (DaytonaSandboxRunner runner = fake.runner().build()) {
            SandboxException e = assertThrows(SandboxException.class, () -> runPython(runner));
            assertTrue(e.codeMayHaveRun(), e.getMessage());
        }
        fake.take();
        fake.take();
        String session = DaytonaFake.body(fake.take()).path("sessionId").asText();
        assertEquals("POST /toolbox/sbx-1/process/session/" + session + "/exec", line(fake.take()));
        // sent once: no second exec, the session deleted
        assertEquals("DELETE /toolbox/sbx-1/process/session/" + session, line(fake.take()));
        assertEquals("DELETE /api/sandbox/sbx-1", line(fake.take()));
        assertNull(fake.poll());
    }

    /** A 202 to the session exec whose body does not parse: the command started, so the code may have run; sent once. */
    @Test
    void aGarbledExecAnswerMayHaveRunTheCodeAndIsNotSentAgain() {
        fake.json(200, fake.sandbox("sbx-1", "started"));
        fake.json(200, "{\"files\":[]}");
        fake.enqueue(new MockResponse.Builder().code(201).build());
        fake.enqueue(new MockResponse.Builder().code(202).setHeader("Content-Type", "application/json")
                .body("#garbled\u0000<{#garbled").build());
        fake.sessionDeleted();
        fake.json(200, fake.sandbox("sbx-1", "started"));
        try (DaytonaSandboxRunner runner = fake.runner().build()) {
            SandboxException e = assertThrows(SandboxException.class, () -> runPython(runner));
            assertTrue(e.codeMayHaveRun(), e.toString());
        }
        for (int i = 0; i < 3; i++) {
            fake.take();
        }
        assertTrue(line(fake.take()).endsWith("/exec"));
        assertTrue(line(fake.take()).startsWith("DELETE /toolbox/sbx-1/process/session/"), "no second exec");
        assertEquals("DELETE /api/sandbox/sbx-1", line(fake.take()));
        assertNull(fake.poll());
    }

    /** A definite refusal of the session exec came before the command was written: the code did not run. */
    @Test
    void aRefusedExecDidNotRunTheCode() {
        fake.json(200, fake.sandbox("sbx-1", "started"));
        fake.json(200, "{\"files\":[]}");
        fake.enqueue(new MockResponse.Builder().code(201).build());
        fake.json(400, "{\"statusCode\":400,\"message\":\"command cannot be empty\",\"code\":\"BAD_REQUEST\"}");
        fake.sessionDeleted();
        fake.json(200, fake.sandbox("sbx-1", "started"));
        try (DaytonaSandboxRunner runner = fake.runner().build()) {
            SandboxException e = assertThrows(SandboxException.class, () -> runPython(runner));
            assertEquals(400, e.httpStatus().getAsInt());
            assertFalse(e.codeMayHaveRun(), e.toString());
        }
        for (int i = 0; i < 4; i++) {
            fake.take();
        }
        assertTrue(line(fake.take()).startsWith("DELETE /toolbox/sbx-1/process/session/"));
        assertEquals("DELETE /api/sandbox/sbx-1", line(fake.take()));
    }

    @Test
    void aConflictingOrUnsupportedEgressIsRefusedBeforeAnyRequest() {
        try (DaytonaSandboxRunner runner = fake.runner().build()) {
            EgressPolicy mix = EgressPolicy.builder().allowDomain("pypi.org").allowCidr("1.1.1.1/32").build();
            UnsupportedPolicyException e = assertThrows(UnsupportedPolicyException.class,
                    () -> runner.run(RunRequest.builder("print(1)").egress(mix).build()));
            assertTrue(e.getMessage().contains("allowed domains and allowed CIDRs in one policy"), e.getMessage());
            // a lock-down is possible (LIVE_UPDATE), but not to or from a policy Daytona cannot hold
            SandboxSpec setup = SandboxSpec.builder().setupCommand("pip install x")
                    .setupEgress(mix).egress(EgressPolicy.denyAll()).build();
            e = assertThrows(UnsupportedPolicyException.class, () -> runner.open(setup));
            assertTrue(e.getMessage().contains("setup egress: ") && e.getMessage().contains("allowed domains and allowed CIDRs"),
                    e.getMessage());
            SandboxSpec sized = SandboxSpec.builder().limits(Limits.builder().memoryMib(2048).build()).build();
            e = assertThrows(UnsupportedPolicyException.class, () -> runner.open(sized));
            assertTrue(e.getMessage().contains("only for sandboxes created from an image"), e.getMessage());
        }
        assertEquals(0, fake.server.getRequestCount());
    }

    @Test
    void aScopedHeaderRuleIsRefusedBeforeAnyRequest() {
        EgressPolicy scoped = EgressPolicy.builder().allowDomain("api.example.com")
                .headerRule(dev.sandbox4j.policy.HeaderRule.builder("api.example.com", "Authorization",
                        dev.sandbox4j.policy.SecretRef.of("key", () -> "sk-never-sent")).methods("POST").build())
                .build();
        try (DaytonaSandboxRunner runner = fake.runner().build()) {
            UnsupportedPolicyException e = assertThrows(UnsupportedPolicyException.class,
                    () -> runner.open(SandboxSpec.builder().egress(scoped).build()));
            assertTrue(e.violations().contains("header rule for 'api.example.com' scoped to methods [POST] (daytona cannot"
                    + " enforce HEADER_RULE_SCOPES: the header would go on every request to the host)"), e.violations().toString());
            assertFalse(e.getMessage().contains("sk-never-sent"));
        }
        assertEquals(0, fake.server.getRequestCount());
    }

    @Test
    void setupCommandsRunUnderTheCodesEgressAndAFailureTearsDown() {
        fake.json(200, fake.sandbox("sbx-1", "started"));
        fake.sessionRun(127, DaytonaFake.stdout("collecting\n"), DaytonaFake.stderr("pip: not found\n"));
        fake.json(200, fake.sandbox("sbx-1", "started"));
        SandboxSpec spec = SandboxSpec.builder().setupCommand("pip install requests").build();
        try (DaytonaSandboxRunner runner = fake.runner().build()) {
            SandboxException e = assertThrows(SandboxException.class, () -> runner.open(spec));
            assertTrue(e.getMessage().contains("setup command 1 of 1"), e.getMessage());
            assertTrue(e.getMessage().endsWith(": pip: not found"), "stderr says why: " + e.getMessage());
        }
        fake.take();
        fake.take();
        fake.take();
        RecordedRequest exec = fake.take();
        assertEquals(DaytonaWireTest.expectedCommand("bash /tmp/sandbox4j/exec-1.sh", DaytonaWireTest.nonceOf(exec)),
                DaytonaFake.body(exec).path("command").asText());
        fake.take(); // the log
        assertTrue(line(fake.take()).startsWith("DELETE /toolbox/sbx-1/process/session/"));
        assertEquals("DELETE /api/sandbox/sbx-1", line(fake.take()));
    }

    @Test
    void anExecAfterCloseIsRefusedWithoutARequest() {
        fake.json(200, fake.sandbox("sbx-1", "started"));
        fake.json(200, fake.sandbox("sbx-1", "started"));
        try (DaytonaSandboxRunner runner = fake.runner().build()) {
            Sandbox s = runner.open(SandboxSpec.defaults());
            s.close();
            s.close();
            assertThrows(IllegalStateException.class, () -> s.exec(Execution.python("1")));
        }
        assertEquals(2, fake.server.getRequestCount());
    }

    /**
     * A log of {@code size} bytes of stdout x's in 64 KiB frames, sent lazily (at most 1 MiB queued)
     * until the client goes away; counts what was sent.
     */
    private static final class EndlessLog extends okhttp3.WebSocketListener {
        private final long size;
        private final AtomicReference<Long> written;
        private volatile boolean gone;

        EndlessLog(long size, AtomicReference<Long> written) {
            this.size = size;
            this.written = written;
        }

        @Override
        public void onOpen(okhttp3.WebSocket ws, okhttp3.Response response) {
            Thread t = new Thread(() -> {
                byte[] chunk = "x".repeat(64 * 1024).getBytes();
                chunk[0] = chunk[1] = chunk[2] = 1; // one stdout line that never ends
                for (long n = 0; n < size && !gone; ) {
                    if (ws.queueSize() > 1024 * 1024) {
                        try {
                            Thread.sleep(1);
                        } catch (InterruptedException e) {
                            return;
                        }
                        continue;
                    }
                    if (!ws.send(okio.ByteString.of(chunk))) {
                        return;
                    }
                    n += chunk.length;
                    written.set(n);
                    chunk[0] = chunk[1] = chunk[2] = 'x';
                }
            }, "endless-log");
            t.setDaemon(true);
            t.start();
        }

        @Override
        public void onFailure(okhttp3.WebSocket ws, Throwable t, okhttp3.Response response) {
            gone = true;
        }

        @Override
        public void onClosing(okhttp3.WebSocket ws, int code, String reason) {
            gone = true;
        }
    }
}
