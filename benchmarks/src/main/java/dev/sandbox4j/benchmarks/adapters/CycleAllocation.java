package dev.sandbox4j.benchmarks.adapters;

import dev.sandbox4j.api.RunRequest;
import dev.sandbox4j.api.RunResult;
import dev.sandbox4j.api.SandboxRunner;
import dev.sandbox4j.daytona.DaytonaSandboxRunner;
import dev.sandbox4j.emulators.daytona.DaytonaEmulator;
import dev.sandbox4j.emulators.vercel.VercelEmulator;
import dev.sandbox4j.vercel.VercelSandboxRunner;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Bytes allocated per create-run-teardown cycle by the client, for Vercel (whose command stream goes
 * through {@code StreamingJson}) and Daytona (whose exec, a session command followed over the toolbox's
 * WebSocket since issue 30, no longer does), against their emulators in instant mode in this JVM (issue 35
 * item 1: allocation in proportion to the output).
 *
 * <pre>
 * java -cp "$CP" dev.sandbox4j.benchmarks.adapters.CycleAllocation [cycles] [warm-up cycles]   # 2000, 3000
 * </pre>
 *
 * <p>After the warm-up, {@code com.sun.management.ThreadMXBean} allocated bytes: of every thread but the
 * emulator's over the measured cycles (their mean per cycle), and of the caller's thread around each
 * cycle (median, p10, p90). The stream readers run on the adapters' own threads, so the first figure is
 * the one that shows what they allocate.
 */
public final class CycleAllocation {
    private CycleAllocation() {
    }

    public static void main(String[] args) throws Exception {
        int cycles = args.length > 0 ? Integer.parseInt(args[0]) : 2000;
        int warmup = args.length > 1 ? Integer.parseInt(args[1]) : 3000;
        com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        threads.setThreadAllocatedMemoryEnabled(true);
        try (VercelEmulator e = VercelEmulator.builder().instant(true).token("vercel-bench-token-0123456789")
                .teamId("team_bench").projectId("prj_bench").build()) {
            measure("vercel", VercelSandboxRunner.builder().token("vercel-bench-token-0123456789").teamId("team_bench")
                    .projectId("prj_bench").baseUrl(e.baseUrl() + "/api").build(), cycles, warmup, threads);
        }
        try (DaytonaEmulator e = DaytonaEmulator.builder(dev.sandbox4j.emulators.InstantMachine.FACTORY).instant(true).apiKey("dtn_bench0123456789abcdef0123456789").build()) {
            measure("daytona", DaytonaSandboxRunner.builder().apiKey(e.apiKey()).apiUrl(e.apiUrl()).target("us")
                    .statusPollInterval(Duration.ofMillis(20)).build(), cycles, warmup, threads);
        }
    }

    private static void measure(String name, SandboxRunner runner, int cycles, int warmup,
            com.sun.management.ThreadMXBean threads) {
        RunRequest request = RunRequest.python("print(1)");
        List<Long> bytes = new ArrayList<>(cycles);
        long clientTotal;
        try (runner) {
            for (int i = 0; i < warmup; i++) {
                check(runner.run(request));
            }
            Map<Long, Long> before = clientThreads(threads);
            for (int i = 0; i < cycles; i++) {
                long a0 = threads.getCurrentThreadAllocatedBytes();
                RunResult r = runner.run(request);
                bytes.add(threads.getCurrentThreadAllocatedBytes() - a0);
                check(r);
            }
            Map<Long, Long> after = clientThreads(threads);
            clientTotal = 0;
            for (Map.Entry<Long, Long> e : after.entrySet()) {
                clientTotal += e.getValue() - before.getOrDefault(e.getKey(), 0L);
            }
        }
        Collections.sort(bytes);
        System.out.printf(Locale.ROOT, "%-8s allocation per cycle: all client threads %.1f KiB (mean), of it the caller's"
                        + " median %.1f KiB (p10 %.1f, p90 %.1f); %d cycles after %d%n", name, clientTotal / 1024.0 / cycles,
                bytes.get(cycles / 2) / 1024.0, bytes.get(cycles / 10) / 1024.0, bytes.get(cycles * 9 / 10) / 1024.0,
                cycles, warmup);
    }

    /**
     * Allocated bytes of every live thread but the emulator's (its HTTP server's dispatcher and workers),
     * by thread id; a client thread that ends during the batch takes its count with it (an undercount).
     */
    private static Map<Long, Long> clientThreads(com.sun.management.ThreadMXBean threads) {
        Map<Long, Long> m = new HashMap<>();
        for (ThreadInfo t : threads.getThreadInfo(threads.getAllThreadIds())) {
            if (t == null || t.getThreadName().contains("Emulator") || t.getThreadName().startsWith("HTTP-Dispatcher")) {
                continue;
            }
            long b = threads.getThreadAllocatedBytes(t.getThreadId());
            if (b >= 0) {
                m.put(t.getThreadId(), b);
            }
        }
        return m;
    }

    private static void check(RunResult r) {
        if (r.exitCode().orElse(-1) != 0) {
            throw new IllegalStateException("unexpected result " + r);
        }
    }
}
