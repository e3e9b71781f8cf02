package dev.sandbox4j.docker;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sandbox4j.api.Execution;
import dev.sandbox4j.api.OutputListener;
import dev.sandbox4j.api.RunRequest;
import dev.sandbox4j.api.RunResult;
import dev.sandbox4j.api.RunStatus;
import dev.sandbox4j.api.Sandbox;
import dev.sandbox4j.api.SandboxSpec;
import dev.sandbox4j.api.Teardown;
import dev.sandbox4j.api.exception.SandboxInterruptedException;
import dev.sandbox4j.docker.EngineFaultProxy.Op;
import dev.sandbox4j.emulators.Faults;
import dev.sandbox4j.emulators.Ledger;
import dev.sandbox4j.policy.Language;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * A one-shot {@code run()} runs its code as the container's own first process (issue 35 item 4), seen through
 * {@link EngineFaultProxy} with no fault armed, as a recorder of the engine calls: a create, an attach, one
 * start, a wait and a removal without force, and no exec at all; a session still runs its code as execs.
 * Output, stderr apart, exit codes, the budget, the output cap, interrupts and a listener hold as on an exec,
 * and nothing is left on the engine after each.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class DockerOneShotTest {
    private Path dir;
    private EngineFaultProxy proxy;
    private DockerSandboxRunner runner;

    @BeforeAll
    void start() throws Exception {
        TestEngine.runner(b -> b).close(); // skipped (failed in CI) without an engine and the image
        dir = Files.createTempDirectory("docker-oneshot-");
        proxy = new EngineFaultProxy(dir.resolve("engine.sock"), Path.of("/var/run/docker.sock"), new Faults(), new Ledger());
        runner = TestEngine.runner(b -> b.dockerHost("unix://" + proxy.socket()).killGrace(Duration.ofSeconds(3)));
    }

    @AfterAll
    void stop() throws Exception {
        if (runner != null) {
            runner.close();
        }
        if (proxy != null) {
            proxy.close();
        }
        if (dir != null) {
            Files.deleteIfExists(dir.resolve("engine.sock"));
            Files.deleteIfExists(dir);
        }
    }

    @BeforeEach
    void clear() {
        proxy.clearRequests();
    }

    private Map<Op, Integer> countsSince(Map<Op, Integer> before) {
        Map<Op, Integer> now = proxy.calls();
        now.replaceAll((op, n) -> n - before.getOrDefault(op, 0));
        return now;
    }

    private List<String> deletes() {
        return proxy.requests().stream().filter(r -> r.startsWith("DELETE /containers/")).toList();
    }

    private void nothingLeft(String runId) throws InterruptedException {
        assertEquals(0, TestEngine.driver(runner).labelledResources(runId), "containers or volumes of run " + runId + " left");
    }

    @Test
    void aOneShotIsTheContainersOwnProcessWithNoExec() throws Exception {
        Map<Op, Integer> before = proxy.calls();
        RunResult r = runner.run(RunRequest.python("import sys\nprint('out')\nprint('err', file=sys.stderr)\nsys.exit(3)"));
        Map<Op, Integer> calls = countsSince(before);
        assertEquals("out\n", r.stdout());
        assertEquals("err\n", r.stderr());
        assertEquals(RunStatus.EXITED, r.status());
        assertEquals(java.util.OptionalInt.of(3), r.exitCode());
        assertEquals(Teardown.DESTROYED, r.teardown());
        assertEquals(0, calls.get(Op.EXEC_CREATE), "no exec for a one-shot: " + calls);
        assertEquals(0, calls.get(Op.EXEC_START), "no exec for a one-shot: " + calls);
        assertEquals(1, calls.get(Op.CREATE), "calls: " + calls);
        assertEquals(1, calls.get(Op.ATTACH), "calls: " + calls);
        assertEquals(1, calls.get(Op.START), "one start, never resent: " + calls);
        assertEquals(1, calls.get(Op.WAIT), "calls: " + calls);
        assertEquals(0, calls.get(Op.KILL), "nothing to kill in an exited container: " + calls);
        List<String> deletes = deletes();
        assertEquals(1, deletes.size(), "one removal: " + proxy.requests());
        assertFalse(deletes.get(0).contains("force=true"), "an exited container is removed without force: " + deletes);
        assertTrue(deletes.get(0).contains("v=true"), "with its volume: " + deletes);
        nothingLeft(runIdOf(r));
    }

    /** The container's name is {@code sandbox4j-<run id>}. */
    private static String runIdOf(RunResult r) {
        return r.sandboxId().replaceFirst("^sandbox4j-", "");
    }

    @Test
    void bashAndNodeCodeAndTheUserAndRootFileSystemAreAsInASession() throws Exception {
        RunResult r = runner.run(RunRequest.of(SandboxSpec.defaults(), Execution.of(Language.BASH,
                "id -u; touch /x 2>/dev/null && echo writable || echo read-only; echo hi > f && cat f; exit 0")));
        assertEquals(RunStatus.EXITED, r.status(), r.stderr());
        String uid = TestEngine.driver(runner).settings().user().split(":")[0];
        assertEquals(uid + "\nread-only\nhi\n", r.stdout());
        nothingLeft(runIdOf(r));
    }

    @Test
    void aSessionStillRunsItsCodeAsExecsAndIsRemovedWithForce() throws Exception {
        Map<Op, Integer> before = proxy.calls();
        String id;
        try (Sandbox s = runner.open(SandboxSpec.defaults())) {
            id = s.runId();
            assertEquals("1\n", s.exec(Execution.python("print(1)")).stdout());
        }
        Map<Op, Integer> calls = countsSince(before);
        assertTrue(calls.get(Op.EXEC_CREATE) >= 1, "a session's code is an exec: " + calls);
        assertEquals(0, calls.get(Op.ATTACH), "calls: " + calls);
        List<String> deletes = deletes();
        assertEquals(1, deletes.size(), "one removal: " + proxy.requests());
        assertTrue(deletes.get(0).contains("force=true"), "a session's running container is removed with force: " + deletes);
        nothingLeft(id);
    }

    @Test
    void turnedOffEveryRunIsAnExecInASessionsContainer() throws Exception {
        try (DockerSandboxRunner off = TestEngine.runner(b -> b.dockerHost("unix://" + proxy.socket())
                .oneShotAsContainerProcess(false))) {
            Map<Op, Integer> before = proxy.calls();
            RunResult r = off.run(RunRequest.python("print(1)"));
            Map<Op, Integer> calls = countsSince(before);
            assertEquals("1\n", r.stdout());
            assertTrue(calls.get(Op.EXEC_CREATE) >= 1, "calls: " + calls);
            assertEquals(0, calls.get(Op.ATTACH), "calls: " + calls);
            nothingLeft(runIdOf(r));
        }
    }

    @Test
    void theBudgetKillsTheContainerAndKeepsItsOutput() throws Exception {
        Map<Op, Integer> before = proxy.calls();
        long t0 = System.nanoTime();
        RunResult r = runner.run(RunRequest.of(SandboxSpec.defaults(), Execution.builder(
                "import time\nprint('before', flush=True)\ntime.sleep(60)").budget(Duration.ofSeconds(2)).build()));
        long ms = (System.nanoTime() - t0) / 1_000_000;
        assertEquals(RunStatus.TIMED_OUT, r.status());
        assertEquals("before\n", r.stdout());
        assertTrue(ms < 20_000, "the budget ended it: " + ms + " ms");
        Map<Op, Integer> calls = countsSince(before);
        assertEquals(1, calls.get(Op.KILL), "the container is killed at the budget: " + calls);
        assertEquals(0, calls.get(Op.EXEC_CREATE), "calls: " + calls);
        nothingLeft(runIdOf(r));
    }

    @Test
    void codeThatClosesItsOutputAndRunsOnIsKilledAtItsBudget() throws Exception {
        RunResult r = runner.run(RunRequest.of(SandboxSpec.defaults(), Execution.builder(
                "echo going; exec >&- 2>&-; sleep 60").language(Language.BASH).budget(Duration.ofSeconds(2)).build()));
        assertEquals(RunStatus.TIMED_OUT, r.status());
        assertEquals("going\n", r.stdout());
        nothingLeft(runIdOf(r));
    }

    @Test
    void theOutputCapStopsTheCode() throws Exception {
        RunResult r = runner.run(RunRequest.of(SandboxSpec.defaults(), Execution.builder(
                "import sys\nwhile True:\n    sys.stdout.write('x' * 4096)").outputLimit(10_000).hardCapBytes(64 * 1024)
                .budget(Duration.ofSeconds(30)).build()));
        assertEquals(RunStatus.OUTPUT_LIMIT, r.status());
        assertTrue(r.stdoutTruncated());
        assertEquals(10_000, r.stdout().length());
        nothingLeft(runIdOf(r));
    }

    @Test
    void aListenerSeesOutputAsItHappens() throws Exception {
        AtomicLong first = new AtomicLong();
        StringBuilder seen = new StringBuilder();
        OutputListener l = (stream, text) -> {
            first.compareAndSet(0, System.nanoTime());
            synchronized (seen) {
                seen.append(stream).append(':').append(text);
            }
        };
        RunResult r = runner.run(RunRequest.of(SandboxSpec.defaults(), Execution.builder(
                "import time\nprint('first', flush=True)\ntime.sleep(3)\nprint('second')").listener(l).build()));
        long end = System.nanoTime();
        assertEquals("first\nsecond\n", r.stdout());
        assertTrue(first.get() != 0 && end - first.get() > Duration.ofMillis(2_000).toNanos(),
                "the first chunk came " + (end - first.get()) / 1_000_000 + " ms before the run ended: " + seen);
        synchronized (seen) {
            assertEquals("STDOUT:first\nSTDOUT:second\n", seen.toString());
        }
        nothingLeft(runIdOf(r));
    }

    @Test
    void anInterruptKillsTheContainerAndKeepsThePartialOutput() throws Exception {
        CountDownLatch started = new CountDownLatch(1);
        AtomicReference<Throwable> thrown = new AtomicReference<>();
        Execution e = Execution.builder("import time\nprint('started', flush=True)\ntime.sleep(60)")
                .budget(Duration.ofSeconds(50)).listener((s, t) -> started.countDown()).build();
        Thread t = new Thread(() -> {
            try {
                runner.run(RunRequest.of(SandboxSpec.defaults(), e));
            } catch (Throwable x) {
                thrown.set(x);
            }
        });
        t.start();
        assertTrue(started.await(30, TimeUnit.SECONDS), "the code printed");
        t.interrupt();
        t.join(30_000);
        assertFalse(t.isAlive());
        SandboxInterruptedException x = assertThrows(SandboxInterruptedException.class, () -> {
            throw thrown.get();
        });
        assertTrue(x.codeMayHaveRun());
        assertEquals("started\n", x.output().stdout());
        String runId = x.runId().orElse(null);
        assertNotNull(runId, x.toString());
        nothingLeft(runId);
    }
}
