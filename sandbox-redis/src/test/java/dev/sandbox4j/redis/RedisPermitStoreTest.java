package dev.sandbox4j.redis;

import static dev.sandbox4j.redis.RedisTests.spec;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sandbox4j.compose.ConcurrencyLimiter;
import dev.sandbox4j.api.Execution;
import dev.sandbox4j.compose.PermitStoreException;
import dev.sandbox4j.api.RunResult;
import dev.sandbox4j.api.Sandbox;
import dev.sandbox4j.api.exception.SandboxCapacityException;
import dev.sandbox4j.api.SandboxRunner;
import dev.sandbox4j.spi.lifecycle.ManagedSandboxRunner;
import dev.sandbox4j.compose.PermitStore;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import redis.clients.jedis.RedisClient;

class RedisPermitStoreTest {
    private static RedisServer server;
    private final CountingDriver driver = new CountingDriver();
    private final SandboxRunner runner = ManagedSandboxRunner.builder(driver).maxCreateAttempts(1).build();
    private final List<RedisPermitStore> stores = new ArrayList<>();

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

    @AfterEach
    void closeStores() {
        if (!server.isRunning()) {
            server.start();
        }
        stores.forEach(RedisPermitStore::close);
        assertEquals(0, driver.open(), "every sandbox was closed");
    }

    private RedisPermitStore store(String namespace) {
        RedisPermitStore s = RedisPermitStore.builder().uri(server.uri()).namespace(namespace)
                .leaseTime(Duration.ofSeconds(3)).timeout(Duration.ofSeconds(2)).pollInterval(Duration.ofMillis(20)).build();
        stores.add(s);
        return s;
    }

    /** A limiter on {@code store}, once the namespace's first-use window is over. */
    private static ConcurrencyLimiter limiter(PermitStore store, int perKey, int global, Duration maxWait) {
        ConcurrencyLimiter limiter = ConcurrencyLimiter.builder().perKey(perKey).global(global).maxWait(maxWait).store(store).build();
        RedisTests.settled((RedisPermitStore) store);
        return limiter;
    }

    @Test
    @SuppressWarnings("try") // the permit is held by the open sandbox; the body never uses it
    void permitsAreTakenPerKeyAndGloballyTogetherAndGivenBackOnClose() {
        RedisPermitStore store = store(RedisTests.namespace("basic"));
        ConcurrencyLimiter limiter = limiter(store, 1, 2, Duration.ZERO);
        try (Sandbox alice = limiter.forKey(runner, "alice").open(spec("alice"))) {
            assertEquals(1, store.inUse("alice"));
            assertEquals(1, store.inUse());
            SandboxCapacityException e = assertThrows(SandboxCapacityException.class,
                    () -> limiter.forKey(runner, "alice").open(spec("alice")));
            assertFalse(e instanceof PermitStoreException);
            assertEquals("no sandbox permit for key 'alice' within 0 ms (1 of 1 per key in use, 1 of 2 in all)", e.getMessage());
            try (Sandbox bob = limiter.forKey(runner, "bob").open(spec("bob"))) {
                assertEquals(2, limiter.inUse());
                assertEquals(2, limiter.activeKeys());
                // carol is under her own cap but over the global one: the per-key permit is not taken either
                e = assertThrows(SandboxCapacityException.class, () -> limiter.forKey(runner, "carol").open(spec("carol")));
                assertEquals("no sandbox permit for key 'carol' within 0 ms (0 of 1 per key in use, 2 of 2 in all)", e.getMessage());
                assertEquals(0, store.inUse("carol"));
                RunResult r = bob.exec(Execution.python("hi"));
                assertEquals("hi", r.stdout());
            }
            assertEquals(1, store.inUse());
        }
        assertEquals(0, store.inUse());
        assertEquals(0, store.inUse("alice"));
        assertEquals(0, store.activeKeys());
        assertEquals(0, store.heldHere());
        assertEquals(2, driver.creates(), "refused callers never reached the provider");
    }

    @Test
    void namespacesDoNotShareCaps() {
        ConcurrencyLimiter appA = limiter(store(RedisTests.namespace("app-a")), 1, 1, Duration.ZERO);
        ConcurrencyLimiter appB = limiter(store(RedisTests.namespace("app-b")), 1, 1, Duration.ZERO);
        try (Sandbox a = appA.forKey(runner, "alice").open(spec("alice"));
             Sandbox b = appB.forKey(runner, "alice").open(spec("alice"))) {
            assertFalse(a.isClosed() || b.isClosed());
            assertEquals(1, appA.inUse());
            assertEquals(1, appB.inUse());
        }
    }

    @Test
    void aWaiterInAnotherReplicaGetsThePermitWhenTheHolderCloses() throws Exception {
        String ns = RedisTests.namespace("waiter");
        ConcurrencyLimiter one = limiter(store(ns), 1, 10, Duration.ofMinutes(1));
        ConcurrencyLimiter two = limiter(store(ns), 1, 10, Duration.ofMinutes(1));
        Sandbox held = one.forKey(runner, "alice").open(spec("alice"));
        Object[] result = new Object[1];
        Thread waiter = new Thread(() -> {
            try (Sandbox sb = two.forKey(runner, "alice").open(spec("alice"))) {
                result[0] = sb.exec(Execution.python("second")).stdout();
            } catch (Throwable t) {
                result[0] = t;
            }
        });
        waiter.start();
        RedisTests.eventually("the second replica waits", () -> two.waiting() == 1);
        assertEquals(1, driver.creates());
        held.close();
        RedisTests.join(waiter);
        assertEquals("second", result[0]);
        assertEquals(0, one.inUse());
    }

