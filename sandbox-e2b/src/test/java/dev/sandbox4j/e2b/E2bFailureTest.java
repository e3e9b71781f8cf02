package dev.sandbox4j.e2b;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sandbox4j.api.Execution;
import dev.sandbox4j.api.RunRequest;
import dev.sandbox4j.api.RunResult;
import dev.sandbox4j.api.RunStatus;
import dev.sandbox4j.api.exception.SandboxAuthenticationException;
import dev.sandbox4j.api.exception.SandboxConfigurationException;
import dev.sandbox4j.api.exception.SandboxException;
import dev.sandbox4j.api.exception.SandboxInterruptedException;
import dev.sandbox4j.api.exception.SandboxNotFoundException;
import dev.sandbox4j.api.exception.SandboxRateLimitException;
import dev.sandbox4j.api.SandboxSpec;
import dev.sandbox4j.api.Teardown;
import dev.sandbox4j.spi.CreateRequest;
import dev.sandbox4j.policy.EgressPolicy;
import dev.sandbox4j.policy.UnsupportedPolicyException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import mockwebserver3.MockResponse;
import mockwebserver3.RecordedRequest;
import org.junit.jupiter.api.Test;

/** Every failure path ends in a typed exception or result, with the sandbox killed (the base class checks leaks). */
class E2bFailureTest extends WireTestBase {
    private static final RunRequest HELLO = RunRequest.python("print('hello')");

    // ---------------------------------------------------------------- create

    @Test
    void a5xxOnCreateIsNeverRetriedBlindlyButLookedUpByRunId() {
        fake.createFaults.add("created-500");
        SandboxException e = assertThrows(SandboxException.class, () -> runner.run(HELLO));
        assertEquals(500, e.httpStatus().orElseThrow());
        assertTrue(e.requestMayHaveSucceeded());
        List<String> lines = fake.requestLines();
        assertEquals(List.of("POST /v2/sandboxes", "GET /v2/sandboxes", "DELETE /sandboxes/isbx1fake0000000"), lines);
        RecordedRequest list = fake.requests.get(1);
        String runId = FakeE2b.read(fake.requests.get(0)).path("metadata").path(CreateRequest.RUN_ID_LABEL).asText();
        assertEquals(CreateRequest.RUN_ID_LABEL + "=" + runId, list.getUrl().queryParameter("metadata"));
        assertTrue(list.getUrl().encodedQuery().contains("metadata=sandbox4j-run-id%3D" + runId), list.getUrl().encodedQuery());
        assertEquals("running,paused", list.getUrl().queryParameter("state"));
        assertEquals(KEY, list.getHeaders().get("x-api-key"));
    }

    @Test
    void a5xxThatCreatedNothingFindsNothingAndIsThrown() {
        fake.createFaults.add(503);
        SandboxException e = assertThrows(SandboxException.class, () -> runner.run(HELLO));
        assertEquals(503, e.httpStatus().orElseThrow());
        assertEquals(List.of("POST /v2/sandboxes", "GET /v2/sandboxes"), fake.requestLines());
    }

    @Test
    void aLostCreateResponseIsRecoveredByRunId() {
        fake.createFaults.add("lost");
        SandboxException e = assertThrows(SandboxException.class, () -> runner.run(HELLO));
        assertTrue(e.requestMayHaveSucceeded(), e.getMessage());
        assertEquals(List.of("POST /v2/sandboxes", "GET /v2/sandboxes", "DELETE /sandboxes/isbx1fake0000000"),
                fake.requestLines());
    }

    @Test
    void aCreateThatTimesOutIsRecoveredByRunId() {
        E2bSandboxRunner quick = builder().requestTimeout(Duration.ofMillis(300)).build();
        fake.createFaults.add("created-slow");
        SandboxException e = assertThrows(SandboxException.class, () -> quick.run(HELLO));
        assertTrue(e.requestMayHaveSucceeded(), e.getMessage());
        assertEquals(List.of("POST /v2/sandboxes", "GET /v2/sandboxes", "DELETE /sandboxes/isbx1fake0000000"),
                fake.requestLines());
    }

