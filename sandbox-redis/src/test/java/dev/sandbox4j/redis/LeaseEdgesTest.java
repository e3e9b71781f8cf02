package dev.sandbox4j.redis;

import static dev.sandbox4j.redis.RedisTests.spec;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sandbox4j.compose.ConcurrencyLimiter;
import dev.sandbox4j.api.Execution;
import dev.sandbox4j.compose.PermitLoss;
import dev.sandbox4j.compose.PermitLostException;
import dev.sandbox4j.compose.PermitStoreException;
import dev.sandbox4j.api.Sandbox;
import dev.sandbox4j.api.exception.SandboxCapacityException;
import dev.sandbox4j.api.SandboxRunner;
import dev.sandbox4j.spi.lifecycle.ManagedSandboxRunner;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import redis.clients.jedis.RedisClient;

/**
 * The edges of a lease: lost while its holder was away, Redis emptied or restarted under holders, and
 * replicas that disagree on the namespace's configuration. Two stores on one namespace are two replicas.
 */
class LeaseEdgesTest {
    private static final Duration LEASE = Duration.ofMillis(1200);
    /**
     * For the tests where another replica must take the caps before the holder's next renewal: a
     * renewal every 2 s, and the lease dropped just after one ({@link #dropEveryLeaseAfterARenewal}),
     * leaves the other replica 2 s (not 0-400 ms) however loaded the machine is.
     */
    private static final Duration SLOW_LEASE = Duration.ofSeconds(6);
    private static RedisServer server;
    private final CountingDriver provider = new CountingDriver();
    private final SandboxRunner runner = ManagedSandboxRunner.builder(provider).maxCreateAttempts(1).build();
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
    }

    private RedisPermitStore store(String ns, Duration lease) {
        RedisPermitStore s = RedisPermitStore.builder().uri(server.uri()).namespace(ns).leaseTime(lease)
                .timeout(Duration.ofSeconds(2)).pollInterval(Duration.ofMillis(50)).build();
        stores.add(s);
        return s;
    }

    private static ConcurrencyLimiter limiter(RedisPermitStore store, int perKey, int global, Duration maxWait,
                                              List<PermitLoss> losses) {
        ConcurrencyLimiter l = ConcurrencyLimiter.builder().perKey(perKey).global(global).maxWait(maxWait).store(store)
                .onPermitLost(losses::add).build();
        RedisTests.settled(store);
        return l;
    }

    /** What a lease expiring while its holder is stopped looks like in Redis: its entries are gone. */
    private static void dropEveryLease(String ns) {
        try (RedisClient raw = RedisClient.create(server.uri())) {
            raw.del("sandbox4j:{" + ns + "}:global");
            for (String k : raw.keys("sandbox4j:{" + ns + "}:key:*")) {
                raw.del(k);
            }
        }
    }

    /**
     * {@link #dropEveryLease} just after the store renewed its leases (the global set's scores, expiries
     * on the server's clock, moved), so the next renewal is a third of a lease time away.
     */
    private static void dropEveryLeaseAfterARenewal(String ns) {
        String global = "sandbox4j:{" + ns + "}:global";
        try (RedisClient raw = RedisClient.create(server.uri())) {
            List<String> before = raw.zrangeWithScores(global, 0, -1).toString().lines().toList();
            RedisTests.eventually("the holder renews its lease",
                    () -> !raw.zrangeWithScores(global, 0, -1).toString().lines().toList().equals(before));
        }
        dropEveryLease(ns);
    }

    @Test
    void aLeaseGoneWhileTheCapsAreFullIsNotPutBackItsSandboxIsClosedAndBothCapsAreReported() {
        String ns = RedisTests.namespace("lost");
        List<PermitLoss> lossesA = new CopyOnWriteArrayList<>();
        RedisPermitStore a = store(ns, SLOW_LEASE);
        ConcurrencyLimiter replicaA = limiter(a, 1, 2, Duration.ZERO, lossesA);
        Sandbox paused = replicaA.forKey(runner, "alice").open(spec("alice"));
        dropEveryLeaseAfterARenewal(ns);
        // meanwhile another replica takes alice's permit and the last global one
        RedisPermitStore b = store(ns, SLOW_LEASE);
        ConcurrencyLimiter replicaB = limiter(b, 1, 2, Duration.ZERO, new CopyOnWriteArrayList<>());
        Sandbox taken = replicaB.forKey(runner, "alice").open(spec("alice"));
        Sandbox bob = replicaB.forKey(runner, "bob").open(spec("bob"));

        RedisTests.eventually("replica A learns its lease is lost", () -> lossesA.size() == 1);
        assertTrue(paused.isClosed(), "the sandbox whose permit was lost is closed");
        PermitLoss loss = lossesA.get(0);
        assertEquals(PermitLoss.Reason.TAKEN, loss.reason());
        assertTrue(loss.perKeyExceeded(), loss.toString());
        assertTrue(loss.globalExceeded(), "the global cap is reported too: " + loss);
        assertEquals(1, replicaA.permitsLost());
        assertEquals(1, b.inUse("alice"), "the lost lease was not added back over alice's cap");
        assertEquals(2, b.inUse(), "nor over the global cap");
        assertEquals(1, provider.open("alice"));
        PermitLostException e = assertThrows(PermitLostException.class, () -> paused.exec(Execution.python("x")));
        assertFalse(e.codeMayHaveRun());
        taken.close();
        bob.close();
        assertEquals(0, b.inUse());
    }

    @Test
    void aBreachOfTheGlobalCapAloneIsReported() {
        String ns = RedisTests.namespace("lost-global");
        List<PermitLoss> lossesA = new CopyOnWriteArrayList<>();
        RedisPermitStore a = store(ns, SLOW_LEASE);
        ConcurrencyLimiter replicaA = limiter(a, 2, 2, Duration.ZERO, lossesA);
        Sandbox paused = replicaA.forKey(runner, "alice").open(spec("alice"));
        dropEveryLeaseAfterARenewal(ns);
        RedisPermitStore b = store(ns, SLOW_LEASE);
        ConcurrencyLimiter replicaB = limiter(b, 2, 2, Duration.ZERO, new CopyOnWriteArrayList<>());
        Sandbox bob1 = replicaB.forKey(runner, "bob").open(spec("bob"));
        Sandbox bob2 = replicaB.forKey(runner, "bob").open(spec("bob"));
        RedisTests.eventually("replica A learns its lease is lost", () -> lossesA.size() == 1);
        PermitLoss loss = lossesA.get(0);
        assertFalse(loss.perKeyExceeded(), loss.toString());
        assertTrue(loss.globalExceeded(), loss.toString());
        assertTrue(paused.isClosed());
        assertEquals(2, b.inUse());
        bob1.close();
        bob2.close();
    }

    @Test
    void aLeaseGoneWithRoomUnderTheCapsIsReEstablished() {
        String ns = RedisTests.namespace("regain");
        List<PermitLoss> losses = new CopyOnWriteArrayList<>();
        RedisPermitStore a = store(ns, LEASE);
        ConcurrencyLimiter replicaA = limiter(a, 1, 2, Duration.ZERO, losses);
        try (Sandbox sb = replicaA.forKey(runner, "alice").open(spec("alice"))) {
            dropEveryLease(ns);
            RedisTests.eventually("the renewal adds the lease back", () -> a.inUse("alice") == 1);
            assertEquals(List.of(), losses);
            assertEquals("still", sb.exec(Execution.python("still")).stdout());
        }
        assertEquals(0, a.inUse());
    }

    /** FLUSHALL and an empty restart: no new permit until the sandboxes still open have re-established theirs. */
    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"flushall", "restart"})
    void redisEmptiedUnderHoldersFailsClosedUntilTheyReEstablish(String how) {
        String ns = RedisTests.namespace("emptied-" + how);
        RedisPermitStore a = store(ns, LEASE);
        ConcurrencyLimiter replicaA = limiter(a, 2, 3, Duration.ZERO, new CopyOnWriteArrayList<>());
        Sandbox one = replicaA.forKey(runner, "alice").open(spec("alice"));
        Sandbox two = replicaA.forKey(runner, "alice").open(spec("alice"));
        RedisPermitStore b = store(ns, LEASE);
        ConcurrencyLimiter replicaB = limiter(b, 2, 3, Duration.ZERO, new CopyOnWriteArrayList<>());
        if (how.equals("flushall")) {
            try (RedisClient raw = RedisClient.create(server.uri())) {
                raw.flushAll();
            }
        } else {
            server.stop();
            server.start();
        }
        // the first to touch the namespace after it was emptied: another replica, for alice
        SandboxCapacityException e = assertThrows(SandboxCapacityException.class,
                () -> replicaB.forKey(runner, "alice").open(spec("alice")));
        assertFalse(e instanceof PermitStoreException, e.toString());
        assertTrue(e.getMessage().contains("re-establish"), e.getMessage());
        assertEquals(2, provider.open("alice"), "alice never had more than her 2");
        RedisTests.eventually("the holder re-establishes its two leases", () -> b.inUse("alice") == 2);
        assertThrows(SandboxCapacityException.class, () -> replicaB.forKey(runner, "alice").open(spec("alice")));
        // once the window is over, within the caps, others get permits again
        RedisTests.settled(b);
        try (Sandbox bob = replicaB.forKey(runner, "bob").open(spec("bob"))) {
            assertEquals(3, b.inUse());
            assertThrows(SandboxCapacityException.class, () -> replicaB.forKey(runner, "carol").open(spec("carol")));
        }
        assertEquals(2, provider.maxOpen("alice"));
        assertTrue(provider.maxOpen() <= 3, "max open " + provider.maxOpen());
        assertEquals("ok", one.exec(Execution.python("ok")).stdout(), "the holders were never cut off");
        one.close();
        two.close();
        assertEquals(0, b.inUse());
    }

    @Test
    void replicasThatDisagreeOnTheNamespacesConfigurationFailAtStartNamingBothValues() {
        String ns = RedisTests.namespace("config");
        ConcurrencyLimiter.builder().perKey(2).global(6).store(store(ns, Duration.ofSeconds(3))).build();
        dev.sandbox4j.api.exception.SandboxConfigurationException caps = assertThrows(dev.sandbox4j.api.exception.SandboxConfigurationException.class,
                () -> ConcurrencyLimiter.builder().perKey(4).global(6).store(store(ns, Duration.ofSeconds(3))).build());
        assertTrue(caps.getMessage().contains("perKey=2, global=6, leaseTime=3000 ms"), caps.getMessage());
        assertTrue(caps.getMessage().contains("perKey=4, global=6, leaseTime=3000 ms"), caps.getMessage());
        dev.sandbox4j.api.exception.SandboxConfigurationException lease = assertThrows(dev.sandbox4j.api.exception.SandboxConfigurationException.class,
                () -> ConcurrencyLimiter.builder().perKey(2).global(6).store(store(ns, Duration.ofMillis(300))).build());
        assertTrue(lease.getMessage().contains("leaseTime=3000 ms") && lease.getMessage().contains("leaseTime=300 ms"),
                lease.getMessage());
        dev.sandbox4j.api.exception.SandboxConfigurationException none = assertThrows(dev.sandbox4j.api.exception.SandboxConfigurationException.class,
                () -> ConcurrencyLimiter.builder().perKey(2).store(store(ns, Duration.ofSeconds(3))).build());
        assertTrue(none.getMessage().contains("global=none"), none.getMessage());
        assertFalse(none.isRetriable());
        // the same configuration is welcome
        ConcurrencyLimiter.builder().perKey(2).global(6).store(store(ns, Duration.ofSeconds(3))).build();
    }

    @Test
    void aDetachedSandboxKeepsItsPermitAndAnotherReplicaTakesItOverOnAttach() {
        String ns = RedisTests.namespace("detach");
        RedisPermitStore a = store(ns, LEASE);
        RedisPermitStore b = store(ns, LEASE);
        ConcurrencyLimiter replicaA = limiter(a, 1, 1, Duration.ZERO, new CopyOnWriteArrayList<>());
        ConcurrencyLimiter replicaB = limiter(b, 1, 1, Duration.ZERO, new CopyOnWriteArrayList<>());
        Sandbox sb = replicaA.forKey(runner, "alice").open(spec("alice"));
        String id = sb.id();
        sb.detach();
        assertEquals(0, a.heldHere(), "replica A holds nothing now");
        // past several lease times nobody renews it, and it still counts: its lifetime is the bound
        RedisTests.eventually("a lease time passes", () -> {
            assertThrows(SandboxCapacityException.class, () -> replicaB.forKey(runner, "bob").open(spec("bob")));
            return provider.creates() == 1 && System.nanoTime() > 0 && b.inUse() == 1 && a.redisCalls() > 0
                    && waitedALease(a);
        });
        try (Sandbox attached = replicaB.forKey(runner, "alice").attach(id, spec("alice"))) {
            assertEquals(1, b.inUse(), "the attach took the detached sandbox's permit over, no second one");
            assertEquals(1, b.heldHere());
            assertEquals("again", attached.exec(Execution.python("again")).stdout());
        }
        assertEquals(0, b.inUse());
        assertEquals(0, provider.open());
    }

    private long detachStarted;

    /** True once a lease time has passed since the first call (checked, not slept). */
    private boolean waitedALease(RedisPermitStore s) {
        if (detachStarted == 0) {
            detachStarted = System.nanoTime();
        }
        return System.nanoTime() - detachStarted > s.leaseTime().multipliedBy(2).toNanos();
    }
}
