package dev.sandbox4j.benchmarks;

import dev.sandbox4j.api.Execution;
import dev.sandbox4j.api.RunRequest;
import dev.sandbox4j.api.RunResult;
import dev.sandbox4j.api.Sandbox;
import dev.sandbox4j.api.SandboxSpec;
import dev.sandbox4j.local.LocalSandboxRunner;
import java.io.IOException;
import java.io.InputStream;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;

/**
 * The local runner's added latency over a bare {@code /usr/bin/python3 -c 'print(1)'}, all from Java.
 * Three cases run interleaved (round robin, the order rotating each round) so that load changes on a
 * shared machine hit them alike:
 * <ul>
 *   <li>bare: {@code ProcessBuilder("/usr/bin/python3", "-c", "print(1)")}, output read, exit awaited;</li>
 *   <li>run: {@code runner.run(RunRequest.python("print(1)"))}: create the sandbox directory, one
 *       bwrap execution, teardown;</li>
 *   <li>exec: {@code sandbox.exec(...)} on an open sandbox: one bwrap execution;</li>
 *   <li>the same two with {@code kernelLimits(false)}: no per-sandbox file system or cgroups (as a JVM
 *       that is not root runs), to show what those cost.</li>
 * </ul>
 * Usage: {@code LocalLatency [rounds]} (default 20), after a warm-up of 5 rounds.
 */
public final class LocalLatency {
    private LocalLatency() {
    }

    public static void main(String[] args) throws Exception {
        int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 20;
        int warmup = 5;
        try (LocalSandboxRunner runner = LocalSandboxRunner.create().verify();
             Sandbox session = runner.open(SandboxSpec.defaults());
             LocalSandboxRunner plain = LocalSandboxRunner.builder().kernelLimits(false).build().verify();
             Sandbox plainSession = plain.open(SandboxSpec.defaults())) {
            List<Case> cases = List.of(
                    new Case("bare python3 -c", LocalLatency::bare),
                    new Case("runner.run (open+exec+close)", () -> check(runner.run(RunRequest.python("print(1)")))),
                    new Case("sandbox.exec (open session)", () -> check(session.exec(Execution.python("print(1)")))),
                    // without the per-sandbox file system and cgroups (what a JVM that is not root gets)
                    new Case("run, kernelLimits(false)", () -> check(plain.run(RunRequest.python("print(1)")))),
                    new Case("exec, kernelLimits(false)", () -> check(plainSession.exec(Execution.python("print(1)")))));
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
            System.out.printf(Locale.ROOT, "%d interleaved rounds after %d warm-up rounds; %d CPUs; load %s%n", rounds, warmup,
                    Runtime.getRuntime().availableProcessors(), loadAverage());
            System.out.printf(Locale.ROOT, "%-30s %9s %9s %9s %9s%n", "case", "median", "p10", "p90", "min");
            for (Case c : cases) {
                double[] m = c.sorted();
                System.out.printf(Locale.ROOT, "%-30s %7.1f ms %6.1f ms %6.1f ms %6.1f ms%n", c.name,
                        percentile(m, 50), percentile(m, 10), percentile(m, 90), m[0]);
            }
            double bare = percentile(cases.get(0).sorted(), 50);
            System.out.printf(Locale.ROOT, "added latency (median - bare median): run %+.1f ms, exec %+.1f ms;"
                    + " kernelLimits(false): run %+.1f ms, exec %+.1f ms%n",
                    percentile(cases.get(1).sorted(), 50) - bare, percentile(cases.get(2).sorted(), 50) - bare,
                    percentile(cases.get(3).sorted(), 50) - bare, percentile(cases.get(4).sorted(), 50) - bare);
        }
    }

    private interface Body {
        void run() throws Exception;
    }

    private static final class Case {
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
    }

    private static void bare() throws IOException, InterruptedException {
        Process p = new ProcessBuilder("/usr/bin/python3", "-c", "print(1)").redirectErrorStream(true).start();
        String out;
        try (InputStream in = p.getInputStream()) {
            out = new String(in.readAllBytes());
        }
        if (p.waitFor() != 0 || !out.equals("1\n")) {
            throw new IllegalStateException("bare python failed: " + out);
        }
    }

    private static void check(RunResult r) {
        if (!r.succeeded() || !r.stdout().equals("1\n")) {
            throw new IllegalStateException("sandboxed python failed: " + r + " " + r.stderr());
        }
    }

    private static double percentile(double[] sorted, int p) {
        if (p == 50) {
            int n = sorted.length;
            return n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
        }
        return sorted[Math.min(sorted.length - 1, (int) Math.floor(p / 100.0 * sorted.length))];
    }

    private static String loadAverage() {
        try {
            return new String(java.nio.file.Files.readAllBytes(java.nio.file.Path.of("/proc/loadavg"))).trim();
        } catch (IOException e) {
            return "?";
        }
    }
}
