package dev.sandbox4j.emulators.vercel;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sandbox4j.api.Execution;
import dev.sandbox4j.api.RunRequest;
import dev.sandbox4j.api.RunResult;
import dev.sandbox4j.api.RunStatus;
import dev.sandbox4j.api.Sandbox;
import dev.sandbox4j.api.exception.SandboxException;
import dev.sandbox4j.api.exception.SandboxInterruptedException;
import dev.sandbox4j.api.exception.SandboxRateLimitException;
import dev.sandbox4j.api.SandboxSpec;
import dev.sandbox4j.api.Teardown;
import dev.sandbox4j.emulators.LocalMachines;
import dev.sandbox4j.local.LocalSandboxRunner;
import dev.sandbox4j.vercel.VercelSandboxRunner;
import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.parallel.Isolated;

/**
 * Every fault knob against our Vercel adapter: each ends in a typed exception or a result, and no
 * sandbox is left behind (the emulator's ledger, the local sandboxes and this JVM's child processes are
 * counted after every test).
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Isolated("it counts this JVM's child processes, which another class's sandboxes would add to")
class VercelAdapterFaultTest {
    private static final String TOKEN = "fault-token-7a31c0";
    private static final String TEAM = "team_faults";
    private static final String PROJECT = "prj_faults";

    private LocalSandboxRunner local;
    private VercelEmulator emulator;
    private VercelSandboxRunner vercel;

    @BeforeAll
    void start() throws IOException {
        local = LocalSandboxRunner.builder().maxAddressSpaceMib(2048).build();
        emulator = VercelEmulator.builder().token(TOKEN).teamId(TEAM).projectId(PROJECT)
                .machines(LocalMachines.using(local)).build();
        vercel = runner(Duration.ofSeconds(30));
    }

    private VercelSandboxRunner runner(Duration teardownTimeout) {
        return VercelSandboxRunner.builder().token(TOKEN).teamId(TEAM).projectId(PROJECT)
                .baseUrl(emulator.baseUrl() + "/api").teardownTimeout(teardownTimeout)
                .lostCreateWindow(Duration.ofSeconds(1)) // the emulator creates at once: a short search suffices
                .build();
    }

    @AfterAll
    void stop() {
        vercel.close();
        emulator.close();
        local.close();
    }

    @BeforeEach
    void clean() {
        emulator.faults().reset();
    }

    @AfterEach
    void nothingLeaked() throws InterruptedException {
        emulator.faults().reset();
        assertEquals(0, emulator.ledger().live(), "sessions left running: " + emulator.ledger());
        assertEquals(0, local.openSandboxes(), "local sandboxes left open");
        // the local runner reaps its processes as it tears down; give the kernel a moment to report it
        long until = System.nanoTime() + 5_000_000_000L;
        while (ProcessHandle.current().descendants().count() > 0 && System.nanoTime() < until) {
            Thread.sleep(20);
        }
        assertEquals(0, ProcessHandle.current().descendants().count(), "processes left running");
    }

    private static RunRequest hello() {
        return RunRequest.python("print('hello')");
    }

    /**
     * A session the provider's clock stopped (its timeout passed) before the client's stop: the stop
     * answers 200 with the stopped session, and the teardown says ALREADY_GONE, not DESTROYED (issue 29).
     */
    @Test
    void aSessionThatReachedItsTimeoutIsAlreadyGoneAtTeardown() throws Exception {
        SandboxSpec shortLived = SandboxSpec.builder().limits(dev.sandbox4j.policy.Limits.builder()
                .lifetime(Duration.ofSeconds(2)).build()).build();
        Sandbox s = vercel.open(shortLived);
        long until = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        while (emulator.ledger().live() > 0 && System.nanoTime() < until) {
            java.util.concurrent.locks.LockSupport.parkNanos(Duration.ofMillis(20).toNanos()); // a bounded poll
        }
        assertEquals(0, emulator.ledger().live(), "the session reached its timeout");
        s.close();
        assertEquals(Teardown.ALREADY_GONE, s.teardown());
        // a session stopped before its timeout is the client's doing
        Sandbox t = vercel.open(SandboxSpec.defaults());
        t.close();
        assertEquals(Teardown.DESTROYED, t.teardown());
    }

    @Test
    void a5xxOnCreateIsATypedErrorAndNothingRuns() {
        int before = emulator.ledger().created();
        emulator.faults().failCreate(503, 1);
        SandboxException e = assertThrows(SandboxException.class, () -> vercel.run(hello()));
        assertEquals(503, e.httpStatus().orElseThrow());
        assertFalse(e.codeMayHaveRun());
        assertEquals(before, emulator.ledger().created());
    }

    @Test
    void a429OnCreateIsWaitedForAndRetried() {
        emulator.faults().rateLimitCreate(1, 1);
        RunResult r = vercel.run(hello());
        assertEquals(RunStatus.EXITED, r.status(), r::toString);
        assertEquals("hello\n", r.stdout());
        assertEquals(2, r.attempts().size());
        assertEquals(Teardown.DESTROYED, r.teardown());
    }

    @Test
    void a429WithARetryAfterTooLongToWaitIsARateLimitError() {
        emulator.faults().rateLimitCreate(1, 120);
        SandboxRateLimitException e = assertThrows(SandboxRateLimitException.class, () -> vercel.run(hello()));
        assertEquals(Duration.ofSeconds(120), e.retryAfter().orElseThrow());
        assertTrue(e.isRetriable());
    }

    @Test
    void aLostCreateResponseIsFoundByNameAndStopped() {
        int before = emulator.ledger().created();
        emulator.faults().loseCreateResponse(1);
        SandboxException e = assertThrows(SandboxException.class, () -> vercel.run(hello()));
        assertTrue(e.requestMayHaveSucceeded(), e.getMessage());
        assertEquals(before + 1, emulator.ledger().created(), "the emulator did create it");
    }

    @Test
    void aDroppedStreamIsATypedErrorAndTheSandboxIsTornDown() {
        emulator.faults().dropStream(1);
        SandboxException e = assertThrows(SandboxException.class,
                () -> vercel.run(RunRequest.python("print('one')\nprint('two')")));
        assertTrue(e.codeMayHaveRun(), e.getMessage());
    }

    @Test
    void stopFailingTwiceIsRetriedUntilTheSessionIsGone() {
        emulator.faults().failTeardown(500, 2);
        RunResult r = vercel.run(hello());
        assertEquals(RunStatus.EXITED, r.status());
        assertEquals(Teardown.DESTROYED, r.teardown());
    }

    @Test
    void stopThatNeverWorksIsReportedAsFailedAndTheProviderClockIsTheBackstop() throws Exception {
        emulator.faults().failTeardown(500, 1_000_000);
        RunResult r;
        try (VercelSandboxRunner impatient = runner(Duration.ofSeconds(2))) {
            r = impatient.run(hello());
        }
        assertEquals(RunStatus.EXITED, r.status(), "what the code did is still the result");
        assertEquals(Teardown.FAILED, r.teardown());
        assertEquals(1, emulator.ledger().live(), "the session is still up, as the teardown outcome says");
        // the cleanup a provider's own clock (or an operator) would do
        emulator.faults().reset();
        String session = emulator.ledger().liveIds().iterator().next();
        Wire wire = new Wire(emulator, TOKEN, TEAM);
        assertEquals(200, wire.postEmpty("/v2/sandboxes/sessions/" + session + "/stop").status);
    }

    @Test
    void slowAnswersStillGiveAResult() {
        emulator.faults().slow(Duration.ofMillis(200));
        RunResult r = vercel.run(hello());
        assertEquals(RunStatus.EXITED, r.status());
        assertEquals("hello\n", r.stdout());
        assertEquals(Teardown.DESTROYED, r.teardown());
    }

    @Test
    void aGigabyteLineStopsAtTheHardCap() {
        emulator.faults().hostileFraming(true);
        RunResult r = vercel.run(RunRequest.of(SandboxSpec.defaults(), Execution.builder("print('hi')")
                .hardCapBytes(4L << 20).outputLimit(1000).build()));
        assertEquals(RunStatus.OUTPUT_LIMIT, r.status(), r::toString);
        assertEquals(1000, r.stdout().length());
        assertTrue(r.stdoutTruncated());
        assertTrue(r.stdoutBytes() <= 4L << 20, "read past the cap: " + r.stdoutBytes());
        assertEquals(Teardown.DESTROYED, r.teardown());
    }

    @Test
    void anInterruptMidRunThrowsAndTearsDown() throws Exception {
        Sandbox sandbox = vercel.open(SandboxSpec.defaults());
        AtomicReference<Throwable> thrown = new AtomicReference<>();
        Thread worker = new Thread(() -> {
            try {
                sandbox.exec(Execution.builder("import time\nprint('up', flush=True)\ntime.sleep(60)")
                        .budget(Duration.ofSeconds(90)).build());
            } catch (Throwable t) {
                thrown.set(t);
            }
        }, "interrupt-worker");
        try {
            worker.start();
            // interrupt once the command runs in the emulator (a local process exists), whatever the timing
            long until = System.nanoTime() + 30_000_000_000L;
            while (ProcessHandle.current().descendants().count() == 0 && System.nanoTime() < until) {
                Thread.sleep(5);
            }
            worker.interrupt();
            worker.join(60_000);
            assertFalse(worker.isAlive(), "exec did not return after the interrupt");
            assertTrue(sandbox.isClosed(), "torn down by the interrupt");
        } finally {
            sandbox.close();
        }
        assertInstanceOf(SandboxInterruptedException.class, thrown.get());
        assertTrue(sandbox.teardown() == Teardown.DESTROYED || sandbox.teardown() == Teardown.ALREADY_GONE,
                sandbox.teardown().toString());
    }
}
