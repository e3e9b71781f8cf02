package dev.sandbox4j.spi.lifecycle;

import static dev.sandbox4j.spi.lifecycle.ScriptedDriver.created;
import static dev.sandbox4j.spi.lifecycle.ScriptedDriver.failing;
import static dev.sandbox4j.spi.lifecycle.ScriptedDriver.lostResponse;
import static dev.sandbox4j.spi.lifecycle.ScriptedDriver.throwing;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sandbox4j.api.Attempt;
import dev.sandbox4j.api.Execution;
import dev.sandbox4j.api.RunRequest;
import dev.sandbox4j.api.RunResult;
import dev.sandbox4j.api.RunStatus;
import dev.sandbox4j.api.Sandbox;
import dev.sandbox4j.api.exception.SandboxAuthenticationException;
import dev.sandbox4j.api.exception.SandboxException;
import dev.sandbox4j.api.TestErrors;
import dev.sandbox4j.api.exception.SandboxInterruptedException;
import dev.sandbox4j.api.exception.SandboxRateLimitException;
import dev.sandbox4j.api.SandboxSpec;
import dev.sandbox4j.api.Teardown;
import dev.sandbox4j.policy.Capabilities;
import dev.sandbox4j.policy.EgressPolicy;
import dev.sandbox4j.policy.UnsupportedPolicyException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import dev.sandbox4j.spi.CreateRequest;
import dev.sandbox4j.spi.ExecOutcome;

class ManagedSandboxRunnerTest {
    private ScriptedDriver driver = new ScriptedDriver("scripted");

    /** Small delays so retries take milliseconds; the teardown deadline is generous unless a test shortens it. */
    private ManagedSandboxRunner<ScriptedDriver.Handle> runner() {
        return ManagedSandboxRunner.builder(driver).retryBaseDelay(Duration.ofMillis(1)).build();
    }

    @AfterEach
    void nothingLeaked() {
        assertEquals(List.of(), driver.live(), "sandboxes left on the provider");
        assertFalse(Thread.interrupted(), "a test left the interrupt flag set");
    }

    private static SandboxException status(int status) {
        return TestErrors.forStatus(SandboxException.builder("HTTP " + status).provider("scripted").httpStatus(status));
    }

    // ---- refusing before any call ----

    @Test
    void policyTheProviderCannotEnforceIsRefusedBeforeAnyCall() {
        driver = new ScriptedDriver("narrow", Capabilities.builder("narrow")
                .egress(Capabilities.Egress.DENY_ALL).build());
        SandboxSpec spec = SandboxSpec.builder()
                .egress(EgressPolicy.allowOnly("api.example.com"))
                .setupEgress(EgressPolicy.allowAll())
                .setupCommand("pip install requests")
                .file("data.csv", "a,b")
                .env("MODE", "test")
                .build();
        UnsupportedPolicyException e = assertThrows(UnsupportedPolicyException.class, () -> runner().open(spec));
        assertEquals("narrow", e.runner());
        assertEquals(List.of(
                "default-deny egress with allow rules (narrow cannot enforce DEFAULT_DENY_WITH_RULES)",
                "allowed domain 'api.example.com' (narrow cannot enforce ALLOW_DOMAINS)",
                "setup egress: allow-all egress (narrow cannot enforce ALLOW_ALL)",
                "a setup egress different from the code's egress (narrow cannot change egress on a live sandbox,"
                        + " so the code would run under the setup egress)",
                "setup commands (narrow does not run them)",
                "input files (narrow cannot write them)",
                "environment variables (narrow cannot set them)"), e.violations());
        assertEquals(List.of(), driver.calls(), "no call reached the provider");
    }

