package dev.sandbox4j.benchmarks.adapters;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * A process's CPU time (user + system, all its threads, living and ended) from {@code /proc/<pid>/stat},
 * the same source for a node and a JVM client.
 */
final class ProcStat {
    /** USER_HZ: the unit of utime and stime in /proc; 100 on every Linux ABI this runs on. */
    static final long TICKS_PER_SECOND = 100;

    private ProcStat() {
    }

    /** utime + stime of a running process, in clock ticks. */
    static long cpuTicks(long pid) throws IOException {
        return parseCpuTicks(Files.readString(Path.of("/proc", Long.toString(pid), "stat")));
    }

    /**
     * utime + stime from a stat line. The command name (field 2) is in parentheses and may itself hold
     * spaces and parentheses, so fields are counted from the last ')'.
     */
    static long parseCpuTicks(String stat) {
        int close = stat.lastIndexOf(')');
        if (close < 0) {
            throw new IllegalArgumentException("not a /proc/<pid>/stat line: " + stat);
        }
        String[] f = stat.substring(close + 1).trim().split("\\s+");
        // after the name: state(3) ppid(4) ... utime(14) stime(15): indexes 11 and 12 here
        if (f.length < 13) {
            throw new IllegalArgumentException("short /proc/<pid>/stat line: " + stat);
        }
        return Long.parseLong(f[11]) + Long.parseLong(f[12]);
    }

    static double ticksToMillis(long ticks) {
        return ticks * 1000.0 / TICKS_PER_SECOND;
    }
}
