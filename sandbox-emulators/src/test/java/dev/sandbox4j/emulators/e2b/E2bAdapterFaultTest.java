package dev.sandbox4j.emulators.e2b;

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
import dev.sandbox4j.e2b.E2bSandboxRunner;
import dev.sandbox4j.local.LocalSandboxRunner;
import dev.sandbox4j.policy.Language;
import dev.sandbox4j.policy.Limits;
import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The E2B adapter (sandbox-e2b) against the emulator, on real local sandboxes, with every fault knob:
 * each ends in a typed exception or a result, and the emulator's ledger and the local runner show
 * nothing left alive after each test.
 */
class E2bAdapterFaultTest {
    static final String KEY = WireTestSupport.KEY;
    static LocalSandboxRunner local;
    E2bEmulator emulator;
    E2bSandboxRunner runner;

    @BeforeAll
    static void localRunner() {
        local = LocalSandboxRunner.builder().maxAddressSpaceMib(2048).build();
    }

    @AfterAll
    static void closeLocal() {
        local.close();
    }

    @BeforeEach
    void start() throws IOException {
        emulator = E2bEmulator.builder().apiKey(KEY).localRunner(local).build();
        runner = E2bSandboxRunner.builder().apiKey(KEY).apiUrl(emulator.baseUrl()).sandboxUrl(emulator.baseUrl())
                .retryBaseDelay(Duration.ofMillis(50)).teardownTimeout(Duration.ofSeconds(5))
                .execGrace(Duration.ofSeconds(2))
                .lostCreateWindow(Duration.ofSeconds(1)) // the emulator creates at once: a short search suffices
                .build();
    }

    @AfterEach
    void nothingLeaked() {
        try {
            assertEquals(0, emulator.ledger().live(), "leaked: " + emulator.ledger().liveIds());
            assertEquals(0, local.openSandboxes(), "local sandboxes left open");
        } finally {
            runner.close();
            emulator.close();
        }
    }

    static RunRequest python(String code) {
        return RunRequest.of(SandboxSpec.defaults(), Execution.builder(code).budget(Duration.ofSeconds(20)).build());
    }

    @Test
    void aPlainRunGoesThroughEveryCall() {
        RunResult r = runner.run(python("import sys; print('out'); print('err', file=sys.stderr); sys.exit(4)"));
        assertEquals(RunStatus.EXITED, r.status());
        assertEquals(4, r.exitCode().getAsInt());
        assertEquals("out\n", r.stdout());
        assertEquals("err\n", r.stderr());
        assertEquals(Teardown.DESTROYED, r.teardown());
        assertEquals(1, emulator.ledger().created());
    }

    @Test
    void aBudgetIsEnforced() {
        RunResult r = runner.run(RunRequest.of(SandboxSpec.defaults(),
                Execution.builder("while True: pass").budget(Duration.ofSeconds(1)).build()));
        assertEquals(RunStatus.TIMED_OUT, r.status());
        assertEquals(Teardown.DESTROYED, r.teardown());
    }

    @Test
    void aServerErrorOnCreateIsTypedAndCreatesNothing() {
        emulator.faults().failCreate(503, 1);
        SandboxException e = assertThrows(SandboxException.class, () -> runner.run(python("print(1)")));
        assertEquals(503, e.httpStatus().getAsInt());
        assertFalse(e.codeMayHaveRun());
        assertEquals(0, emulator.ledger().created());
    }

    @Test
    void aRateLimitIsWaitedOutThenRetried() {
        emulator.faults().rateLimitCreate(1, 1);
        RunResult r = runner.run(python("print(1)"));
        assertEquals("1\n", r.stdout());
        assertEquals(2, r.attempts().size(), r.attempts().toString());
    }

    @Test
    void aPersistentRateLimitEndsInRateLimitException() {
        emulator.faults().rateLimitCreate(10, 0);
        SandboxRateLimitException e = assertThrows(SandboxRateLimitException.class, () -> runner.run(python("print(1)")));
        assertTrue(e.isRetriable());
        assertEquals(0, emulator.ledger().created());
        emulator.faults().reset();
    }

