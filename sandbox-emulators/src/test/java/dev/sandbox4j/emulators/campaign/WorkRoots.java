package dev.sandbox4j.emulators.campaign;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.sandbox4j.local.LocalSandboxRunner;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Comparator;
import java.util.concurrent.locks.LockSupport;
import java.util.stream.Stream;

/**
 * Removes a campaign's local work root once every local sandbox under it is gone. An emulator may still
 * be tearing down a machine (a late create destroyed on its own thread) when the campaign ends; its
 * size-limited work directory is a mount until then, and deleting it early fails with "Device or
 * resource busy". A sandbox still open after the bound is a leak, and fails the campaign.
 */
final class WorkRoots {
    private static final Duration BOUND = Duration.ofSeconds(60);

    private WorkRoots() {
    }

    static void closeAndDelete(LocalSandboxRunner local, Path workRoot) throws IOException {
        local.close();
        long deadline = System.nanoTime() + BOUND.toNanos();
        while (local.openSandboxes() > 0 && System.nanoTime() - deadline < 0) {
            LockSupport.parkNanos(Duration.ofMillis(50).toNanos()); // polling a condition, with a bound
        }
        assertEquals(0, local.openSandboxes(), "local sandboxes still open " + BOUND.toSeconds() + " s after the campaign");
        try (Stream<Path> s = Files.walk(workRoot)) {
            for (Path p : s.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(p);
            }
        }
    }
}
