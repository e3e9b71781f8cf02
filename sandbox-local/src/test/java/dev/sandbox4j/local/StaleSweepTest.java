package dev.sandbox4j.local;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.sandbox4j.local.internal.LocalSettings;
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

    /**
     * Issue 27, finding 7: the killed JVM ran in another memory cgroup (another service of the host), so
     * its sandbox's cgroup is under that one; the next runner, in this JVM's cgroup, still removes it.
     */
    @Test
    void theCgroupOfASandboxMadeFromAnotherMemoryCgroupIsSwept() throws Exception {
        Path memory = Path.of("/sys/fs/cgroup/memory");
        assumeTrue(LocalSettings.jvmIsRoot() && Files.isWritable(memory),
                "needs root and a writable cgroup v1 memory hierarchy (the runner makes no cgroups otherwise)");
        Path elsewhere = Files.createDirectory(memory.resolve("sandbox4j-test-elsewhere-" + ProcessHandle.current().pid()));
        try {
            Path java = Path.of(System.getProperty("java.home"), "bin", "java");
            // the child joins the other cgroup, then becomes the JVM (one process, so its sandboxes are made there)
            Process child = new ProcessBuilder("/bin/sh", "-c", "echo 0 > \"$1/tasks\" && shift && exec \"$@\"", "sh",
                    elsewhere.toString(), java.toString(), "-cp", System.getProperty("java.class.path"),
                    StaleOwnerMain.class.getName(), workRoot.toString()).redirectError(ProcessBuilder.Redirect.DISCARD).start();
            Path work;
            try (BufferedReader r = new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8))) {
                String line = r.readLine();
                assertTrue(line != null, "the child JVM opened a sandbox");
                work = Path.of(line);
            }
            String name = work.getParent().getParent().getFileName().toString();
            assertTrue(Files.isDirectory(elsewhere.resolve("sandbox4j").resolve(name)),
                    "the child made its sandbox's cgroup under its own: " + cgroupsNamed(name));
            child.destroyForcibly();
            assertTrue(child.waitFor(60, TimeUnit.SECONDS));

            LocalSandboxRunner.builder().workRoot(workRoot).build().verify();
            assertFalse(Files.exists(work.getParent().getParent()), "the stale sandbox directory was removed");
            assertEquals(List.of(), cgroupsNamed(name), "its cgroup under the other memory cgroup was removed");
        } finally {
            // what a failed sweep left: cgroup directories go with rmdir, deepest first
            try (var dirs = Files.walk(elsewhere)) {
                for (Path d : dirs.filter(Files::isDirectory).sorted(java.util.Comparator.reverseOrder()).toList()) {
                    Files.deleteIfExists(d);
                }
            }
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
