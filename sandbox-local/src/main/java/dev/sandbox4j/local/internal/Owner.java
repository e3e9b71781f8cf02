package dev.sandbox4j.local.internal;

import java.time.Instant;
import java.util.Optional;

/**
 * Which process owns a sandbox directory: its pid and start time, so that a reused pid is not
 * mistaken for the owner. Written into each sandbox's root and read by the sweep of stale directories.
 */
final class Owner {
    private Owner() {
    }

    /** Read once: ProcessHandle.info() parses several /proc files. */
    private static final String CURRENT = ProcessHandle.current().pid() + " "
            + ProcessHandle.current().info().startInstant().map(Instant::toEpochMilli).orElse(-1L);

    /** {@code "<pid> <start time in epoch milliseconds>"} for this JVM. */
    static String current() {
        return CURRENT;
    }

    /** True when the process {@code owner} names still runs (or the text cannot be read: then it is kept). */
    static boolean alive(String owner) {
        String[] parts = owner.strip().split(" ");
        if (parts.length != 2) {
            return true;
        }
        long pid;
        long started;
        try {
            pid = Long.parseLong(parts[0]);
            started = Long.parseLong(parts[1]);
        } catch (NumberFormatException e) {
            return true;
        }
        Optional<ProcessHandle> p = ProcessHandle.of(pid);
        if (p.isEmpty() || !p.get().isAlive()) {
            return false;
        }
        Optional<Instant> start = p.get().info().startInstant();
        // the same pid with another start time is a different process: the owner is gone
        return started < 0 || start.isEmpty() || Math.abs(start.get().toEpochMilli() - started) < 1000;
    }
}
