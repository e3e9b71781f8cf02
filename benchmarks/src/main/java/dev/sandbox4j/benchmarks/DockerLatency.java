package dev.sandbox4j.benchmarks;

import dev.sandbox4j.api.Execution;
import dev.sandbox4j.api.RunRequest;
import dev.sandbox4j.api.RunResult;
import dev.sandbox4j.api.Sandbox;
import dev.sandbox4j.api.SandboxSpec;
import dev.sandbox4j.docker.DockerSandboxRunner;
import dev.sandbox4j.local.LocalSandboxRunner;
import java.io.IOException;
import java.io.InputStream;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;

/**
 * The Docker runner's added latency over a bare {@code /usr/bin/python3 -c 'print(1)'} on the host, beside
 * the local runner's, all from Java. Five cases run interleaved (round robin, the order rotating each
 * round) so that load changes on a shared machine hit them alike:
 * <ul>
 *   <li>bare: {@code ProcessBuilder("/usr/bin/python3", "-c", "print(1)")}, output read, exit awaited;</li>
 *   <li>docker run: {@code runner.run(RunRequest.python("print(1)"))}: container create and start, one
 *       exec (create, attached start, inspect), force removal with its volume;</li>
 *   <li>docker exec: {@code sandbox.exec(...)} on an open container: one exec;</li>
 *   <li>local run and local exec: the same on the bubblewrap runner.</li>
 * </ul>
 * The image is {@code SANDBOX4J_DOCKER_IMAGE} (default the runner's); the engine {@code DOCKER_HOST} or the
 * usual socket. Usage: {@code DockerLatency [rounds]} (default 20), after a warm-up of 5 rounds.
 */
public final class DockerLatency {
    private DockerLatency() {
    }

    public static void main(String[] args) throws Exception {
        int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 20;
        int warmup = 5;
        try (DockerSandboxRunner docker = DockerSandboxRunner.fromEnv();
             LocalSandboxRunner local = LocalSandboxRunner.create().verify()) {
            docker.verify();
            try (Sandbox dockerSession = docker.open(SandboxSpec.defaults());
                 Sandbox localSession = local.open(SandboxSpec.defaults())) {
                List<Case> cases = List.of(
                        new Case("bare python3 -c", DockerLatency::bare),
                        new Case("docker run (open+exec+close)", () -> check(docker.run(RunRequest.python("print(1)")))),
                        new Case("docker exec (open session)", () -> check(dockerSession.exec(Execution.python("print(1)")))),
                        new Case("local run (open+exec+close)", () -> check(local.run(RunRequest.python("print(1)")))),
                        new Case("local exec (open session)", () -> check(localSession.exec(Execution.python("print(1)")))));
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
                System.out.printf(Locale.ROOT, "%d interleaved rounds after %d warm-up rounds; %d CPUs; load %s; %s; %s%n", rounds,
                        warmup, Runtime.getRuntime().availableProcessors(), loadAverage(), docker.engine().orElse("?"), docker);
                System.out.printf(Locale.ROOT, "%-30s %9s %9s %9s %9s%n", "case", "median", "p10", "p90", "min");
                for (Case c : cases) {
                    double[] m = c.sorted();
                    System.out.printf(Locale.ROOT, "%-30s %7.1f ms %6.1f ms %6.1f ms %6.1f ms%n", c.name,
                            percentile(m, 50), percentile(m, 10), percentile(m, 90), m[0]);
                }
                double bare = percentile(cases.get(0).sorted(), 50);
                System.out.printf(Locale.ROOT, "added latency (median - bare median): docker run %+.1f ms, docker exec %+.1f ms;"
                        + " local run %+.1f ms, local exec %+.1f ms%n",
                        percentile(cases.get(1).sorted(), 50) - bare, percentile(cases.get(2).sorted(), 50) - bare,
                        percentile(cases.get(3).sorted(), 50) - bare, percentile(cases.get(4).sorted(), 50) - bare);
            }
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