    @Test
    void recoveryOnlyKillsSandboxesCarryingTheRunId() {
        var stranger = FakeE2b.JSON.createObjectNode().put("sandboxID", "iothers0000000000000");
        stranger.putObject("metadata").put(CreateRequest.RUN_ID_LABEL, "someoneelse00000");
        fake.strangers.add(stranger);
        fake.createFaults.add("lost");
        assertThrows(SandboxException.class, () -> runner.run(HELLO));
        assertEquals(1, fake.requests("DELETE", "/sandboxes/isbx1fake0000000").size());
        assertEquals(0, fake.requests("DELETE", "/sandboxes/iothers0000000000000").size());
    }

    @Test
    void a429IsRetriedHonouringRetryAfter() {
        fake.createFaults.add(429);
        fake.createFaults.add(429);
        RunResult r = runner.run(HELLO);
        assertEquals("ok\n", r.stdout());
        assertEquals(3, fake.requests("POST", "/v2/sandboxes").size());
        assertEquals(3, r.attempts().size());
        assertEquals(0, fake.requests("GET", "/v2/sandboxes").size(), "a 429 created nothing");
    }

    @Test
    void a429ThatPersistsIsARateLimitException() {
        E2bSandboxRunner twice = builder().maxCreateAttempts(2).build();
        fake.createFaults.add(429);
        fake.createFaults.add(429);
        SandboxRateLimitException e = assertThrows(SandboxRateLimitException.class, () -> twice.run(HELLO));
        assertTrue(e.isRetriable());
        assertFalse(e.requestMayHaveSucceeded());
        assertEquals(2, fake.requests("POST", "/v2/sandboxes").size());

        fake.retryAfter = "120"; // longer than the lifecycle waits: thrown at once, for the caller to schedule
        fake.createFaults.add(429);
        e = assertThrows(SandboxRateLimitException.class, () -> twice.run(HELLO));
        assertEquals(Duration.ofSeconds(120), e.retryAfter().orElseThrow());
        assertEquals(3, fake.requests("POST", "/v2/sandboxes").size());
    }

    @Test
    void authTemplateAndPolicyRefusalsOnCreateAreTyped() {
        fake.createFaults.add(401);
        assertThrows(SandboxAuthenticationException.class, () -> runner.run(HELLO));
        fake.createFaults.add(403);
        assertThrows(SandboxAuthenticationException.class, () -> runner.run(HELLO));
        fake.createFaults.add(404);
        SandboxConfigurationException c = assertThrows(SandboxConfigurationException.class, () -> runner.run(HELLO));
        assertTrue(c.getMessage().contains("template 'base'"), c.getMessage());
        fake.createFaults.add(FakeE2b.json(400, "{\"code\":400,\"message\":\"When specifying allowed domains in allow out, "
                + "you must include 'ALL_TRAFFIC' in deny out to block all other traffic.\"}"));
        UnsupportedPolicyException u = assertThrows(UnsupportedPolicyException.class,
                () -> runner.run(RunRequest.builder("1").egress(EgressPolicy.allowOnly("example.com")).build()));
        assertTrue(u.getMessage().contains("ALL_TRAFFIC"), u.getMessage());
        assertEquals(0, fake.requests("GET", "/v2/sandboxes").size(), "none of these can have created a sandbox");
    }

    // ---------------------------------------------------------------- lock-down

    @Test
    void aRefusedLockDownTearsDownBeforeTheCode() {
        fake.networkResponses.add(FakeE2b.json(400, "{\"code\":400,\"message\":\"invalid denied CIDR x\"}"));
        SandboxSpec spec = SandboxSpec.builder().setupEgress(EgressPolicy.allowAll()).setupCommand("true").build();
        assertThrows(UnsupportedPolicyException.class, () -> runner.run(RunRequest.of(spec, Execution.python("1"))));
        assertEquals(1, fake.requests("POST", "/process.Process/Start").size(), "only the setup command ran");
        assertEquals(1, fake.requests("DELETE", "/sandboxes/isbx1fake0000000").size());
    }

