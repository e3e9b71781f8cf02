package dev.sandbox4j.benchmarks.adapters;

import java.util.ArrayList;
import java.util.List;

/** What one client did at one concurrency over all its measured batches. */
final class Tally {
    final List<Long> latenciesMicros = new ArrayList<>();
    long wallNanos;
    long cpuTicks;
    long cycles;
    long requests;
    boolean requestsKnown = true;
    int errors;
    String firstError;

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

    double requestsPerCycle() {
        return requestsKnown ? (double) requests / cycles : Double.NaN;
    }
}
