package dev.sandbox4j.benchmarks;

import dev.sandbox4j.api.Execution;
import dev.sandbox4j.api.RunResult;
import dev.sandbox4j.api.Sandbox;
import dev.sandbox4j.api.SandboxRunner;
import dev.sandbox4j.api.SandboxSpec;
import dev.sandbox4j.compose.WarmPoolRunner;
import dev.sandbox4j.daytona.DaytonaSandboxRunner;
import dev.sandbox4j.e2b.E2bSandboxRunner;
import dev.sandbox4j.emulators.daytona.DaytonaEmulator;
import dev.sandbox4j.emulators.e2b.E2bEmulator;
import dev.sandbox4j.emulators.modal.ModalEmulator;
import dev.sandbox4j.emulators.vercel.VercelEmulator;
import dev.sandbox4j.local.LocalSandboxRunner;
import dev.sandbox4j.modal.ModalSandboxRunner;
import dev.sandbox4j.vercel.VercelSandboxRunner;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.lang.management.ThreadMXBean;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Time from {@code open()} to the first exec's result, with and without a {@link WarmPoolRunner}, on
 * the local runner itself (no injected delay: its own open, a directory, a tmpfs and a cgroup as root)
 * and on each emulator (E2B, Daytona, Vercel, Modal) with an injected create delay, and the client CPU
 * per sandbox on the caller's thread and the pool's threads.
 *
 * <pre>
 * java -cp "$CP" dev.sandbox4j.benchmarks.PoolLatency [runs] [create delay ms] [case ...]   # 20, 200, all
 * </pre>
 *
 * <p>Each case times {@code open(spec)} then {@code exec(print(1))} (the result read), then closes the
 * sandbox outside the timing. With the pool (size 2), each open waits first until the pool is full
 * again, so every measured open finds a warm sandbox: the steady state of requests that arrive more
 * slowly than a refill. The cases alternate run by run. CPU is {@link ThreadMXBean} thread CPU time:
 * the caller's thread around open, exec and close, plus every {@code sandbox4j-pool-} thread's total.
 * The cases are {@code local e2b daytona vercel modal}; naming some after the delay runs only those.
 */
public final class PoolLatency {
    private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();

    private PoolLatency() {
    }

    public static void main(String[] args) throws Exception {
        int runs = args.length > 0 ? Integer.parseInt(args[0]) : 20;
        Duration delay = Duration.ofMillis(args.length > 1 ? Long.parseLong(args[1]) : 200);
        List<String> cases = args.length > 2 ? List.of(args).subList(2, args.length)
                : List.of("local", "e2b", "daytona", "vercel", "modal");
        THREADS.setThreadCpuTimeEnabled(true);
        System.out.printf(Locale.ROOT, "pool latency: %d runs per case, create delay %d ms, %d cores%n", runs,
                delay.toMillis(), Runtime.getRuntime().availableProcessors());
        if (cases.contains("local")) {
            // the runner alone: what a pool can take off the path is its own open (and close), not a provider's create
            measure("local", LocalSandboxRunner.builder().maxAddressSpaceMib(2048).build(), runs);
        }
        try (LocalSandboxRunner local = LocalSandboxRunner.builder().maxAddressSpaceMib(2048).build()) {
            if (cases.contains("e2b")) {
                try (E2bEmulator e = E2bEmulator.builder().apiKey("e2b_bench0123456789abcdef0123456789abcdef")
                        .localRunner(local).build()) {
                    e.faults().createDelay(delay);
                    measure("e2b", E2bSandboxRunner.builder().apiKey("e2b_bench0123456789abcdef0123456789abcdef")
                            .apiUrl(e.baseUrl()).sandboxUrl(e.baseUrl()).build(), runs);
                }
            }
            if (cases.contains("daytona")) {
                try (DaytonaEmulator e = DaytonaEmulator.builder(dev.sandbox4j.emulators.LocalMachines.using(local))
                        .apiKey("dtn_bench0123456789abcdef0123456789").build()) {
                    e.faults().createDelay(delay);
                    measure("daytona", DaytonaSandboxRunner.builder().apiKey(e.apiKey()).apiUrl(e.apiUrl()).target("us")
                            .statusPollInterval(Duration.ofMillis(20)).build(), runs);
                }
            }
            if (cases.contains("vercel")) {
                try (VercelEmulator e = VercelEmulator.builder().token("vercel-bench-token-0123456789").teamId("team_bench")
                        .projectId("prj_bench").machines(dev.sandbox4j.emulators.LocalMachines.using(local)).build()) {
                    e.faults().createDelay(delay);
                    measure("vercel", VercelSandboxRunner.builder().token("vercel-bench-token-0123456789").teamId("team_bench")
                            .projectId("prj_bench").baseUrl(e.baseUrl() + "/api").build(), runs);
                }
            }
            if (cases.contains("modal")) {
                try (ModalEmulator e = ModalEmulator.builder().runner(local).build()) {
                    e.faults().createDelay(delay);
                    measure("modal", ModalSandboxRunner.builder().serverUrl(e.serverUrl()).tokenId(e.tokenId())
                            .tokenSecret(e.tokenSecret()).build(), runs);
                }
            }
        }
    }