    @Test
    void aLockDownThatDoesNotReadBackTearsDownBeforeTheCode() {
        // the update is accepted, but the sandbox still reports an open network
        fake.detailResponses.add(FakeE2b.json(200,
                "{\"sandboxID\":\"isbx1fake0000000\",\"network\":{\"allowOut\":[],\"denyOut\":[]},\"allowInternetAccess\":true}"));
        SandboxSpec spec = SandboxSpec.builder().setupEgress(EgressPolicy.allowAll()).setupCommand("true").build();
        UnsupportedPolicyException e = assertThrows(UnsupportedPolicyException.class,
                () -> runner.run(RunRequest.of(spec, Execution.python("1"))));
        assertTrue(e.getMessage().contains("open to the internet"), e.getMessage());
        assertEquals(1, fake.requests("POST", "/process.Process/Start").size(), "only the setup command ran");
        assertEquals(1, fake.requests("DELETE", "/sandboxes/isbx1fake0000000").size());
    }

    @Test
    void aLockDownWhoseEgressIsNotReportedIsNotTrusted() {
        fake.detailResponses.add(FakeE2b.json(200, "{\"sandboxID\":\"isbx1fake0000000\"}"));
        SandboxSpec spec = SandboxSpec.builder().setupEgress(EgressPolicy.allowAll()).setupCommand("true").build();
        assertThrows(UnsupportedPolicyException.class, () -> runner.run(RunRequest.of(spec, Execution.python("1"))));
        assertEquals(1, fake.requests("POST", "/process.Process/Start").size());
        assertEquals(1, fake.requests("DELETE", "/sandboxes/isbx1fake0000000").size());
    }

    @Test
    void aFailingLockDownIsRetriedThenTearsDown() {
        for (int i = 0; i < 3; i++) {
            fake.networkResponses.add(FakeE2b.json(500, "{\"code\":500,\"message\":\"Error applying network config\"}"));
        }
        SandboxSpec spec = SandboxSpec.builder().setupEgress(EgressPolicy.allowAll()).setupCommand("true").build();
        SandboxException e = assertThrows(SandboxException.class, () -> runner.run(RunRequest.of(spec, Execution.python("1"))));
        assertEquals(500, e.httpStatus().orElseThrow());
        assertEquals(3, fake.requests("PUT", "/sandboxes/isbx1fake0000000/network").size());
        assertEquals(1, fake.requests("POST", "/process.Process/Start").size());
    }

    // ---------------------------------------------------------------- kill

    @Test
    void killFailingTwiceIsRetriedUntilItWorks() {
        fake.deleteFaults.add(500);
        fake.deleteFaults.add(503);
        RunResult r = runner.run(HELLO);
        assertEquals(Teardown.DESTROYED, r.teardown());
        assertEquals(3, fake.requests("DELETE", "/sandboxes/isbx1fake0000000").size());

        fake.deleteFaults.add(-1); // a dropped connection is retried too
        fake.deleteFaults.add(502);
        assertEquals(Teardown.DESTROYED, runner.run(HELLO).teardown());
        assertEquals(3, fake.requests("DELETE", "/sandboxes/isbx2fake0000000").size());
    }

    @Test
    void aSandboxAlreadyGoneIsReportedSo() {
        fake.starts.add(r -> {
            synchronized (fake.live) {
                fake.live.clear(); // the sandbox expired during the run
            }
            return FakeE2b.connect(FakeE2b.defaultRun());
        });
        assertEquals(Teardown.ALREADY_GONE, runner.run(HELLO).teardown());
    }

    @Test
    void killFailingPastTheDeadlineIsReportedAndLeftToTheLifetime() {
        E2bSandboxRunner impatient = builder().teardownTimeout(Duration.ofMillis(200)).build();
        for (int i = 0; i < 50; i++) {
            fake.deleteFaults.add(500);
        }
        RunResult r = impatient.run(HELLO);
        assertEquals(Teardown.FAILED, r.teardown());
        assertEquals("ok\n", r.stdout(), "the result survives a failed teardown");
        assertEquals(1, fake.leaks());
        fake.deleteFaults.clear();
        synchronized (fake.live) {
            fake.live.clear(); // E2B's clock would have killed it after its lifetime
        }
    }

    // ---------------------------------------------------------------- the stream

