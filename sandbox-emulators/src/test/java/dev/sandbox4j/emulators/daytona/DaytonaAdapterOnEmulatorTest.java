package dev.sandbox4j.emulators.daytona;

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
import dev.sandbox4j.daytona.DaytonaSandboxRunner;
import dev.sandbox4j.policy.EgressPolicy;
import dev.sandbox4j.tck.CanaryListener;
import java.io.IOException;
import java.net.InetAddress;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;

/**
 * Our Daytona adapter against the emulator under each fault knob: every case ends in a typed exception
 * or a result, and no sandbox is left (the emulator's ledger and the local runner are checked after
 * every test).
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(120)
class DaytonaAdapterOnEmulatorTest {
    private LocalEmulator env;
    private DaytonaEmulator emulator;
    private DaytonaSandboxRunner runner;

    @BeforeAll
    void start() throws IOException {
        env = new LocalEmulator(0);
        emulator = env.emulator;
        runner = env.adapter().build();
    }

    @AfterAll
    void stop() throws IOException {
        runner.close();
        env.close();
    }

    @BeforeEach
    void clean() {
        emulator.faults().reset();
        emulator.startingPolls(0);
        emulator.failStart(0);
    }

    @AfterEach
    void nothingLeaked() throws InterruptedException {
        emulator.faults().reset();
        long until = System.nanoTime() + 10_000_000_000L;
        while (env.live() != 0 && System.nanoTime() < until) {
            Thread.sleep(20);
        }
        assertEquals(0, env.live(), "leaked: " + emulator.ledger() + ", local open " + env.local.openSandboxes());
    }

    private RunResult run(String python) {
        return runner.run(RunRequest.of(SandboxSpec.defaults(), Execution.python(python)));
    }

    /**
     * Every run, with a listener or without, is the create, the exec as a session command (upload,
     * session, exec, the log WebSocket until both end frames, session delete) and the delete; Bash
     * alike. (Only the calls of the run's own sandbox are counted: an earlier test's lookups may still
     * be running.)
     */
    @Test
    void aSmallRunCostsSevenRequestsBashAlike() {
        java.util.List<String> shape = java.util.List.of("POST /api/sandbox 200", "POST /toolbox/{id}/files/bulk-upload 200",
                "POST /toolbox/{id}/process/session 201", "POST /toolbox/{id}/process/session/{s}/exec 202",
                "GET /toolbox/{id}/process/session/{s}/command/{c}/logs 101", "DELETE /toolbox/{id}/process/session/{s} 204",
                "DELETE /api/sandbox/{id} 200");
        emulator.clearCalls();
        RunResult py = run("import sys\nprint(1 + 2)\nprint('to stderr', file=sys.stderr)");
        assertEquals("3\n", py.stdout());
        assertEquals("to stderr\n", py.stderr());
        assertEquals(shape, shapes(py.sandboxId()));
        emulator.clearCalls();
        RunResult bash = runner.run(RunRequest.of(SandboxSpec.defaults(), Execution.of(dev.sandbox4j.policy.Language.BASH, "echo $((6 * 7))")));
        assertEquals("42\n", bash.stdout());
        assertEquals(shape, shapes(bash.sandboxId()));
        emulator.startingPolls(2);
        emulator.clearCalls();
        RunResult polled = run("print(1)");
        assertEquals(7 + 3, shapes(polled.sandboxId()).size(), "plus one GET per status read: " + shapes(polled.sandboxId()));
    }

    /** The calls of one run: its create, and those that name its sandbox. */
    private java.util.List<String> shapes(String sandboxId) {
        java.util.List<String> out = new java.util.ArrayList<>();
        for (dev.sandbox4j.emulators.RecordedCall c : emulator.calls()) {
            boolean create = c.method().equals("POST") && c.path().equals("/api/sandbox");
            if (!create && !c.path().contains(sandboxId)) {
                continue;
            }
            out.add(c.method() + " " + c.path().replace(sandboxId, "{id}")
                    .replaceAll("/session/sandbox4j-exec-[0-9]+-[0-9a-f]{8}-[0-9a-f-]{27}", "/session/{s}")
                    .replaceAll("/command/[0-9a-f]{8}-[0-9a-f-]{27}", "/command/{c}") + " " + c.status());
        }
        return out;
    }

    @Test
    void a503OnCreateIsLookedUpByRunIdThenThrownTyped() {
        // a 5xx may have created the sandbox: the lifecycle looks for the run id (nothing) and throws
        emulator.faults().failCreate(503, 1);
        int before = emulator.ledger().created();
        SandboxException e = assertThrows(SandboxException.class, () -> run("print(1)"));
        assertEquals(503, e.httpStatus().orElse(0), e.toString());
        assertFalse(e.codeMayHaveRun());
        assertEquals(before, emulator.ledger().created(), "nothing was created");
        assertTrue(emulator.calls().stream().anyMatch(c -> c.method().equals("GET") && c.path().equals("/api/sandbox")
                && c.query() != null && c.query().startsWith("labels=")), "the run id was looked up by label");
        assertEquals("after 503\n", run("print('after 503')").stdout(), "the next run works");
    }

    @Test
    void createFailingEveryTimeEndsInATypedException() {
        emulator.faults().failCreate(500, 10);
        int before = emulator.ledger().created();
        SandboxException e = assertThrows(SandboxException.class, () -> run("print(1)"));
        assertEquals(500, e.httpStatus().orElse(0), e.toString());
        assertFalse(e.codeMayHaveRun());
        assertEquals(before, emulator.ledger().created(), "nothing was created");
    }

    @Test
    void a429IsRetriedAfterRetryAfter() {
        emulator.faults().rateLimitCreate(1, 1);
        RunResult r = run("print('after 429')");
        assertEquals("after 429\n", r.stdout());
        assertEquals(SandboxRateLimitException.class.getSimpleName(), r.attempts().get(0).errorType().orElse(""));
    }

    @Test
    void aLostCreateResponseIsFoundByItsRunIdAndDeleted() {
        int created = emulator.ledger().created();
        int destroyed = emulator.ledger().destroyed();
        emulator.faults().loseCreateResponse(1);
        SandboxException e = assertThrows(SandboxException.class, () -> run("print(1)"));
        assertTrue(e.requestMayHaveSucceeded(), e.toString());
        assertFalse(e.codeMayHaveRun());
        assertEquals(created + 1, emulator.ledger().created(), "the create went through");
        assertEquals(destroyed + 1, emulator.ledger().destroyed(), "and the orphan was found and deleted");
    }

    @Test
    void aStartFailureAfterInsertIsCleanedUp() {
        emulator.failStart(5);
        SandboxException e = assertThrows(SandboxException.class, () -> run("print(1)"));
        assertEquals(400, e.httpStatus().orElse(0), e.toString());
        assertTrue(e.getMessage().contains("Sandbox failed to start"), e.getMessage());
    }

    @Test
    void deleteRefusedWhileStartingIsRetriedUntilItGoes() {
        // the adapter gives up waiting for `started` long before the emulator says so; each refused
        // DELETE (409) moves the start on, so teardown gets through
        emulator.startingPolls(8);
        try (DaytonaSandboxRunner impatient = env.adapter().startTimeout(Duration.ofMillis(50)).build()) {
            SandboxException e = assertThrows(SandboxException.class,
                    () -> impatient.run(RunRequest.python("print(1)")));
            assertTrue(e.getMessage().contains("did not start"), e.getMessage());
        }
        assertTrue(emulator.calls().stream().anyMatch(c -> c.method().equals("DELETE") && c.status() == 409),
                "a DELETE met the pending start");
    }

    @Test
    void aDroppedExecAnswerIsATypedExceptionAndTheSandboxGoes() {
        emulator.faults().dropStream(1);
        SandboxException e = assertThrows(SandboxException.class, () -> run("print('ran')"));
        assertTrue(e.codeMayHaveRun(), "the code may have run: " + e);
        assertFalse(e instanceof SandboxInterruptedException);
    }

    @Test
    void deleteFailuresAreRetried() {
        emulator.faults().failTeardown(409, 2);
        RunResult r = run("print('x')");
        assertEquals(Teardown.DESTROYED, r.teardown());
        emulator.faults().failTeardown(500, 1);
        assertEquals(Teardown.DESTROYED, run("print('y')").teardown());
    }

    @Test
    void anEndlessResultStopsAtTheHardCap() {
        emulator.faults().hostileFraming(true);
        RunResult r = runner.run(RunRequest.of(SandboxSpec.defaults(),
                Execution.builder("print(1)").hardCapBytes(1024 * 1024).outputLimit(1000).build()));
        assertEquals(RunStatus.OUTPUT_LIMIT, r.status(), r.toString());
        assertTrue(r.stdoutTruncated());
        assertEquals(1000, r.stdout().length());
        assertEquals(Teardown.DESTROYED, r.teardown());
    }

    @Test
    void slowAnswersOnlyCostTime() {
        emulator.faults().slow(Duration.ofMillis(200));
        assertEquals("slow\n", run("print('slow')").stdout());
    }

    @Test
    void anInterruptMidRunThrowsAndTearsDown() throws Exception {
        Sandbox sandbox = runner.open(SandboxSpec.defaults());
        AtomicReference<Throwable> thrown = new AtomicReference<>();
        Thread worker = new Thread(() -> {
            try {
                sandbox.exec(Execution.builder("import time\nprint('sleeping', flush=True)\ntime.sleep(60)")
                        .budget(Duration.ofSeconds(90)).build());
            } catch (Throwable t) {
                thrown.set(t);
            }
        });
        worker.start();
        long until = System.nanoTime() + 20_000_000_000L;
        while (emulator.calls().stream().noneMatch(c -> c.path().endsWith("/logs")) && System.nanoTime() < until) {
            Thread.sleep(10);
        }
        Thread.sleep(200); // let the command start on the machine
        worker.interrupt();
        worker.join(30_000);
        assertFalse(worker.isAlive());
        assertInstanceOf(SandboxInterruptedException.class, thrown.get());
        assertTrue(sandbox.isClosed(), "torn down by the interrupt");
        assertEquals(Teardown.DESTROYED, sandbox.teardown());
    }

    /**
     * Without a listener too (a session command, as every exec): past its budget the result is
     * TIMED_OUT with what each stream had printed, and the session (with its command) is deleted.
     */
    @Test
    void aRunWithoutAListenerPastItsBudgetKeepsWhatItPrinted() {
        emulator.clearCalls();
        long t0 = System.nanoTime();
        RunResult r = runner.run(RunRequest.of(SandboxSpec.defaults(),
                Execution.builder("import sys, time\nprint('partial', flush=True)\nprint('warn', file=sys.stderr, flush=True)\n"
                        + "time.sleep(60)").budget(Duration.ofSeconds(2)).build()));
        assertEquals(RunStatus.TIMED_OUT, r.status(), r.toString());
        assertTrue(r.exitCode().isEmpty());
        assertEquals("partial\n", r.stdout());
        assertEquals("warn\n", r.stderr());
        assertTrue(System.nanoTime() - t0 < Duration.ofSeconds(30).toNanos(), "came back near its budget");
        assertTrue(emulator.calls().stream().anyMatch(c -> c.method().equals("DELETE") && c.path().contains("/process/session/")
                && c.path().contains(r.sandboxId()) && c.status() == 204), "the session (and its command) was deleted");
    }

    /**
     * In a session, an exec past its budget comes back near its budget with what it printed, and the next
     * exec runs: the command is killed when its session is deleted, whatever ran in the sandbox before.
     */
    @Test
    void aSessionExecPastItsBudgetComesBackNearItAndTheNextExecRuns() {
        try (dev.sandbox4j.api.Sandbox s = runner.open(SandboxSpec.builder().file("in/data.txt", "some input").build())) {
            assertEquals("some input\n", s.exec(dev.sandbox4j.api.Execution.python("print(open('in/data.txt').read())")).stdout());
            long t0 = System.nanoTime();
            RunResult r = s.exec(Execution.builder("import time\nprint('partial', flush=True)\ntime.sleep(60)")
                    .budget(Duration.ofSeconds(2)).build());
            long ms = (System.nanoTime() - t0) / 1_000_000;
            assertEquals(RunStatus.TIMED_OUT, r.status(), r.toString());
            assertEquals("partial\n", r.stdout());
            assertTrue(ms < 15_000, "came back " + ms + " ms after a 2 s budget");
            assertEquals("after\n", s.exec(dev.sandbox4j.api.Execution.python("print('after')")).stdout());
        }
    }

    /** Streamed (a session command): past its budget the result is TIMED_OUT with what arrived, and the session goes. */
    @Test
    void aStreamedRunPastItsBudgetKeepsWhatArrived() {
        StringBuffer seen = new StringBuffer();
        RunResult r = runner.run(RunRequest.of(SandboxSpec.defaults(),
                Execution.builder("import time\nprint('partial', flush=True)\ntime.sleep(60)")
                        .budget(Duration.ofSeconds(2)).listener((stream, text) -> seen.append(text)).build()));
        assertEquals(RunStatus.TIMED_OUT, r.status());
        assertEquals("partial\n", r.stdout());
        assertEquals("partial\n", seen.toString(), "the listener saw what the result keeps");
        assertTrue(emulator.calls().stream().anyMatch(c -> c.method().equals("DELETE") && c.path().contains("/process/session/")
                && c.status() == 204), "the session (and its command) was deleted");
    }

    /** Streamed: an interrupt after the first chunk throws, the listener has what arrived, the sandbox goes. */
    @Test
    void anInterruptedStreamedRunHandsTheListenerWhatArrived() throws Exception {
        Sandbox sandbox = runner.open(SandboxSpec.defaults());
        java.util.concurrent.CountDownLatch first = new java.util.concurrent.CountDownLatch(1);
        StringBuffer seen = new StringBuffer();
        AtomicReference<Throwable> thrown = new AtomicReference<>();
        Thread worker = new Thread(() -> {
            try {
                sandbox.exec(Execution.builder("import sys, time\nprint('ready', flush=True)\n"
                                + "sys.stderr.write('half\\u00e9'); sys.stderr.flush()\ntime.sleep(60)")
                        .budget(Duration.ofSeconds(90)).listener((stream, text) -> {
                            seen.append(stream).append(':').append(text).append('|');
                            first.countDown();
                        }).build());
            } catch (Throwable t) {
                thrown.set(t);
            }
        });
        worker.start();
        assertTrue(first.await(60, java.util.concurrent.TimeUnit.SECONDS), "no chunk while the code ran");
        worker.interrupt();
        worker.join(60_000);
        assertFalse(worker.isAlive());
        assertInstanceOf(SandboxInterruptedException.class, thrown.get());
        // the stderr line had no newline yet: the daemon's labeler holds it, so only the stdout line arrived
        assertEquals("STDOUT:ready\n|", seen.toString());
        assertTrue(sandbox.isClosed(), "torn down by the interrupt");
        assertEquals(Teardown.DESTROYED, sandbox.teardown());
    }

    @Test
    void canaryDenyAllAgainstAnAllowListNamingTheListener() throws Exception {
        try (CanaryListener canary = CanaryListener.start(InetAddress.getLoopbackAddress())) {
            RunResult denied = runner.run(RunRequest.of(SandboxSpec.builder().egress(EgressPolicy.denyAll()).build(),
                    Execution.python(knock("deny-all", canary))));
            RunResult domains = runner.run(RunRequest.of(
                    SandboxSpec.builder().egress(EgressPolicy.allowOnly("example.com")).build(),
                    Execution.python(knock("domains", canary))));
            RunResult cidr = runner.run(RunRequest.of(
                    SandboxSpec.builder().egress(EgressPolicy.builder().allowCidr("127.0.0.1/32").build()).build(),
                    Execution.python(knock("cidr", canary))));
            assertTrue(canary.awaitBytes("cidr", 10_000), "the CIDR control reached nothing: " + cidr.stdout());
            assertEquals(0, canary.bytes("deny-all"), denied.stdout());
            assertEquals(0, canary.bytes("domains"), domains.stdout());
            assertTrue(denied.stdout().startsWith("BLOCKED"), denied.stdout());
        }
    }

    private static String knock(String tag, CanaryListener canary) {
        return "import socket\n"
                + "try:\n"
                + "    s = socket.create_connection(('127.0.0.1', " + canary.port() + "), timeout=5)\n"
                + "    s.sendall(b'" + tag + "\\n' + b'x' * 1024)\n"
                + "    s.close()\n"
                + "    print('SENT')\n"
                + "except OSError as e:\n"
                + "    print('BLOCKED', type(e).__name__)\n";
    }
}
