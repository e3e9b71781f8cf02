package dev.sandbox4j.local;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sandbox4j.api.Execution;
import dev.sandbox4j.api.RunResult;
import dev.sandbox4j.api.RunStatus;
import dev.sandbox4j.api.Sandbox;
import dev.sandbox4j.api.SandboxSpec;
import dev.sandbox4j.api.Teardown;
import dev.sandbox4j.api.exception.AttachRefusedException;
import dev.sandbox4j.api.exception.SandboxNotFoundException;
import dev.sandbox4j.policy.EgressPolicy;
import dev.sandbox4j.policy.Language;
import dev.sandbox4j.policy.Limits;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Issue 30, item 4: a detached local sandbox is attached again by id from another runner of the same
 * JVM, after the checks every runner makes; a mismatch is refused and leaves it alone; a closed,
 * expired or never-detached one is not attachable; at the JVM's normal exit a detached sandbox is removed.
 */
class LocalAttachTest {
    private static final SandboxSpec SPEC = SandboxSpec.builder()
            .limits(Limits.builder().lifetime(Duration.ofMinutes(3)).build()).build();
    private Path workRoot;
    private final List<LocalSandboxRunner> runners = new ArrayList<>();

    @BeforeEach
    void dirs() throws Exception {
        workRoot = TestDirs.workRoot();
    }

    @AfterEach
    void clean() throws Exception {
        runners.forEach(LocalSandboxRunner::close);
        TestDirs.delete(workRoot);
    }

    private LocalSandboxRunner runner() {
        LocalSandboxRunner r = LocalSandboxRunner.builder().workRoot(workRoot).build();
        runners.add(r);
        return r;
    }

    @Test
    void anotherRunnerAttachesADetachedSandboxWithItsFilesAndOwnsIt() throws Exception {
        LocalSandboxRunner a = runner();
        LocalSandbox first = a.openLocal(SPEC);
        Path work = first.workDirectory();
        assertExited(first.exec(Execution.builder("echo handed-over > f.txt").language(Language.BASH).build()));
        first.detach();
        assertEquals(Teardown.DETACHED, first.teardown());
        assertEquals(0, a.openSandboxes(), "a detached sandbox is no longer the runner's");
        a.close();
        assertTrue(Files.exists(work.resolve("f.txt")), "the runner's close leaves a detached sandbox alone");

        LocalSandboxRunner b = runner();
        Sandbox second = b.attach(first.id(), SPEC);
        assertEquals(first.runId(), second.runId());
        assertEquals(1, b.openSandboxes(), "the attaching runner owns it");
        RunResult r = second.exec(Execution.builder("cat f.txt").language(Language.BASH).build());
        assertExited(r);
        assertEquals("handed-over\n", r.stdout());
        b.close(); // tears down what it attached
        assertTrue(second.isClosed());
        assertFalse(Files.exists(work), "the attaching runner's close removed it");
        assertThrows(SandboxNotFoundException.class, () -> runner().attach(first.id(), SPEC));
    }

    @Test
    void aMismatchIsRefusedAndTheSandboxLeftDetached() {
        LocalSandboxRunner a = runner();
        SandboxSpec withEnv = SPEC.toBuilder().env("GREETING", "s3cr3t-value").build();
        Sandbox first = a.open(withEnv);
        first.detach();
        LocalSandboxRunner b = runner();
        AttachRefusedException e = assertThrows(AttachRefusedException.class,
                () -> b.attach(first.id(), withEnv.toBuilder().limits(Limits.builder().lifetime(Duration.ofMinutes(7)).build()).build()));
        assertTrue(e.reasons().stream().anyMatch(s -> s.startsWith("lifetime:")), e.reasons().toString());
        e = assertThrows(AttachRefusedException.class, () -> b.attach(first.id(), withEnv.toBuilder().egress(EgressPolicy.allowAll()).build()));
        assertTrue(e.reasons().stream().anyMatch(s -> s.startsWith("egress:")), e.reasons().toString());
        assertTrue(e.reasons().stream().anyMatch(s -> s.contains("egress: default")), "the live egress is compared too: " + e.reasons());
        e = assertThrows(AttachRefusedException.class, () -> b.attach(first.id(), SPEC.toBuilder().env("GREETING", "other").build()));
        assertTrue(e.reasons().stream().anyMatch(s -> s.contains("env:") && s.contains("GREETING")), e.reasons().toString());
        assertFalse(e.getMessage().contains("s3cr3t-value") || e.getMessage().contains("other"), "no env value in " + e.getMessage());
        e = assertThrows(AttachRefusedException.class, () -> b.attach(first.id(),
                withEnv.toBuilder().limits(Limits.builder().lifetime(Duration.ofMinutes(3)).diskMib(64).build()).build()));
        assertTrue(e.reasons().stream().anyMatch(s -> s.contains("disk bytes")), e.reasons().toString());
        assertEquals(0, b.openSandboxes(), "a refused attach takes nothing");
        try (Sandbox again = b.attach(first.id(), withEnv)) {
            RunResult r = again.exec(Execution.builder("printf %s \"$GREETING\"").language(Language.BASH).build());
            assertEquals("s3cr3t-value", r.stdout(), "its env is the one it was made with");
        }
    }