    @Test
    void aLostCreateResponseIsFoundByItsRunIdAndKilled() {
        emulator.faults().loseCreateResponse(1);
        SandboxException e = assertThrows(SandboxException.class, () -> runner.run(python("print(1)")));
        assertTrue(e.requestMayHaveSucceeded(), e.toString());
        assertEquals(1, emulator.ledger().created(), "the sandbox was created server-side");
        assertEquals(1, emulator.ledger().destroyed(), "and found by its run id and killed");
    }

    @Test
    void aStreamDroppedMidRunIsAnErrorAndTheSandboxGoes() {
        emulator.faults().dropStream(1);
        SandboxException e = assertThrows(SandboxException.class, () -> runner.run(python("print('a'); print('b')")));
        assertTrue(e.codeMayHaveRun(), e.toString());
        assertEquals(1, emulator.ledger().destroyed());
    }

    @Test
    void aTeardownThatFailsTwiceIsRetried() {
        emulator.faults().failTeardown(500, 2);
        RunResult r = runner.run(python("print(1)"));
        assertEquals(Teardown.DESTROYED, r.teardown());
    }

    @Test
    void aTeardownThatKeepsFailingIsReportedAndTheLifetimeKillsTheSandbox() throws Exception {
        emulator.faults().failTeardown(500, 1_000);
        SandboxSpec spec = SandboxSpec.builder().limits(Limits.builder().lifetime(Duration.ofSeconds(3)).build()).build();
        RunResult r = runner.run(RunRequest.of(spec, Execution.builder("print(1)").budget(Duration.ofSeconds(2)).build()));
        assertEquals("1\n", r.stdout());
        assertEquals(Teardown.FAILED, r.teardown());
        long until = System.nanoTime() + Duration.ofSeconds(20).toNanos();
        while (emulator.ledger().live() > 0 && System.nanoTime() < until) {
            Thread.sleep(50);
        }
        // the backstop: the provider's own clock (the create's timeout) kills what teardown could not
        assertEquals(0, emulator.ledger().live());
        emulator.faults().reset();
    }

    @Test
    void slowAnswersStillWork() {
        emulator.faults().slow(Duration.ofMillis(150));
        assertEquals("1\n", runner.run(python("print(1)")).stdout());
        emulator.faults().reset();
    }

    @Test
    void aHugeLengthPrefixIsRefusedWithoutReadingIt() {
        emulator.faults().hostileFraming(true);
        Throwable t = assertThrows(RuntimeException.class, () -> runner.run(python("print(1)")));
        assertInstanceOf(SandboxException.class, t, t.toString());
        emulator.faults().reset();
    }

    @Test
    void aGigabyteFrameIsRefusedWithoutReadingIt() {
        emulator.hostileFrame(E2bEmulator.HostileFrame.GIGABYTE_FRAME);
        emulator.faults().hostileFraming(true);
        Throwable t = assertThrows(RuntimeException.class, () -> runner.run(python("print(1)")));
        assertInstanceOf(SandboxException.class, t, t.toString());
        emulator.faults().reset();
    }

    @Test
    void anInterruptMidRunTearsDown() throws Exception {
        Sandbox sandbox = runner.open(SandboxSpec.defaults());
        AtomicReference<Throwable> thrown = new AtomicReference<>();
        Thread t = new Thread(() -> {
            try {
                sandbox.exec(Execution.builder("sleep 60").language(Language.BASH).budget(Duration.ofSeconds(60)).build());
            } catch (Throwable e) {
                thrown.set(e);
            }
        });
        t.start();
        EmulatedSandbox emulated = emulator.sandboxes.get(sandbox.id());
        long until = System.nanoTime() + Duration.ofSeconds(20).toNanos();
        while (emulated.processes.isEmpty() && System.nanoTime() < until) {
            Thread.sleep(20);
        }
        assertFalse(emulated.processes.isEmpty(), "the command started");
        t.interrupt();
        t.join(20_000);
        assertFalse(t.isAlive());
        assertInstanceOf(SandboxInterruptedException.class, thrown.get());
        assertTrue(sandbox.isClosed());
        assertEquals(Teardown.DESTROYED, sandbox.teardown());
        assertTrue(emulated.isKilled(), "the emulator saw the kill");
    }
}
