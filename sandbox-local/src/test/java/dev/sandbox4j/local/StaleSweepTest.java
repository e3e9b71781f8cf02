package dev.sandbox4j.local;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Finding 6: a JVM killed with SIGKILL leaves its sandbox behind; the next runner's start removes it. */
class StaleSweepTest {
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
    void aSandboxOfAKilledJvmIsSweptAtTheNextStartAndALiveOnesIsNot() throws Exception {
        Path java = Path.of(System.getProperty("java.home"), "bin", "java");
        Process child = new ProcessBuilder(java.toString(), "-cp", System.getProperty("java.class.path"),
                StaleOwnerMain.class.getName(), workRoot.toString()).redirectError(ProcessBuilder.Redirect.DISCARD).start();
        Path work;
        try (BufferedReader r = new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8))) {
            String line = r.readLine();
            assertTrue(line != null, "the child JVM opened a sandbox");
            work = Path.of(line);
        }
        Path root = work.getParent().getParent();
        assertTrue(Files.exists(work.resolve("kept.txt")));

        // a live owner's sandbox is left alone
        try (LocalSandboxRunner other = LocalSandboxRunner.builder().workRoot(workRoot).build()) {
            other.verify();
            assertTrue(Files.exists(work.resolve("kept.txt")), "the sandbox of a running JVM is not swept");
        }

        child.destroyForcibly(); // SIGKILL: no shutdown hook runs
        assertTrue(child.waitFor(60, TimeUnit.SECONDS));
        assertTrue(Files.exists(root), "SIGKILL leaves the directory behind");
        boolean mounted = isMountPoint(root.resolve("fs"));

        // the sweep runs once per JVM and work root: a fresh work root name for the second look
        Path again = TestDirs.workRoot();
        try {
            Files.move(root, again.resolve(root.getFileName()));
            // a mount point moves with its directory (rename keeps it mounted)
            Path moved = again.resolve(root.getFileName());
            LocalSandboxRunner.builder().workRoot(again).build().verify();
            assertFalse(Files.exists(moved), "the stale sandbox directory was removed");
            if (mounted) {
                assertFalse(isMountPoint(moved.resolve("fs")), "its file system was unmounted");
            }
            assertEquals(List.of(), cgroupsNamed(root.getFileName().toString()), "its cgroups were removed");
        } finally {
            TestDirs.delete(again);
        }
    }

    private static boolean isMountPoint(Path p) throws Exception {
        return Files.readAllLines(Path.of("/proc/self/mountinfo")).stream().anyMatch(l -> l.split(" ")[4].equals(p.toString()));
    }

    private static List<Path> cgroupsNamed(String name) throws Exception {
        Path base = Path.of("/sys/fs/cgroup");
        if (!Files.isDirectory(base)) {
            return List.of();
        }
        try (var s = Files.find(base, 8, (p, a) -> a.isDirectory() && p.getFileName().toString().equals(name))) {
            return s.toList();
        }
    }
}
