package dev.sandbox4j.benchmarks;

import dev.sandbox4j.api.RunResult;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;

/**
 * The harness of the runner latency benchmarks: cases run interleaved (round robin, the order rotating
 * each round) so that load changes on a shared machine hit them alike, after a warm-up; the first case is
 * the bare interpreter every other case is compared with.
 */
final class Interleaved {
    interface Body {
        void run() throws Exception;
    }

    static final class Case {
        final String name;
        final Body body;
        final List<Double> millis = new ArrayList<>();

        Case(String name, Body body) {
            this.name = name;
            this.body = body;
        }

        double[] sorted() {
            double[] a = millis.stream().mapToDouble(Double::doubleValue).toArray();
            Arrays.sort(a);
            return a;
        }

        double median() {
            return percentile(sorted(), 50);
        }
    }

    private Interleaved() {
    }

    /** The bare case: {@code /usr/bin/python3 -c 'print(1)'}, output read, exit awaited. */
    static Case bare() {
        return new Case("bare python3 -c", Interleaved::barePython);
    }

    /** Warms up, measures {@code rounds} rotating rounds, and prints one line per case. */
    static void measure(List<Case> cases, int warmup, int rounds, String about) throws Exception {
        for (int i = 0; i < warmup; i++) {
            for (Case c : cases) {
                c.body.run();
            }
        }
        for (int i = 0; i < rounds; i++) {
            for (int j = 0; j < cases.size(); j++) {
                Case c = cases.get((i + j) % cases.size());
                long t0 = System.nanoTime();
                c.body.run();
                c.millis.add((System.nanoTime() - t0) / 1e6);
            }
        }
        System.out.printf(Locale.ROOT, "%d interleaved rounds after %d warm-up rounds; %d CPUs; load %s%s%n", rounds, warmup,
                Runtime.getRuntime().availableProcessors(), loadAverage(), about);
        System.out.printf(Locale.ROOT, "%-30s %9s %9s %9s %9s%n", "case", "median", "p10", "p90", "min");
        for (Case c : cases) {
            double[] m = c.sorted();
            System.out.printf(Locale.ROOT, "%-30s %7.1f ms %6.1f ms %6.1f ms %6.1f ms%n", c.name,
                    percentile(m, 50), percentile(m, 10), percentile(m, 90), m[0]);
        }
    }

    /** A sandboxed {@code print(1)} that did not print 1 stops the benchmark. */
    static void check(RunResult r) {
        if (!r.succeeded() || !r.stdout().equals("1\n")) {
            throw new IllegalStateException("sandboxed python failed: " + r + " " + r.stderr());
        }
    }

    static double percentile(double[] sorted, int p) {
        if (p == 50) {
            int n = sorted.length;
            return n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
        }
        return sorted[Math.min(sorted.length - 1, (int) Math.floor(p / 100.0 * sorted.length))];
    }

    private static void barePython() throws IOException, InterruptedException {
        Process p = new ProcessBuilder("/usr/bin/python3", "-c", "print(1)").redirectErrorStream(true).start();
        String out;
        try (InputStream in = p.getInputStream()) {
            out = new String(in.readAllBytes());
        }
        if (p.waitFor() != 0 || !out.equals("1\n")) {
            throw new IllegalStateException("bare python failed: " + out);
        }
    }

    private static String loadAverage() {
        try {
            return Files.readString(Path.of("/proc/loadavg")).trim();
        } catch (IOException e) {
            return "?";
        }
    }
}
