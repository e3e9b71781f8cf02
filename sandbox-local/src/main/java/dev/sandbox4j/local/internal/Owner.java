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

    /**
     * How far two JVMs' views of one process's start time may differ. The JDK derives a start time from
     * the boot time in {@code /proc/stat} ({@code btime}, whole seconds, read once per JVM), which the
     * kernel recomputes from the wall clock: after a clock adjustment two JVMs can see one process
     * start a second or more apart. A live owner's sandbox taken for a stale one would be torn down
     * under it (a sandbox4j clean-clone CI run failed StaleSweepTest so); an owner's pid reused by a
     * process started within this window of the first keeps a stale sandbox until a later sweep.
     */
    static final long START_TOLERANCE_MILLIS = 10_000;

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
        return started < 0 || start.isEmpty() || Math.abs(start.get().toEpochMilli() - started) < START_TOLERANCE_MILLIS;
    }
}
