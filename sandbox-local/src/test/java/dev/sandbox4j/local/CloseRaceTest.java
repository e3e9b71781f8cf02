package dev.sandbox4j.local;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sandbox4j.api.Execution;
import dev.sandbox4j.api.Sandbox;
import dev.sandbox4j.api.SandboxSpec;
import dev.sandbox4j.api.exception.SandboxException;
import dev.sandbox4j.policy.Language;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Issue 29: {@code close()} racing creates. Eight threads open sandboxes (some plain, some with a setup
 * command, some running an exec) while {@code close()} is called at a random point; the moment close
 * returns, and again once every thread has stopped, nothing of any sandbox is left: the runner counts
 * none, no directory is under the work root, no mount under it in /proc/self/mountinfo, none of its
 * sandboxes' cgroups, no process of it. Every failure a creating thread sees is a typed one.
 */
class CloseRaceTest {
    private static final int THREADS = 8;
    private static final int ROUNDS = 6;
    private Path workRoot;

    @BeforeEach
    void dirs() throws Exception {
        workRoot = TestDirs.workRoot();
    }

    @AfterEach
    void clean() throws Exception {
        TestDirs.delete(workRoot);
    }

    @Test
    void closeRacingCreatesLeavesNothingBehind() throws Exception {
        for (int round = 0; round < ROUNDS; round++) {
            race(round);
        }
    }

    private void race(int round) throws Exception {
        Set<Long> childrenBefore = children();
        LocalSandboxRunner runner = LocalSandboxRunner.builder().workRoot(workRoot).build();
        if (round % 2 == 1) {
            runner.verify(); // odd rounds race sandboxes only; even ones the smoke run of the first creates too
        }
        Set<String> seen = ConcurrentHashMap.newKeySet(); // sandbox directory names: their cgroups carry the same name
        List<Throwable> unexpected = new ArrayList<>();
        Map<String, AtomicInteger> outcomes = new ConcurrentHashMap<>();
        AtomicBoolean stop = new AtomicBoolean();
        CountDownLatch started = new CountDownLatch(THREADS);
        List<Thread> threads = new ArrayList<>();
        for (int t = 0; t < THREADS; t++) {
            int kind = t % 4;
            Thread th = new Thread(() -> {
                started.countDown();
                while (!stop.get()) {
                    try {
                        create(runner, kind);
                        count(outcomes, "opened");
                    } catch (IllegalStateException e) {
                        count(outcomes, "refused by the closed runner");
                        if (!String.valueOf(e.getMessage()).contains("closed")) {
                            synchronized (unexpected) {
                                unexpected.add(e);
                            }
                        }
                        return; // the runner is closed: refused, as it should be
                    } catch (SandboxException e) {
                        // a create that finished after close began, or a sandbox close tore down under its setup
                        String m = String.valueOf(e.getMessage());
                        count(outcomes, m.contains("was closed while") ? "created after close began, removed itself"
                                : m.contains("runner is closed") ? "refused by the closed driver" : e.getClass().getSimpleName());
                        if (runnerClosed(runner)) {
                            return;
                        }
                        synchronized (unexpected) {
                            unexpected.add(e);
                        }
                        return;
                    } catch (Throwable e) {
                        synchronized (unexpected) {
                            unexpected.add(e);
                        }
                        return;
                    }
                }
            }, "close-race-" + round + "-" + t);
            th.setDaemon(true);
            threads.add(th);
        }
        Thread sampler = new Thread(() -> {
            while (!stop.get()) {
                seen.addAll(names(workRoot));
                LockSupport.parkNanos(500_000);
            }
        }, "close-race-sampler");
        sampler.setDaemon(true);
        sampler.start();
        threads.forEach(Thread::start);
        assertTrue(started.await(10, TimeUnit.SECONDS));
        // round 0 closes before or while the first creates run; later rounds at random points, up to when
        // sandboxes are open, running a setup command or an exec
        long delayMs = round == 0 ? 5 : ThreadLocalRandom.current().nextLong(20, 900);
        Thread.sleep(delayMs);
        runner.close();

        String when = "round " + round + ", close after " + delayMs + " ms";
        assertNothingLeft(runner, seen, childrenBefore, when + ", the moment close returned");
        for (Thread th : threads) {
            th.join(TimeUnit.SECONDS.toMillis(30));
            assertTrue(!th.isAlive(), th.getName() + " stopped");
        }
        stop.set(true);
        sampler.join();
        assertNothingLeft(runner, seen, childrenBefore, when + ", once every creating thread stopped");
        assertEquals(List.of(), unexpected, when + ": every failure a creating thread saw was a typed refusal");
        System.out.println("CloseRaceTest " + when + ": " + new java.util.TreeMap<>(outcomes));
    }