    @Test
    void aPolicyTheProviderCanEnforceGoesThroughWithTheRunIdLabel() {
        try (Sandbox sb = runner().open(SandboxSpec.builder().label("team", "a").build())) {
            CreateRequest r = driver.createRequests().get(0);
            assertTrue(r.runId().matches("[a-z0-9]{16}"), r.runId());
            assertEquals(r.runId(), sb.runId());
            assertEquals(List.of(CreateRequest.RUN_ID_LABEL, CreateRequest.POLICY_LABEL, "team"), List.copyOf(r.labels().keySet()));
            assertEquals(r.runId(), r.labels().get(CreateRequest.RUN_ID_LABEL));
            assertEquals(SandboxSpec.DEFAULT_SESSION_LIFETIME, r.lifetime());
            assertEquals("scripted-1", sb.id());
            assertEquals("scripted", sb.provider());
        }
    }

    // ---- create retries ----

    /**
     * The backoff is an hour, so only Retry-After (1 ms) lets the retry happen at once; were it ignored,
     * the test would sleep and the timeout would fail it. No elapsed time is asserted.
     */
    @Test
    @Timeout(5) // an ignored Retry-After means the 8 s backoff cap: an upper bound, never a lower one
    void createIsRetriedAfter429HonouringRetryAfter() {
        SandboxException limited = TestErrors.forStatus(SandboxException.builder("too many sandboxes")
                .provider("scripted").httpStatus(429).retryAfter(Duration.ofMillis(1)));
        assertTrue(limited instanceof SandboxRateLimitException);
        driver.onCreate(failing(limited), created());
        ManagedSandboxRunner<ScriptedDriver.Handle> r = ManagedSandboxRunner.builder(driver)
                .retryBaseDelay(Duration.ofHours(1)).build();
        try (Sandbox sb = r.open(SandboxSpec.defaults())) {
            assertEquals(2, driver.count("create"));
            assertEquals(driver.createRequests().get(0).runId(), driver.createRequests().get(1).runId(),
                    "a retry carries the same run id");
            List<Attempt> attempts = sb.attempts();
            assertEquals(2, attempts.size());
            assertEquals("SandboxRateLimitException", attempts.get(0).errorType().orElseThrow());
            assertEquals("too many sandboxes", attempts.get(0).message().orElseThrow());
            assertTrue(attempts.get(1).succeeded());
            assertEquals("scripted", attempts.get(1).runner());
        }
    }

    @Test
    void refusedConnectionIsRetriedUpToMaxAttemptsThenThrown() {
        SandboxException refused = SandboxException.builder("connection refused").provider("scripted").retriable(true).build();
        driver.onCreate(failing(refused), failing(refused), failing(refused), created());
        SandboxException e = assertThrows(SandboxException.class,
                () -> ManagedSandboxRunner.builder(driver).retryBaseDelay(Duration.ofMillis(1)).maxCreateAttempts(3).build()
                        .open(SandboxSpec.defaults()));
        assertSame(refused, e);
        assertEquals(3, driver.count("create"));
        assertEquals(0, driver.count("find"), "nothing was created, nothing to look for");
    }

    @Test
    void retryAfterLongerThanTheMaximumIsNotWaitedFor() {
        SandboxException limited = TestErrors.forStatus(SandboxException.builder("slow down")
                .httpStatus(429).retryAfter(Duration.ofHours(1)));
        driver.onCreate(failing(limited));
        assertSame(limited, assertThrows(SandboxRateLimitException.class, () -> runner().open(SandboxSpec.defaults())));
        assertEquals(1, driver.count("create"));
    }

    @Test
    void nonRetriableCreateFailureIsThrownAtOnce() {
        driver.onCreate(failing(status(401)));
        assertThrows(SandboxAuthenticationException.class, () -> runner().open(SandboxSpec.defaults()));
        assertEquals(List.of("create"), driver.calls());
    }

    @Test
    void createWhoseAnswerWasLostIsNotRetriedButFoundByRunIdAndDestroyed() {
        SandboxException timeout = status(503).toBuilder().requestMayHaveSucceeded(true).build();
        driver.onCreate(lostResponse(timeout));
        SandboxException e = assertThrows(SandboxException.class, () -> runner().open(SandboxSpec.defaults()));
        assertSame(timeout, e);
        String runId = driver.createRequests().get(0).runId();
        assertEquals(List.of("create", "find:" + runId, "destroy:scripted-1"), driver.calls());
    }

