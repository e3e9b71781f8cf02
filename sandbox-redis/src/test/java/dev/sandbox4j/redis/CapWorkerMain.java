package dev.sandbox4j.redis;

import dev.sandbox4j.compose.ConcurrencyLimiter;
import dev.sandbox4j.api.Execution;
import dev.sandbox4j.api.Sandbox;
import dev.sandbox4j.api.exception.SandboxException;
import dev.sandbox4j.api.SandboxRunner;
import dev.sandbox4j.spi.lifecycle.ManagedSandboxRunner;
import java.io.PrintStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * One replica of {@link CapsUnderFaultsTest}, in its own JVM: {@code threads} callers open sandboxes
 * for random users, run short execs for a random hold time, close, and again, until stdin closes.
 * Each hold is one line on stdout:
 * {@code HOLD <key> <opened> <closing> <firstExecStart> <lastOkExecEnd> <execs ok> <execs failed>}
 * (epoch milliseconds; the exec times are -1 when none succeeded). Uses only the limiter's plain API.
 *
 * <p>Arguments: redis URI, namespace, lease ms, per-key cap, global cap, threads, users, min hold ms,
 * max hold ms, seed.
 */
public final class CapWorkerMain {
    private CapWorkerMain() {
    }

    public static void main(String[] args) throws Exception {
        RedisPermitStore store = RedisPermitStore.builder().uri(args[0]).namespace(args[1])
                .leaseTime(Duration.ofMillis(Long.parseLong(args[2]))).timeout(Duration.ofMillis(1000))
                .pollInterval(Duration.ofMillis(50)).build();
        int perKey = Integer.parseInt(args[3]);
        int global = Integer.parseInt(args[4]);
        int threads = Integer.parseInt(args[5]);
        int users = Integer.parseInt(args[6]);
        long minHold = Long.parseLong(args[7]);
        long maxHold = Long.parseLong(args[8]);
        long seed = Long.parseLong(args[9]);
        ConcurrencyLimiter limiter = ConcurrencyLimiter.builder().perKey(perKey).global(global)
                .maxWait(Duration.ofSeconds(30)).store(store).build();
        SandboxRunner runner = ManagedSandboxRunner.builder(new CountingDriver()).maxCreateAttempts(1).build();
        PrintStream out = new PrintStream(System.out, false, "UTF-8");
        AtomicBoolean stop = new AtomicBoolean();
        List<Thread> callers = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            Random random = new Random(seed * 1000 + t);
            Thread caller = new Thread(() -> {
                while (!stop.get()) {
                    String key = "user-" + random.nextInt(users);
                    long hold = minHold + (long) (random.nextDouble() * (maxHold - minHold));
                    Sandbox sb;
                    try {
                        sb = limiter.forKey(runner, key).open(RedisTests.spec(key));
                    } catch (SandboxException e) {
                        pause(20); // fails closed (Redis away, no permit in time): try again shortly
                        continue;
                    }
                    long opened = System.currentTimeMillis();
                    long first = -1;
                    long lastOk = -1;
                    int ok = 0;
                    int failed = 0;
                    long end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(hold);
                    while (System.nanoTime() < end && failed == 0) {
                        long s = System.currentTimeMillis();
                        try {
                            sb.exec(Execution.python("x"));
                            lastOk = System.currentTimeMillis();
                            first = first < 0 ? s : first;
                            ok++;
                        } catch (RuntimeException e) {
                            failed++; // the permit was lost: the sandbox is closed under us
                        }
                        pause(5); // the work between two execs
                    }
                    long closing = System.currentTimeMillis();
                    sb.close();
                    synchronized (out) {
                        out.println("HOLD " + key + " " + opened + " " + closing + " " + first + " " + lastOk + " " + ok + " " + failed);
                        out.flush();
                    }
                }
            }, "caller-" + t);
            callers.add(caller);
            caller.start();
        }
        while (System.in.read() >= 0) {
            // until the parent closes stdin
        }
        stop.set(true);
        for (Thread c : callers) {
            c.join(60_000);
        }
        store.close();
        out.println("DONE");
        out.flush();
    }

    private static void pause(long millis) {
        try {
            Thread.sleep(millis); // workload pacing, not a wait for a result
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