    @Test
    void deadlineExceededIsTimedOutWithPartialOutput() {
        fake.starts.add(r -> FakeE2b.connect(List.of(FakeE2b.frame(0, FakeE2b.start(412)),
                FakeE2b.frame(0, FakeE2b.stdout("partial\n")),
                FakeE2b.frame(2, "{\"error\":{\"code\":\"deadline_exceeded\",\"message\":\"context deadline exceeded\"}}"))));
        RunResult r = runner.run(RunRequest.builder("while True: pass").budget(Duration.ofSeconds(2)).build());
        assertEquals(RunStatus.TIMED_OUT, r.status());
        assertEquals("partial\n", r.stdout());
        assertTrue(r.exitCode().isEmpty());
        assertEquals(Teardown.DESTROYED, r.teardown());
    }

    @Test
    void theClientDeadlineEndsASilentStreamAndKillsTheProcess() {
        E2bSandboxRunner strict = builder().execGrace(Duration.ZERO).build();
        fake.starts.add(r -> fake.stalling(List.of(FakeE2b.frame(0, FakeE2b.start(412)),
                FakeE2b.frame(0, FakeE2b.stdout("before the stall\n")))));
        RunResult r = strict.run(RunRequest.builder("import time; time.sleep(60)").budget(Duration.ofMillis(300)).build());
        assertEquals(RunStatus.TIMED_OUT, r.status());
        assertEquals("before the stall\n", r.stdout());
        List<RecordedRequest> signals = fake.requests("POST", "/process.Process/SendSignal");
        assertEquals(1, signals.size());
        assertEquals(E2bWireTest.tree("{'process':{'pid':412},'signal':'SIGNAL_SIGKILL'}"), FakeE2b.read(signals.get(0)));
        assertEquals("application/json", signals.get(0).getHeaders().get("content-type"));
        assertEquals("1", signals.get(0).getHeaders().get("connect-protocol-version"));
    }

    @Test
    void theHardCapStopsReadingAndKillsTheProcess() {
        byte[] chunk = FakeE2b.frame(0, FakeE2b.stdout("y".repeat(999) + "\n"));
        fake.starts.add(r -> FakeE2b.endless("application/connect+json", FakeE2b.frame(0, FakeE2b.start(412)), chunk, 100_000));
        RunResult r = runner.run(RunRequest.of(SandboxSpec.defaults(),
                Execution.builder("while True: print('y' * 999)").outputLimit(100).hardCapBytes(20_000).build()));
        assertEquals(RunStatus.OUTPUT_LIMIT, r.status());
        assertTrue(r.stdoutTruncated());
        assertEquals(100, r.stdout().length());
        assertEquals(20_000, r.stdoutBytes());
        assertEquals(1, fake.requests("POST", "/process.Process/SendSignal").size(), "killed at the cap");
        assertEquals(Teardown.DESTROYED, r.teardown());
    }

    @Test
    void hostileFramesAreRefusedWithoutAllocatingThem() {
        for (long len : new long[] {0xFFFFFFFFL, 1L << 30}) {
            byte[] header = {0, (byte) (len >>> 24), (byte) (len >>> 16), (byte) (len >>> 8), (byte) len};
            fake.starts.add(r -> fake.stalling(List.of(FakeE2b.frame(0, FakeE2b.start(412)), header, new byte[64 * 1024])));
            SandboxException e = assertThrows(SandboxException.class, () -> runner.run(HELLO));
            assertTrue(e.getMessage().contains("exceeds the limit"), e.getMessage());
            assertTrue(e.codeMayHaveRun());
        }
        assertEquals(2, fake.requests("DELETE", "/sandboxes/isbx1fake0000000").size()
                + fake.requests("DELETE", "/sandboxes/isbx2fake0000000").size());
        assertEquals(2, fake.requests("POST", "/process.Process/SendSignal").size());
    }

