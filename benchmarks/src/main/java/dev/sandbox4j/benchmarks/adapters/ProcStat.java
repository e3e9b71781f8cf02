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

    /**
     * CPU time of the process's living threads in nanoseconds: the sum of the first field of each
     * {@code /proc/<pid>/task/<tid>/schedstat}. Finer than ticks, but a thread that ended takes its time
     * with it, so it serves for idle windows only (no thread ends while a client waits for input).
     */
    static long liveThreadsCpuNanos(long pid) throws IOException {
        long sum = 0;
        try (var tasks = Files.list(Path.of("/proc", Long.toString(pid), "task"))) {
            for (Path t : (Iterable<Path>) tasks::iterator) {
                try {
                    sum += parseSchedstatNanos(Files.readString(t.resolve("schedstat")));
                } catch (java.nio.file.NoSuchFileException ended) {
                    // the thread ended between the listing and the read
                }
            }
        }
        return sum;
    }

    /** The time on CPU (ns) from a schedstat line: "run-ns wait-ns timeslices". */
    static long parseSchedstatNanos(String schedstat) {
        String[] f = schedstat.trim().split("\\s+");
        if (f.length < 3) {
            throw new IllegalArgumentException("not a schedstat line: " + schedstat);
        }
        return Long.parseLong(f[0]);
    }

    static double ticksToMillis(long ticks) {
        return ticks * 1000.0 / TICKS_PER_SECOND;
    }
}
