package dev.sandbox4j.redis;

import static dev.sandbox4j.redis.RedisTests.spec;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sandbox4j.compose.ConcurrencyLimiter;
import dev.sandbox4j.api.Execution;
import dev.sandbox4j.api.RunResult;
import dev.sandbox4j.api.Sandbox;
import dev.sandbox4j.api.exception.SandboxInterruptedException;
import dev.sandbox4j.api.SandboxRunner;
import dev.sandbox4j.spi.lifecycle.ManagedSandboxRunner;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** Three limiters, each with its own store and connection as three replicas would have, on one Redis. */
class ReplicasTest {
    private static final int REPLICAS = 3;
    private static RedisServer server;

    @BeforeAll
    static void startRedis() {
        server = RedisTests.startServer();
    }

    @AfterAll
    static void stopRedis() {
        if (server != null) {
            server.close();
        }
    }

    /**
     * 50 callers spread over three replicas and a few keys. The first wave fills the caps and holds its
     * sandboxes behind a gate; every other caller must be waiting; four waiters are interrupted; then
     * the gate opens and everyone runs. Neither the provider's own count nor the store's ever exceeds a
     * cap, and no permit is left behind.
     */
    @ParameterizedTest(name = "perKey={0} global={1} keys={2}")
    @CsvSource({"2, 6, 5, 6", "2, 0, 3, 6", "1, 4, 50, 4"})
    void fiftyCallersOnThreeReplicasNeverExceedTheCaps(int perKey, int global, int keys, int firstWave) throws Exception {
        int callers = 50;
        int interrupts = 4;
        String ns = RedisTests.namespace("replicas");
        CountingDriver provider = new CountingDriver(); // the independent counter, shared by the replicas
        List<RedisPermitStore> stores = new ArrayList<>();
        List<ConcurrencyLimiter> limiters = new ArrayList<>();
        List<SandboxRunner> runners = new ArrayList<>();
        for (int r = 0; r < REPLICAS; r++) {
            RedisPermitStore store = RedisPermitStore.builder().uri(server.uri()).namespace(ns)
                    .leaseTime(Duration.ofSeconds(5)).pollInterval(Duration.ofMillis(20)).build();
            stores.add(store);
            ConcurrencyLimiter.Builder b = ConcurrencyLimiter.builder().perKey(perKey).maxWait(Duration.ofMinutes(2)).store(store);
            if (global > 0) {
                b.global(global);
            }
            limiters.add(b.build());
            runners.add(ManagedSandboxRunner.builder(provider).maxCreateAttempts(1).build());
        }
        AtomicInteger storeMaxInAll = new AtomicInteger();
        AtomicInteger storeMaxByKey = new AtomicInteger();
        Set<Integer> holders = ConcurrentHashMap.newKeySet();
        CountDownLatch start = new CountDownLatch(1);
        CountDownLatch wave = new CountDownLatch(firstWave);
        CountDownLatch gate = new CountDownLatch(1);
        List<AtomicReference<Object>> outcomes = new ArrayList<>();
        List<Thread> threads = new ArrayList<>();
        for (int i = 0; i < callers; i++) {
            int id = i;
            int replica = i % REPLICAS;
            String key = "user-" + (i % keys);
            SandboxRunner limited = limiters.get(replica).forKey(runners.get(replica), key);
            RedisPermitStore store = stores.get(replica);
            AtomicReference<Object> outcome = new AtomicReference<>();
            outcomes.add(outcome);
            Thread t = new Thread(() -> {
                try {
                    start.await();
                    try (Sandbox sb = limited.open(spec(key))) {
                        // the store's own count, as this replica sees it while holding a permit
                        storeMaxInAll.accumulateAndGet(store.inUse(), Math::max);
                        storeMaxByKey.accumulateAndGet(store.inUse(key), Math::max);
                        holders.add(id);
                        wave.countDown();
                        gate.await();
                        outcome.set(sb.exec(Execution.python("caller " + id)));
                    }
                } catch (Throwable e) {
                    outcome.set(e);
                }
            }, "caller-" + i);
            threads.add(t);
            t.start();
        }
        int interrupted = 0;
        try {
            start.countDown();
            RedisTests.await(wave);
            RedisTests.eventually("every other caller waits", () -> waiting(limiters) == callers - firstWave);
            assertEquals(firstWave, provider.open(), "the provider has the first wave open, no more");
            assertEquals(firstWave, stores.get(0).inUse(), "the store counts the first wave");
            for (int i = 0; i < callers && interrupted < interrupts; i++) {
                if (!holders.contains(i)) {
                    threads.get(i).interrupt();
                    interrupted++;
                }
            }
            int still = callers - firstWave - interrupted;
            RedisTests.eventually("the interrupted callers stop waiting", () -> waiting(limiters) == still);
            assertEquals(firstWave, stores.get(1).inUse(), "interrupted waiters took no permit");
        } finally {
            gate.countDown();
        }
        for (Thread t : threads) {
            RedisTests.join(t);
        }

        int cap = global > 0 ? global : Integer.MAX_VALUE;
        assertEquals(firstWave, provider.maxOpen(), "the caps were reached and never exceeded at the provider");
        provider.maxByKey().forEach((k, m) -> assertTrue(m.get() <= perKey, "per-key cap exceeded at the provider: " + k + "=" + m));
        assertTrue(storeMaxInAll.get() <= Math.min(cap, keys * perKey), "the store counted " + storeMaxInAll);
        assertTrue(storeMaxByKey.get() <= perKey, "the store counted " + storeMaxByKey + " for one key");
        int ok = 0;
        int stopped = 0;
        for (AtomicReference<Object> o : outcomes) {
            Object v = o.get();
            if (v instanceof RunResult r && r.stdout().startsWith("caller ")) {
                ok++;
            } else if (v instanceof SandboxInterruptedException) {
                stopped++;
            } else {
                throw new AssertionError("unexpected outcome " + v, v instanceof Throwable t ? t : null);
            }
        }
        assertEquals(interrupted, stopped);
        assertEquals(callers - interrupted, ok);
        assertEquals(callers - interrupted, provider.creates());
        assertEquals(0, provider.open());
        for (RedisPermitStore s : stores) {
            assertEquals(0, s.heldHere());
        }
        assertEquals(0, stores.get(2).inUse(), "no permit left behind in Redis");
        assertEquals(0, stores.get(2).activeKeys());
        assertEquals(0, waiting(limiters));
        stores.forEach(RedisPermitStore::close);
    }

    private static int waiting(List<ConcurrencyLimiter> limiters) {
        return limiters.stream().mapToInt(ConcurrencyLimiter::waiting).sum();
    }
}