    private static void measure(String name, SandboxRunner runner, int runs) {
        SandboxSpec spec = SandboxSpec.defaults();
        List<Long> cold = new ArrayList<>();
        List<Long> warm = new ArrayList<>();
        long coldCpu = 0;
        long warmCallerCpu = 0;
        Map<Long, Long> poolThreadCpu = new HashMap<>();
        try (runner; WarmPoolRunner pool = WarmPoolRunner.builder(runner, spec).size(2).ownsDelegate(false).build()) {
            once(runner, spec); // warm-up: connections, classes, the emulator's image
            awaitFull(pool, poolThreadCpu);
            once(pool, spec);
            for (int i = 0; i < runs; i++) {
                long c0 = THREADS.getCurrentThreadCpuTime();
                cold.add(once(runner, spec));
                coldCpu += THREADS.getCurrentThreadCpuTime() - c0;
                awaitFull(pool, poolThreadCpu);
                c0 = THREADS.getCurrentThreadCpuTime();
                warm.add(once(pool, spec));
                warmCallerCpu += THREADS.getCurrentThreadCpuTime() - c0;
            }
            awaitFull(pool, poolThreadCpu);
            long poolCpu = poolThreadCpu.values().stream().mapToLong(Long::longValue).sum();
            long pooledCreates = runs + 1 + 2; // each warm run's replacement, the warm-up's, and the first fill
            System.out.printf(Locale.ROOT, "%-8s open -> first result: without pool median %4d ms (p10 %d, p90 %d),"
                            + " with pool median %4d ms (p10 %d, p90 %d); pooled / cold %.2f; handed out %d, fell back %d%n",
                    name, median(cold), pct(cold, 10), pct(cold, 90), median(warm), pct(warm, 10), pct(warm, 90),
                    (double) median(warm) / Math.max(1, median(cold)), pool.handedOut(), pool.fallbacks());
            System.out.printf(Locale.ROOT, "%-8s client CPU per sandbox: without pool %.1f ms on the caller; with pool"
                            + " %.1f ms on the caller + %.1f ms on pool threads (%d pooled creates) = %.1f ms%n",
                    name, coldCpu / 1e6 / runs, warmCallerCpu / 1e6 / runs, poolCpu / 1e6 / pooledCreates, pooledCreates,
                    warmCallerCpu / 1e6 / runs + poolCpu / 1e6 / pooledCreates);
        }
    }

    /** open, first exec's result (timed), close (not timed); returns milliseconds. */
    private static long once(SandboxRunner r, SandboxSpec spec) {
        long t0 = System.nanoTime();
        Sandbox s = r.open(spec);
        long ms;
        try {
            RunResult result = s.exec(Execution.python("print(1)"));
            ms = (System.nanoTime() - t0) / 1_000_000;
            if (!"1\n".equals(result.stdout())) {
                throw new IllegalStateException("unexpected output " + result);
            }
        } finally {
            s.close();
        }
        return ms;
    }

    /** Polls every 5 ms (a harness, not a test) until the pool is full, recording its threads' CPU meanwhile. */
    private static void awaitFull(WarmPoolRunner pool, Map<Long, Long> cpu) {
        long end = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        while (pool.idle() < 2) {
            sample(cpu);
            if (System.nanoTime() > end) {
                throw new IllegalStateException("the pool did not fill within 60 s: " + pool);
            }
            try {
                Thread.sleep(5);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted", e);
            }
        }
        sample(cpu);
    }

    private static void sample(Map<Long, Long> cpu) {
        for (ThreadInfo t : THREADS.getThreadInfo(THREADS.getAllThreadIds())) {
            if (t != null && t.getThreadName().startsWith("sandbox4j-pool-")) {
                long c = THREADS.getThreadCpuTime(t.getThreadId());
                if (c > 0) {
                    cpu.merge(t.getThreadId(), c, Math::max);
                }
            }
        }
    }

    private static long median(List<Long> xs) {
        return pct(xs, 50);
    }

    private static long pct(List<Long> xs, int p) {
        List<Long> s = new ArrayList<>(xs);
        Collections.sort(s);
        return s.get(Math.min(s.size() - 1, (int) Math.round(p / 100.0 * (s.size() - 1))));
    }
}
