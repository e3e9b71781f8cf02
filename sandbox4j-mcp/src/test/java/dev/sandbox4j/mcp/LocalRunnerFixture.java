package dev.sandbox4j.mcp;

import dev.sandbox4j.local.LocalSandboxRunner;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Comparator;
import java.util.stream.Stream;

/** A real local runner with its own work root, so a test can check that no sandbox directory is left. */
final class LocalRunnerFixture implements AutoCloseable {
    private final Path workRoot;
    private final LocalSandboxRunner runner;

    public LocalRunnerFixture() throws IOException {
        // the sandbox runs as nobody when the JVM is root: the root must be traversable (JUnit's @TempDir is 0700)
        workRoot = Files.createTempDirectory("sandbox4j-mcp-");
        Files.setPosixFilePermissions(workRoot, PosixFilePermissions.fromString("rwx--x--x"));
        // the one-time bubblewrap probe runs now, so that a directory under the work root is a sandbox
        // of the test's own call and not the probe's
        runner = LocalSandboxRunner.builder().workRoot(workRoot).build().verify();
    }

    public LocalSandboxRunner runner() {
        return runner;
    }

    /** Sandbox directories still on disk: zero once every sandbox was torn down. */
    public long leftovers() throws IOException {
        try (Stream<Path> s = Files.list(workRoot)) {
            return s.count();
        }
    }

    @Override
    public void close() throws IOException {
        runner.close();
        try (Stream<Path> s = Files.walk(workRoot)) {
            for (Path p : s.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(p);
            }
        }
    }
}
