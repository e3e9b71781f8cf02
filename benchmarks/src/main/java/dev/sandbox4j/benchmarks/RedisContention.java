package dev.sandbox4j.benchmarks;

import dev.sandbox4j.compose.ConcurrencyLimiter;
import dev.sandbox4j.api.Execution;
import dev.sandbox4j.api.Sandbox;
import dev.sandbox4j.api.exception.SandboxException;
import dev.sandbox4j.api.SandboxRunner;
import dev.sandbox4j.api.SandboxSpec;
import dev.sandbox4j.spi.CreateRequest;
import dev.sandbox4j.spi.ExecOutcome;
import dev.sandbox4j.spi.lifecycle.ManagedSandboxRunner;
import dev.sandbox4j.spi.OutputSink;
import dev.sandbox4j.spi.SandboxDriver;
import dev.sandbox4j.spi.SandboxHandle;
import dev.sandbox4j.policy.Capabilities;
import dev.sandbox4j.policy.Language;
import dev.sandbox4j.redis.RedisPermitStore;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import redis.clients.jedis.RedisClient;

/**
 * Redis calls per acquisition under contention: {@code replicas} stores (each its own connection pool,
 * as replicas would have) with {@code callers} threads each, small caps, many users, holds of 10 to
 * 200 ms, until {@code acquisitions} sandboxes were opened. The round trips are counted by the
 * server ({@code INFO commandstats} without the commands the scripts run inside Redis), so the figure
 * includes renewals, releases, subscriptions, connection set-up and the waiters' retries, whatever the
 * client's version.
 *
 * <p>Usage: {@code RedisContention redis://host:port [acquisitions] [replicas] [callers]} (defaults 2000,
 * 4, 8; caps 2 per user and 6 in all, 20 users). Uses a fresh namespace, which waits out the first-use
 * window before timing starts.
 */
public final class RedisContention {
    private RedisContention() {
    }

    public static void main(String[] args) throws Exception {
        String uri = args[0];
        int acquisitions = args.length > 1 ? Integer.parseInt(args[1]) : 2000;
        int replicas = args.length > 2 ? Integer.parseInt(args[2]) : 4;
        int callers = args.length > 3 ? Integer.parseInt(args[3]) : 8;
        int users = 20;
        String ns = "contention-" + ProcessHandle.current().pid();
        List<RedisPermitStore> stores = new ArrayList<>();
        List<ConcurrencyLimiter> limiters = new ArrayList<>();
        for (int r = 0; r < replicas; r++) {
            RedisPermitStore s = RedisPermitStore.builder().uri(uri).namespace(ns).build();
            stores.add(s);
            limiters.add(ConcurrencyLimiter.builder().perKey(2).global(6).maxWait(Duration.ofMinutes(2)).store(s).build());
        }
        SandboxRunner runner = ManagedSandboxRunner.of(new MemoryDriver());
        // the first open in a new namespace may wait for its first-use window: not part of the figure
        limiters.get(0).forKey(runner, "warm").open(SandboxSpec.defaults()).close();
        try (RedisClient stats = RedisClient.create(uri)) {
            long before = commands(stats);
            AtomicInteger left = new AtomicInteger(acquisitions);
            AtomicInteger errors = new AtomicInteger();
            List<Thread> threads = new ArrayList<>();
            long t0 = System.nanoTime();
            for (int r = 0; r < replicas; r++) {
                for (int c = 0; c < callers; c++) {
                    ConcurrencyLimiter limiter = limiters.get(r);
                    Random random = new Random(r * 100L + c);
                    Thread t = new Thread(() -> {
                        while (left.getAndDecrement() > 0) {
                            String user = "user-" + random.nextInt(users);
                            try (Sandbox sb = limiter.forKey(runner, user).open(SandboxSpec.defaults())) {
                                sb.exec(Execution.python("x"));
                                Thread.sleep(10 + random.nextInt(191)); // the hold
                            } catch (SandboxException e) {
                                errors.incrementAndGet();
                            } catch (InterruptedException e) {
                                return;
                            }
                        }
                    });
                    threads.add(t);
                    t.start();
                }
            }
            for (Thread t : threads) {
                t.join();
            }
            double seconds = (System.nanoTime() - t0) / 1e9;
            long after = commands(stats);
            System.out.printf(Locale.ROOT, "%d acquisitions, %d replicas x %d callers, caps 2/6, %d users: %.1f acquisitions/s,"
                            + " %d errors, %d Redis commands = %.2f per acquisition (load %s)%n", acquisitions, replicas, callers, users,
                    acquisitions / seconds, errors.get(), after - before, (after - before) / (double) acquisitions, load());
        }
        stores.forEach(s -> System.out.println("  " + s + ": " + s.redisCalls() + " calls sent"));
        stores.forEach(RedisPermitStore::close);
    }

    // what the scripts call inside Redis: not round trips of their own
    private static final java.util.Set<String> IN_SCRIPTS = java.util.Set.of("time", "zadd", "zrem", "zcard", "zcount", "zscore",
            "zrange", "zremrangebyscore", "hmget", "hset", "hget", "set", "exists", "pexpire", "pexpireat", "publish", "del");

    /** Round trips clients made: every command in INFO commandstats but INFO and what scripts call inside. */
    private static long commands(RedisClient client) {
        long n = 0;
        for (String line : client.info("commandstats").split("\r?\n")) {
            if (!line.startsWith("cmdstat_")) {
                continue;
            }
            String name = line.substring("cmdstat_".length(), line.indexOf(':'));
            if (name.equals("info") || IN_SCRIPTS.contains(name)) {
                continue;
            }
            int i = line.indexOf("calls=");
            n += Long.parseLong(line.substring(i + 6, line.indexOf(',', i)));
        }
        return n;
    }

    private static String load() {
        try {
            return new String(java.nio.file.Files.readAllBytes(java.nio.file.Path.of("/proc/loadavg"))).trim();
        } catch (java.io.IOException e) {
            return "?";
        }
    }

    /** Sandboxes that exist only in memory. */
    private static final class MemoryDriver implements SandboxDriver<MemoryDriver.Handle> {
        record Handle(String id) implements SandboxHandle {
        }

        private final AtomicInteger ids = new AtomicInteger();

        @Override
        public String provider() {
            return "memory";
        }

        @Override
        public Capabilities capabilities() {
            return Capabilities.builder("memory").egress(Capabilities.Egress.values())
                    .limits(Capabilities.Limit.values()).features(Capabilities.Feature.values())
                    .languages(Language.values()).build();
        }

        @Override
        public Handle create(CreateRequest request) {
            return new Handle("m-" + ids.incrementAndGet());
        }

        @Override
        public ExecOutcome exec(Handle sandbox, Execution execution, OutputSink sink) {
            return ExecOutcome.exited(0);
        }

        @Override
        public boolean destroy(Handle sandbox) {
            return true;
        }
    }
}
