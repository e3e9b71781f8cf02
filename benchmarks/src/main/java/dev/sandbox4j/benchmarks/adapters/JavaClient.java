package dev.sandbox4j.benchmarks.adapters;

import dev.sandbox4j.api.RunRequest;
import dev.sandbox4j.api.RunResult;
import dev.sandbox4j.api.SandboxRunner;
import dev.sandbox4j.daytona.DaytonaSandboxRunner;
import dev.sandbox4j.e2b.E2bSandboxRunner;
import dev.sandbox4j.modal.ModalSandboxRunner;
import dev.sandbox4j.vercel.VercelSandboxRunner;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

/**
 * One client process of the adapter benchmark: a Java adapter doing {@code runner.run(python print(1))}
 * cycles (create, one exec, teardown), driven over stdin with the same line protocol as
 * {@code benchmarks/sdk/worker.mjs}. The adapter is configured by its own {@code fromEnv()}, from the
 * same variables the official SDK reads.
 *
 * <p>Usage: {@code JavaClient <e2b|daytona|vercel|modal>}.
 */
public final class JavaClient {
    private JavaClient() {
    }

    public static void main(String[] args) throws Exception {
        PrintStream out = new PrintStream(System.out, false, StandardCharsets.UTF_8);
        try (SandboxRunner runner = runner(args.length > 0 ? args[0] : "")) {
            RunRequest request = RunRequest.python("print(1)");
            out.println("ready");
            out.flush();
            BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
            for (String line; (line = in.readLine()) != null; ) {
                String[] w = line.trim().split("\\s+");
                if (w[0].equals("batch")) {
                    out.println(batch(runner, request, Integer.parseInt(w[1]), Integer.parseInt(w[2])));
                    out.flush();
                } else if (w[0].equals("quit")) {
                    break;
                }
            }
        }
        System.exit(0);
    }

    static SandboxRunner runner(String provider) {
        return switch (provider) {
            case "e2b" -> E2bSandboxRunner.fromEnv();
            case "daytona" -> DaytonaSandboxRunner.fromEnv();
            case "vercel" -> VercelSandboxRunner.fromEnv();
            case "modal" -> ModalSandboxRunner.fromEnv();
            default -> throw new IllegalArgumentException("usage: JavaClient <e2b|daytona|vercel|modal>, was '" + provider + "'");
        };
    }

    /** Cycle threads stay for the next batch: starting threads is not a cycle's cost. */
    private static final ExecutorService POOL = Executors.newCachedThreadPool(r -> {
        Thread t = new Thread(r, "bench-client");
        t.setDaemon(true);
        return t;
    });

    /** Runs {@code cycles} cycles, {@code concurrency} at a time; answers one JSON line. */
    static String batch(SandboxRunner runner, RunRequest request, int cycles, int concurrency) throws Exception {
        List<Long> lat = Collections.synchronizedList(new ArrayList<>());
        AtomicInteger next = new AtomicInteger();
        AtomicInteger errors = new AtomicInteger();
        AtomicReference<String> firstError = new AtomicReference<>();
        long t0 = System.nanoTime();
        List<Future<?>> loops = new ArrayList<>();
        for (int i = 0; i < concurrency; i++) {
            loops.add(POOL.submit(() -> {
                while (next.getAndIncrement() < cycles) {
                    long s = System.nanoTime();
                    try {
                        RunResult r = runner.run(request);
                        if (r.exitCode().orElse(-1) != 0) {
                            throw new IllegalStateException("exit " + r.exitCode() + " " + r.status());
                        }
                        lat.add((System.nanoTime() - s) / 1000);
                    } catch (RuntimeException e) {
                        errors.incrementAndGet();
                        firstError.compareAndSet(null, e.getClass().getSimpleName() + ": " + e.getMessage());
                    }
                }
            }));
        }
        for (Future<?> f : loops) {
            f.get();
        }
        long wall = System.nanoTime() - t0;
        StringBuilder b = new StringBuilder("{\"wallNs\":").append(wall).append(",\"lat\":[");
        synchronized (lat) {
            for (int i = 0; i < lat.size(); i++) {
                b.append(i == 0 ? "" : ",").append(lat.get(i));
            }
        }
        b.append("],\"errors\":").append(errors.get()).append(",\"firstError\":");
        String fe = firstError.get();
        b.append(fe == null ? "null" : quote(fe));
        return b.append('}').toString();
    }

    private static String quote(String s) {
        StringBuilder b = new StringBuilder("\"");
        for (char c : s.toCharArray()) {
            if (c == '"' || c == '\\') {
                b.append('\\').append(c);
            } else if (c < 0x20) {
                b.append(String.format("\\u%04x", (int) c));
            } else {
                b.append(c);
            }
        }
        return b.append('"').toString();
    }
}
