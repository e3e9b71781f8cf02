package dev.sandbox4j.benchmarks.adapters;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/** What one client did at one concurrency over all its measured batches. */
final class Tally {
    final List<Long> latenciesMicros = new ArrayList<>();
    long wallNanos;
    long cpuTicks;
    long cycles;
    long requests;
    boolean requestsKnown = true;
    /** Requests by kind (CREATE, EXEC, ... or Modal's gRPC methods), summed over the batches. */
    final Map<String, Long> kinds = new TreeMap<>();
    int errors;
    String firstError;

    /** Adds a batch with the emulator's counts before and after it (null when it has no counter). */
    void add(ClientProcess.Batch b, int cycles, Map<String, Long> before, Map<String, Long> after) {
        if (before == null || after == null) {
            add(b, cycles, -1);
            return;
        }
        after.forEach((k, v) -> {
            long d = v - before.getOrDefault(k, 0L);
            if (!k.equals("total") && d != 0) {
                kinds.merge(k, d, Long::sum);
            }
        });
        add(b, cycles, after.get("total") - before.get("total"));
    }

    void add(ClientProcess.Batch b, int cycles, long requests) {
        latenciesMicros.addAll(b.latenciesMicros);
        wallNanos += b.wallNanos;
        cpuTicks += b.cpuTicks;
        this.cycles += cycles;
        if (requests < 0) {
            requestsKnown = false;
        } else {
            this.requests += requests;
        }
        errors += b.errors;
        if (firstError == null) {
            firstError = b.firstError;
        }
    }

    double medianMillis() {
        return Stats.median(latenciesMicros) / 1000;
    }

    double p99Millis() {
        return Stats.quantile(latenciesMicros, 0.99) / 1000;
    }

    double cyclesPerSecond() {
        return cycles * 1e9 / wallNanos;
    }

    /**
     * Client CPU per cycle in ms: the process's CPU over the batches less what it burns idle over the
     * same wall time ({@code idleTicksPerSecond}, measured after warm-up), never below zero.
     */
    double cpuMillisPerCycle(double idleTicksPerSecond) {
        double ticks = cpuTicks - idleTicksPerSecond * wallNanos / 1e9;
        return Math.max(0, ProcStat.ticksToMillis(1) * ticks / cycles);
    }

    /** "CREATE 1, EXEC 1, ..." per cycle. */
    String kindsPerCycle() {
        StringBuilder s = new StringBuilder();
        kinds.forEach((k, v) -> s.append(s.length() == 0 ? "" : ", ").append(k).append(' ')
                .append(Table.number((double) v / cycles)));
        return s.toString();
    }

    double requestsPerCycle() {
        return requestsKnown ? (double) requests / cycles : Double.NaN;
    }
}