    @Test
    void aRenewedLeaseOutlivesItsLeaseTime() {
        String ns = RedisTests.namespace("renew");
        RedisPermitStore store = store(ns);
        ConcurrencyLimiter holder = limiter(store, 1, 10, Duration.ZERO);
        // another replica waits three lease times for alice's permit, and must not get it
        ConcurrencyLimiter other = limiter(store(ns), 1, 10, store.leaseTime().multipliedBy(3));
        try (Sandbox held = holder.forKey(runner, "alice").open(spec("alice"))) {
            assertThrows(SandboxCapacityException.class, () -> other.forKey(runner, "alice").open(spec("alice")));
            assertEquals(1, store.inUse("alice"));
            assertFalse(held.isClosed());
        }
        other.forKey(runner, "alice").open(spec("alice")).close();
    }

    @Test
    void redisStoppedMidRunFailsClosedAndARestartRecovers() {
        String ns = RedisTests.namespace("outage");
        RedisPermitStore store = store(ns);
        ConcurrencyLimiter limiter = limiter(store, 2, 10, Duration.ofSeconds(10));
        Sandbox before = limiter.forKey(runner, "alice").open(spec("alice"));
        assertEquals(1, store.inUse());

        server.stop();
        PermitStoreException e = assertThrows(PermitStoreException.class,
                () -> limiter.forKey(runner, "alice").open(spec("alice")));
        assertTrue(e.isRetriable());
        assertFalse(e.codeMayHaveRun());
        assertEquals("redis", e.provider());
        assertTrue(e.getMessage().startsWith("no sandbox permit for key 'alice': the Redis permit store at "
                + "redis://127.0.0.1:" + server.port() + " did not answer"), e.getMessage());
        assertEquals(1, driver.creates(), "no permit, no sandbox");
        assertEquals(1, driver.open());
        assertThrows(PermitStoreException.class, limiter::inUse);
        // the open sandbox still works and closes without an error; its lease cannot be given back now
        assertEquals("still", before.exec(Execution.python("still")).stdout());
        Sandbox during = null;
        try {
            during = limiter.forKey(runner, "bob").open(spec("bob"));
        } catch (PermitStoreException expected) {
            // fail closed for every key
        }
        assertEquals(null, during);

        server.start(); // empty: no persistence, as after a crash
        try (Sandbox after = limiter.forKey(runner, "bob").open(spec("bob"))) {
            assertFalse(after.isClosed());
            // the sandbox opened before the outage is still open: the renewal puts its lease back
            RedisTests.eventually("the renewal restores the open sandbox's lease", () -> store.inUse("alice") == 1);
            assertEquals(2, store.inUse());
        }
        before.close();
        assertEquals(0, store.inUse());
        assertEquals(0, store.heldHere());
        assertEquals(2, driver.creates());
    }

    @Test
    void aClientGivenByTheApplicationIsUsedAndNotClosed() {
        try (RedisClient client = RedisClient.create(server.uri())) {
            RedisPermitStore store = RedisPermitStore.builder().client(client).namespace(RedisTests.namespace("client"))
                    .leaseTime(Duration.ofSeconds(1)).build();
            ConcurrencyLimiter limiter = limiter(store, 1, 1, Duration.ZERO);
            limiter.forKey(runner, "alice").open(spec("alice")).close();
            store.close();
            assertEquals("PONG", client.ping());
        }
    }

    @Test
    void builderRefusesNonsense() {
        assertThrows(IllegalStateException.class, () -> RedisPermitStore.builder().build());
        assertThrows(IllegalArgumentException.class, () -> RedisPermitStore.builder().namespace("a b"));
        assertThrows(IllegalArgumentException.class, () -> RedisPermitStore.builder().namespace("{x}"));
        assertThrows(IllegalArgumentException.class, () -> RedisPermitStore.builder().namespace(""));
        assertThrows(IllegalArgumentException.class, () -> RedisPermitStore.builder().uri("http://x"));
        assertThrows(IllegalArgumentException.class, () -> RedisPermitStore.builder().leaseTime(Duration.ofMillis(10)));
        assertThrows(IllegalArgumentException.class, () -> RedisPermitStore.builder().pollInterval(Duration.ZERO));
        assertThrows(IllegalArgumentException.class, () -> RedisPermitStore.builder().timeout(Duration.ZERO));
        // Jedis counts whole milliseconds and reads 0 as "no timeout": half a millisecond would become none
        assertThrows(IllegalArgumentException.class, () -> RedisPermitStore.builder().timeout(Duration.ofNanos(500_000)));
        RedisPermitStore.builder().timeout(Duration.ofMillis(1));
        RedisPermitStore s = RedisPermitStore.builder().uri("redis://:secret@127.0.0.1:1/2").namespace("n").build();
        assertFalse(s.toString().contains("secret"), s.toString());
        s.close();
        assertThrows(IllegalStateException.class, s::inUse);
    }
}