    @Test
    void aLockedDownSandboxIsAttachedAfterItsLiveEgressIsCompared() {
        LocalSandboxRunner a = runner();
        SandboxSpec lockedDown = SPEC.toBuilder().setupEgress(EgressPolicy.allowAll()).setupCommand("true").build();
        Sandbox first = a.open(lockedDown);
        first.detach();
        try (Sandbox again = runner().attach(first.id(), lockedDown)) {
            assertExited(again.exec(Execution.builder("true").language(Language.BASH).build()));
        }
    }

    @Test
    void closedExpiredAndNotDetachedSandboxesAreNotAttachable() throws Exception {
        LocalSandboxRunner a = runner();
        LocalSandboxRunner b = runner();
        Sandbox closed = a.open(SPEC);
        closed.close();
        assertThrows(SandboxNotFoundException.class, () -> b.attach(closed.id(), SPEC));
        assertThrows(SandboxNotFoundException.class, () -> b.attach("local-nosuchsandbox", SPEC));

        Sandbox open = a.open(SPEC);
        AttachRefusedException e = assertThrows(AttachRefusedException.class, () -> b.attach(open.id(), SPEC));
        assertTrue(e.reasons().stream().anyMatch(s -> s.startsWith("state:")), e.reasons().toString());
        assertExited(open.exec(Execution.builder("true").language(Language.BASH).build()));
        open.close();

        SandboxSpec brief = SandboxSpec.builder().limits(Limits.builder().lifetime(Duration.ofSeconds(1)).build()).build();
        LocalSandbox expiring = a.openLocal(brief);
        Path work = expiring.workDirectory();
        // the sandbox's own directory under the work root (work is <root>/fs/work): the timer removes it whole
        Path root = workRoot.resolve(workRoot.relativize(work).getName(0));
        assertTrue(Files.isDirectory(root.resolve("fs")), "not the sandbox's directory: " + root);
        expiring.detach();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (Files.exists(root) && System.nanoTime() < deadline) {
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(50)); // polling the lifetime timer, bounded
        }
        // waited for the whole directory, not only the work directory: the cleanup after this test walks
        // the work root, and a teardown still removing files under it failed that walk (NoSuchFileException)
        assertFalse(Files.exists(root), "the lifetime still ends a detached sandbox and removes its directory");
        assertThrows(SandboxNotFoundException.class, () -> b.attach(expiring.id(), brief));
    }

    @Test
    void twoRunnersAttachingAtOnceGetItOnce() throws Exception {
        LocalSandboxRunner a = runner();
        Sandbox first = a.open(SPEC);
        first.detach();
        LocalSandboxRunner b = runner();
        LocalSandboxRunner c = runner();
        CountDownLatch go = new CountDownLatch(1);
        List<Object> outcomes = java.util.Collections.synchronizedList(new ArrayList<>());
        List<Thread> threads = new ArrayList<>();
        for (LocalSandboxRunner r : List.of(b, c)) {
            Thread t = new Thread(() -> {
                try {
                    go.await();
                    outcomes.add(r.attach(first.id(), SPEC));
                } catch (Throwable ex) {
                    outcomes.add(ex);
                }
            });
            t.start();
            threads.add(t);
        }
        go.countDown();
        for (Thread t : threads) {
            t.join(30_000);
        }
        assertEquals(1, outcomes.stream().filter(o -> o instanceof Sandbox).count(), outcomes.toString());
        // the other finds it taken: open in a runner that has not detached it, or (between the two looks) not there
        assertEquals(1, outcomes.stream().filter(o -> o instanceof SandboxNotFoundException
                || o instanceof AttachRefusedException && ((AttachRefusedException) o).reasons().get(0).startsWith("state:")).count(),
                outcomes.toString());
        assertEquals(1, b.openSandboxes() + c.openSandboxes());
    }

    @Test
    void aDetachedSandboxIsRemovedAtTheJvmsNormalExit() throws Exception {
        Path java = Path.of(System.getProperty("java.home"), "bin", "java");
        Process child = new ProcessBuilder(java.toString(), "-cp", System.getProperty("java.class.path"),
                DetachedAtExitMain.class.getName(), workRoot.toString()).redirectError(ProcessBuilder.Redirect.DISCARD).start();
        String line;
        try (BufferedReader r = new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8))) {
            line = r.readLine();
        }
        assertTrue(child.waitFor(60, TimeUnit.SECONDS), "the child JVM exited");
        assertEquals(0, child.exitValue());
        assertTrue(line != null, "the child JVM detached a sandbox");
        Path root = Path.of(line).getParent().getParent();
        assertFalse(Files.exists(root), "the shutdown hook removed the detached sandbox " + root);
        assertEquals(List.of(), Files.readAllLines(Path.of("/proc/self/mountinfo")).stream()
                .filter(l -> l.split(" ")[4].startsWith(root.toString())).toList(), "its mount is gone");
    }

    private static void assertExited(RunResult r) {
        assertEquals(RunStatus.EXITED, r.status(), r.toString());
        assertEquals(java.util.OptionalInt.of(0), r.exitCode(), r.toString());
    }
}