    @Test
    void compressedFramesAndGarbageAreRefused() {
        fake.starts.add(r -> FakeE2b.connect(List.of(FakeE2b.frame(1, "{}"))));
        assertTrue(assertThrows(SandboxException.class, () -> runner.run(HELLO)).getMessage().contains("compressed"));
        fake.starts.add(r -> FakeE2b.connect(List.of(FakeE2b.frame(0, "not json at all"))));
        assertTrue(assertThrows(SandboxException.class, () -> runner.run(HELLO)).getMessage().contains("not JSON"));
        fake.starts.add(r -> new MockResponse.Builder().code(200).setHeader("Content-Type", "text/html").body("<html>").build());
        assertTrue(assertThrows(SandboxException.class, () -> runner.run(HELLO)).getMessage().contains("connect+json"));
    }

    @Test
    void aDroppedStreamIsATypedErrorAndTheSandboxIsKilled() {
        byte[] head = concat(FakeE2b.frame(0, FakeE2b.start(412)), FakeE2b.frame(0, FakeE2b.stdout("half")));
        fake.starts.add(r -> FakeE2b.dropping("application/connect+json", head));
        SandboxException e = assertThrows(SandboxException.class, () -> runner.run(HELLO));
        assertTrue(e.codeMayHaveRun());
        assertTrue(e.getMessage().contains("dropped"), e.getMessage());
        assertEquals(1, fake.requests("DELETE", "/sandboxes/isbx1fake0000000").size());
    }

    @Test
    void aStreamThatEndsWithoutItsEndIsATypedError() {
        fake.starts.add(r -> FakeE2b.connect(List.of(FakeE2b.frame(0, FakeE2b.start(412)))));
        SandboxException e = assertThrows(SandboxException.class, () -> runner.run(HELLO));
        assertTrue(e.getMessage().contains("end-of-stream"), e.getMessage());
        fake.starts.add(r -> FakeE2b.connect(List.of(FakeE2b.frame(0, FakeE2b.start(412)),
                FakeE2b.frame(2, "{\"error\":{\"code\":\"invalid_argument\",\"message\":\"cwd '/nope' does not exist\"}}"))));
        e = assertThrows(SandboxException.class, () -> runner.run(HELLO));
        assertEquals("invalid_argument", e.providerCode().orElseThrow());
        assertTrue(e.getMessage().contains("does not exist"), e.getMessage());
    }

    @Test
    void envdHttpErrorsAreTyped() {
        fake.starts.add(r -> FakeE2b.json(401, "{\"code\":401,\"message\":\"unauthorized access, please provide a valid access token\"}"));
        assertThrows(SandboxAuthenticationException.class, () -> runner.run(HELLO));
        fake.starts.add(r -> FakeE2b.json(502, "{\"sandboxId\":\"isbx2fake0000000\",\"message\":\"The sandbox was not found\",\"code\":502}"));
        SandboxNotFoundException e = assertThrows(SandboxNotFoundException.class, () -> runner.run(HELLO));
        assertTrue(e.getMessage().contains("not running anymore"), e.getMessage());
        assertEquals(2, fake.requests.stream().filter(r -> r.getMethod().equals("DELETE")).count());
    }

    @Test
    void anInterruptMidRunTearsDownAndRestoresTheFlag() throws Exception {
        fake.starts.add(r -> fake.stalling(List.of(FakeE2b.frame(0, FakeE2b.start(412)))));
        AtomicReference<Throwable> thrown = new AtomicReference<>();
        AtomicReference<Boolean> flag = new AtomicReference<>();
        Thread t = new Thread(() -> {
            try {
                runner.run(HELLO);
            } catch (Throwable e) {
                thrown.set(e);
            }
            flag.set(Thread.currentThread().isInterrupted());
        });
        t.start();
        assertTrue(fake.streamStarted.await(10, TimeUnit.SECONDS));
        t.interrupt();
        t.join(15_000);
        assertFalse(t.isAlive());
        assertInstanceOf(SandboxInterruptedException.class, thrown.get());
        assertTrue(((SandboxException) thrown.get()).codeMayHaveRun());
        assertTrue(flag.get(), "the interrupt flag is restored");
        assertEquals(1, fake.requests("DELETE", "/sandboxes/isbx1fake0000000").size());
    }

    private static byte[] concat(byte[] a, byte[] b) {
        byte[] out = java.util.Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, out, a.length, b.length);
        return out;
    }
}
