package dev.sandbox4j.local;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Comparator;
import java.util.stream.Stream;

/** A work root the drop user can traverse (JUnit's @TempDir is 0700 and owned by root). */
final class TestDirs {
    private TestDirs() {
    }

    static Path workRoot() throws IOException {
        Path p = Files.createTempDirectory("sandbox4j-test-");
        Files.setPosixFilePermissions(p, PosixFilePermissions.fromString("rwx--x--x"));
        return p;
    }

    static long entries(Path dir) throws IOException {
        try (Stream<Path> s = Files.list(dir)) {
            return s.count();
        }
    }

    static void delete(Path dir) throws IOException {
        if (dir == null || !Files.exists(dir)) {
            return;
        }
        try (Stream<Path> s = Files.walk(dir)) {
            for (Path p : s.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(p);
            }
        }
    }
}