    /** One open of a kind: plain and left open, closed again, with a setup command, or running an exec. */
    private static void create(LocalSandboxRunner runner, int kind) {
        switch (kind) {
            case 0:
                runner.open(SandboxSpec.defaults()); // left open: close() must tear it down
                break;
            case 1:
                try (Sandbox s = runner.open(SandboxSpec.defaults())) {
                    s.id();
                }
                break;
            case 2:
                runner.open(SandboxSpec.builder().setupCommand("true").build());
                break;
            default:
                Sandbox s = runner.open(SandboxSpec.defaults());
                s.exec(Execution.builder("sleep 5").language(Language.BASH).budget(Duration.ofSeconds(10)).build());
                break;
        }
    }

    private static void count(Map<String, AtomicInteger> outcomes, String what) {
        outcomes.computeIfAbsent(what, k -> new AtomicInteger()).incrementAndGet();
    }

    private static boolean runnerClosed(LocalSandboxRunner runner) {
        try {
            runner.open(SandboxSpec.defaults()).close();
            return false;
        } catch (IllegalStateException e) {
            return true;
        }
    }

    private void assertNothingLeft(LocalSandboxRunner runner, Set<String> seen, Set<Long> childrenBefore, String when)
            throws IOException {
        assertEquals(0, runner.openSandboxes(), when + ": open sandboxes");
        assertEquals(List.of(), names(workRoot), when + ": sandbox directories under the work root");
        assertEquals(List.of(), mountsUnder(workRoot), when + ": mounts under the work root");
        assertEquals(List.of(), cgroupsNamed(seen), when + ": cgroups of this round's " + seen.size() + " sandboxes");
        Set<Long> now = children();
        now.removeAll(childrenBefore);
        assertEquals(List.of(), now.stream().map(CloseRaceTest::describe).collect(Collectors.toList()),
                when + ": processes the runner started");
    }

    private static List<String> names(Path dir) {
        try (Stream<Path> s = Files.list(dir)) {
            return s.map(p -> p.getFileName().toString()).sorted().collect(Collectors.toList());
        } catch (IOException e) {
            return List.of();
        }
    }

    private static List<String> mountsUnder(Path root) throws IOException {
        String prefix = root.toAbsolutePath().normalize() + "/";
        return Files.readAllLines(Path.of("/proc/self/mountinfo")).stream()
                .filter(l -> l.split(" ")[4].startsWith(prefix)).collect(Collectors.toList());
    }

    /** Directories named like one of these sandboxes under a {@code sandbox4j} cgroup, in any hierarchy. */
    private static List<Path> cgroupsNamed(Set<String> names) throws IOException {
        Path base = Path.of("/sys/fs/cgroup");
        if (!Files.isDirectory(base) || names.isEmpty()) {
            return List.of();
        }
        for (int attempt = 1; ; attempt++) {
            try (Stream<Path> s = Files.find(base, 10, (p, a) -> a.isDirectory() && p.getFileName() != null
                    && names.contains(p.getFileName().toString()) && p.getParent().getFileName() != null
                    && p.getParent().getFileName().toString().equals("sandbox4j"))) {
                return s.collect(Collectors.toList());
            } catch (java.io.UncheckedIOException e) {
                // another JVM's cgroup removed while walking: walk again
                if (attempt == 5) {
                    throw e;
                }
            }
        }
    }

    private static String describe(long pid) {
        try {
            return pid + " " + new String(Files.readAllBytes(Path.of("/proc/" + pid + "/cmdline"))).replace('\0', ' ').strip();
        } catch (IOException e) {
            return pid + " (gone)";
        }
    }

    private static Set<Long> children() {
        return ProcessHandle.current().descendants().filter(ProcessHandle::isAlive).map(ProcessHandle::pid)
                .collect(Collectors.toCollection(java.util.HashSet::new));
    }
}