    @Test
    void interruptDuringCreateFindsAndDestroysWhatWasCreated() {
        driver.onCreate((d, r) -> {
            d.createLive(r);
            throw new InterruptedException();
        });
        ManagedSandboxRunner<ScriptedDriver.Handle> runner = runner();
        SandboxInterruptedException e = assertThrows(SandboxInterruptedException.class,
                () -> runner.open(SandboxSpec.defaults()));
        assertTrue(Thread.interrupted(), "interrupt flag restored");
        assertFalse(e.codeMayHaveRun());
        runner.close(); // the lookup runs in the background, off the interrupted caller; close drains it
        String runId = driver.createRequests().get(0).runId();
        assertEquals(List.of("create", "find:" + runId, "destroy:scripted-1"), driver.calls());
        assertEquals(List.of(false), driver.interruptedDuringDestroy(), "recovery runs with the flag cleared");
    }

    @Test
    void anUnexpectedExceptionAfterTheProviderCreatedTheSandboxStillDestroysIt() {
        // e.g. an adapter failing to parse the create answer: the sandbox exists, the exception is not a SandboxException
        IllegalStateException bug = new IllegalStateException("unparsable answer");
        driver.onCreate((d, r) -> {
            d.createLive(r);
            throw bug;
        });
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> runner().open(SandboxSpec.defaults()));
        assertSame(bug, e);
        String runId = driver.createRequests().get(0).runId();
        assertEquals(List.of("create", "find:" + runId, "destroy:scripted-1"), driver.calls());
    }

    @Test
    void aRefusalFromCreateIsNotLookedUp() {
        UnsupportedPolicyException refused = new UnsupportedPolicyException("scripted", List.of("server said no"));
        driver.onCreate((d, r) -> {
            throw refused;
        });
        assertSame(refused, assertThrows(UnsupportedPolicyException.class, () -> runner().open(SandboxSpec.defaults())));
        assertEquals(List.of("create"), driver.calls());
    }

    // ---- setup and lock-down ----

    @Test
    void failingSetupCommandTearsDownAndNoCodeRuns() {
        driver.onSetup((h, e, sink) -> {
            sink.stderr("ERROR: no matching distribution\n");
            return ExecOutcome.exited(1);
        });
        SandboxSpec spec = SandboxSpec.builder().setupCommand("pip install nothing-here").build();
        SandboxException e = assertThrows(SandboxException.class, () -> runner().open(spec));
        assertEquals("setup command 1 of 1 ended with EXITED(1): ERROR: no matching distribution", e.getMessage());
        assertEquals(List.of("create", "setup:scripted-1", "destroy:scripted-1"), driver.calls());
    }

    @Test
    void failingLockDownTearsDownAndNoCodeRuns() {
        driver.onUpdateEgress(throwing(status(500)));
        SandboxSpec spec = SandboxSpec.builder()
                .setupEgress(EgressPolicy.allowAll()).setupCommand("pip install requests")
                .egress(EgressPolicy.denyAll()).file("in.txt", "x").build();
        SandboxException e = assertThrows(SandboxException.class, () -> runner().open(spec));
        assertEquals("HTTP 500", e.getMessage());
        assertEquals(EgressPolicy.allowAll(), driver.createRequests().get(0).initialEgress(),
                "created under the setup egress, to be locked down after setup");
        assertEquals(List.of("create", "writeFiles:scripted-1", "setup:scripted-1", "updateEgress:scripted-1",
                "destroy:scripted-1"), driver.calls());
    }

    @Test
    void lockDownHappensBeforeTheFirstExec() {
        SandboxSpec spec = SandboxSpec.builder()
                .setupEgress(EgressPolicy.allowAll()).setupCommand("pip install requests").build();
        try (Sandbox sb = runner().open(spec)) {
            sb.exec(Execution.python("print(1)"));
        }
        assertEquals(List.of("create", "setup:scripted-1", "updateEgress:scripted-1", "exec:scripted-1",
                "destroy:scripted-1"), driver.calls());
    }

    // ---- teardown ----

    @Test
    void teardownRetriesRetriableFailuresUntilItsDeadlineThenReportsFailed() {
        driver.onEveryDestroy(throwing(status(503)));
        ManagedSandboxRunner<ScriptedDriver.Handle> r = ManagedSandboxRunner.builder(driver)
                .retryBaseDelay(Duration.ofMillis(1)).teardownTimeout(Duration.ofMillis(40)).build();
        Sandbox sb = r.open(SandboxSpec.defaults());
        sb.close();
        assertEquals(Teardown.FAILED, sb.teardown());
        assertTrue(sb.isClosed());
        assertTrue(driver.count("destroy") >= 2, "retried: " + driver.calls());
        driver.expire("scripted-1"); // the provider's lifetime clock is the backstop
    }

    @Test
    void teardownRetriesUntilItSucceeds() {
        driver.onDestroy(throwing(status(503)), throwing(status(409)));
        Sandbox sb = runner().open(SandboxSpec.defaults());
        sb.close();
        assertEquals(Teardown.DESTROYED, sb.teardown());
        assertEquals(3, driver.count("destroy"));
    }

    @Test
    void nonRetriableTeardownFailureIsReportedAfterOneTry() {
        driver.onDestroy(throwing(status(403)));
        Sandbox sb = runner().open(SandboxSpec.defaults());
        sb.close();
        assertEquals(Teardown.FAILED, sb.teardown());
        assertEquals(1, driver.count("destroy"));
        driver.expire("scripted-1");
    }

    @Test
    void destroyFindingTheSandboxGoneIsAlreadyGone() {
        Sandbox sb = runner().open(SandboxSpec.defaults());
        driver.expire(sb.id()); // 404 on delete: destroy returns false
        sb.close();
        assertEquals(Teardown.ALREADY_GONE, sb.teardown());
    }

    @Test
    void interruptFlagIsClearedDuringTeardownAndRestoredAfter() {
        Sandbox sb = runner().open(SandboxSpec.defaults());
        Thread.currentThread().interrupt();
        sb.close();
        assertTrue(Thread.interrupted(), "flag restored after teardown");
        assertEquals(List.of(false), driver.interruptedDuringDestroy());
        assertEquals(Teardown.DESTROYED, sb.teardown());
    }

    @Test
    void anInterruptSeenByDestroyDoesNotStopTheTeardown() {
        driver.onDestroy((d, h) -> {
            throw new InterruptedException();
        });
        Sandbox sb = runner().open(SandboxSpec.defaults());
        sb.close();
        assertEquals(Teardown.DESTROYED, sb.teardown());
        assertEquals(2, driver.count("destroy"));
        assertTrue(Thread.interrupted(), "the interrupt is passed on after the teardown");
    }

    @Test
    void closeIsIdempotent() {
        Sandbox sb = runner().open(SandboxSpec.defaults());
        sb.close();
        sb.close();
        assertEquals(1, driver.count("destroy"));
        assertEquals(Teardown.DESTROYED, sb.teardown());
    }

    @Test
    void execAfterCloseThrowsIllegalState() {
        Sandbox sb = runner().open(SandboxSpec.defaults());
        sb.close();
        assertThrows(IllegalStateException.class, () -> sb.exec(Execution.python("print(1)")));
        assertEquals(0, driver.count("exec"));
    }

    // ---- exec ----

    @Test
    void interruptDuringExecTearsDownAndRestoresTheFlag() throws Exception {
        CountDownLatch started = new CountDownLatch(1);
        driver.onExec((h, e, sink) -> {
            sink.stdout("partial");
            started.countDown();
            new CountDownLatch(1).await(); // until interrupted
            throw new AssertionError("not reached");
        });
        Sandbox sb = runner().open(SandboxSpec.defaults());
        AtomicReference<Throwable> thrown = new AtomicReference<>();
        AtomicReference<Boolean> flagAfter = new AtomicReference<>();
        Thread worker = new Thread(() -> {
            try {
                sb.exec(Execution.python("while True: pass"));
            } catch (Throwable t) {
                thrown.set(t);
            }
            flagAfter.set(Thread.currentThread().isInterrupted());
        });
        worker.start();
        started.await();
        worker.interrupt();
        worker.join();
        SandboxInterruptedException e = (SandboxInterruptedException) thrown.get();
        assertTrue(e.codeMayHaveRun(), "the code was running");
        assertEquals("partial", e.output().stdout(), "what the code printed before the interrupt");
        assertEquals(7, e.output().stdoutBytes());
        assertEquals("", e.output().stderr());
        assertEquals(e.output(), ((SandboxInterruptedException) e.toBuilder().retriable(true).build()).output(),
                "a copy with a changed flag keeps the output");
        assertFalse(e.isRetriable());
        assertTrue(flagAfter.get(), "flag restored in the caller");
        assertTrue(sb.isClosed());
        assertEquals(Teardown.DESTROYED, sb.teardown());
        assertEquals(List.of(false), driver.interruptedDuringDestroy(), "destroy ran with the flag cleared");
        sb.close();
        assertEquals(1, driver.count("destroy"));
    }

    @Test
    void runOpensExecutesAndTearsDownWithADerivedLifetime() {
        RunResult r = runner().run(RunRequest.builder("print('hi')").budget(Duration.ofSeconds(10)).build());
        assertEquals("print('hi')", r.stdout());
        assertEquals(RunStatus.EXITED, r.status());
        assertTrue(r.succeeded());
        assertEquals(Teardown.DESTROYED, r.teardown());
        assertEquals("scripted", r.provider());
        assertEquals("scripted-1", r.sandboxId());
        assertEquals(1, r.attempts().size());
        assertEquals(Duration.ofSeconds(10).plus(SandboxSpec.LIFETIME_MARGIN), driver.createRequests().get(0).lifetime());
    }

    @Test
    void execFailureLeavesTheSessionOpenAndCloseStillTearsDown() {
        driver.onExec((h, e, sink) -> {
            throw status(502).toBuilder().codeMayHaveRun(true).build();
        });
        RunRequest request = RunRequest.python("print(1)");
        SandboxException e = assertThrows(SandboxException.class, () -> runner().run(request));
        assertTrue(e.codeMayHaveRun());
        assertEquals(List.of("create", "exec:scripted-1", "destroy:scripted-1"), driver.calls(), "exec is never retried");
    }

    @Test
    void outputOverTheHardCapIsOutputLimitAndControlCharactersAreStripped() {
        driver.onExec((h, e, sink) -> {
            boolean more = true;
            for (int i = 0; i < 100 && more; i++) {
                more = sink.stdout("\u001b[2J0123456789");
            }
            assertFalse(more, "the sink said stop");
            return ExecOutcome.outputLimit();
        });
        try (Sandbox sb = runner().open(SandboxSpec.defaults())) {
            RunResult r = sb.exec(Execution.builder("x").outputLimit(20).hardCapBytes(100).stripControlCharacters(true).build());
            assertEquals(RunStatus.OUTPUT_LIMIT, r.status());
            assertTrue(r.exitCode().isEmpty());
            assertEquals("[2J0123456789[2J01", r.stdout(), "20 chars kept, then the two ESC stripped");
            assertTrue(r.stdoutTruncated());
            assertEquals(100, r.stdoutBytes());
            assertEquals(Teardown.OPEN, r.teardown());
        }
    }

    @Test
    void closingTheRunnerClosesTheDriver() {
        runner().close();
        assertTrue(driver.isClosed());
    }
}
