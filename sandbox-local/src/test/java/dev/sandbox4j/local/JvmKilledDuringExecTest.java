package dev.sandbox4j.local;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The host JVM killed with SIGKILL in the middle of an exec (no shutdown hook, no sweep): bubblewrap is
 * tied to the JVM ({@code --die-with-parent}) and the sandbox's init to bubblewrap, so the init's death
 * empties the PID namespace and nothing of the code runs on, with kernel limits (cgroups, as root) and
 * without them (the path of every non-root user).
 */
class JvmKilledDuringExecTest {
    private Path workRoot;

    @BeforeEach
    void dirs() throws Exception {
        workRoot = TestDirs.workRoot();
    }

    @AfterEach
    void clean() throws Exception {
        TestDirs.delete(workRoot);
    }

    /** Pids whose command line carries {@code token}. */
    private static List<Long> carrying(String token) throws IOException {
        List<Long> out = new ArrayList<>();
        try (Stream<Path> procs = Files.list(Path.of("/proc"))) {
            for (Path p : procs.toList()) {
                String name = p.getFileName().toString();
                if (!name.chars().allMatch(Character::isDigit)) {
                    continue;
                }
                try {
                    String cmdline = new String(Files.readAllBytes(p.resolve("cmdline")), StandardCharsets.UTF_8);
                    if (cmdline.contains(token)) {
                        out.add(Long.parseLong(name));
                    }
                } catch (IOException gone) {
                    // the process ended while we looked
                }
            }
        }
        return out;
    }

    @ParameterizedTest(name = "kernel limits {0}")
    @ValueSource(booleans = {true, false})
    void nothingOfTheCodeOutlivesAKilledJvm(boolean kernelLimits) throws Exception {
        String token = "sandbox4j-killed-jvm-" + UUID.randomUUID();
        Path java = Path.of(System.getProperty("java.home"), "bin", "java");
        Process child = new ProcessBuilder(java.toString(), "-cp", System.getProperty("java.class.path"),
                ExecThenKilledMain.class.getName(), workRoot.toString(), Boolean.toString(kernelLimits), token)
                .redirectOutput(ProcessBuilder.Redirect.DISCARD).redirectError(ProcessBuilder.Redirect.DISCARD).start();
        try {
            long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            // bwrap, the init, the code (python3) and its daemon (the session leader's sh) all carry the token:
            // four means the exec is past bubblewrap's set-up and the code runs
            List<Long> running = carrying(token);
            running.remove(Long.valueOf(child.pid())); // the child JVM's own command line carries the token too
            while (running.size() < 4 && child.isAlive() && System.nanoTime() < until) {
                Thread.sleep(20);
                running = carrying(token);
                running.remove(Long.valueOf(child.pid()));
            }
            if (running.size() < 4) {
                throw new AssertionError("the code never started (child alive: " + child.isAlive() + ", seen " + running + ")");
            }
            child.destroyForcibly(); // SIGKILL: no shutdown hook, no close()
            child.waitFor(30, TimeUnit.SECONDS);
            long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
            List<Long> left = carrying(token);
            while (!left.isEmpty() && System.nanoTime() < end) {
                Thread.sleep(20);
                left = carrying(token);
            }
            List<String> described = new ArrayList<>();
            for (long pid : left) {
                described.add(pid + " " + ProcessHandle.of(pid).flatMap(h -> h.info().commandLine()).orElse("?")
                        + " (parent " + ProcessHandle.of(pid).flatMap(ProcessHandle::parent).map(ProcessHandle::pid).orElse(-1L) + ")");
                ProcessHandle.of(pid).ifPresent(ProcessHandle::destroyForcibly); // leave nothing behind either way
            }
            assertEquals(List.of(), described, "processes of the code alive after the JVM was killed");
        } finally {
            child.destroyForcibly();
            child.waitFor(30, TimeUnit.SECONDS);
            // what the killed JVM left on disk (its mount, its cgroups) is the next start's sweep's to remove
            LocalSandboxRunner.builder().workRoot(workRoot).build().verify();
        }
    }
}
