package dev.sandbox4j.redis;

import static dev.sandbox4j.redis.RedisTests.spec;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sandbox4j.compose.ConcurrencyLimiter;
import dev.sandbox4j.compose.PermitStoreException;
import dev.sandbox4j.api.Sandbox;
import dev.sandbox4j.api.SandboxRunner;
import dev.sandbox4j.spi.lifecycle.ManagedSandboxRunner;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import redis.clients.jedis.DefaultJedisClientConfig;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.RedisClient;
import redis.clients.jedis.exceptions.JedisException;

/** A password with every awkward character, never shown; Redis stalled (DEBUG SLEEP) under open and close. */
class SecretsAndStallsTest {
    // '@', '#', ':' and '/' in one password, plus a fragment that must never be printed
    private static final String PASSWORD = "p@ss#1:/x@Zq9";
    private static RedisServer server;
    private final CountingDriver provider = new CountingDriver();
    private final SandboxRunner runner = ManagedSandboxRunner.builder(provider).maxCreateAttempts(1).build();

    @BeforeAll
    static void startRedis() {
        server = RedisTests.startServer("--requirepass", PASSWORD, "--enable-debug-command", "yes");
    }

    @AfterAll
    static void stopRedis() {
        if (server != null) {
            server.close();
        }
    }

    private static String rawUri(int port) {
        return "redis://default:" + PASSWORD + "@127.0.0.1:" + port;
    }

    private static void assertNoSecret(Throwable t) {
        StringWriter all = new StringWriter();
        t.printStackTrace(new PrintWriter(all));
        for (String piece : List.of(PASSWORD, "p@ss", "ss#1", "1:/x", "Zq9")) {
            assertFalse(all.toString().contains(piece), "the password shows in: " + all);
        }
    }

    @Test
    void aPasswordWithAtHashColonAndSlashWorksRawOrEncodedAndIsNeverShown() throws Exception {
        String encoded = "redis://default:p%40ss%231%3A%2Fx%40Zq9@127.0.0.1:" + server.port();
        for (String uri : List.of(rawUri(server.port()), encoded)) {
            RedisPermitStore store = RedisPermitStore.builder().uri(uri).namespace(RedisTests.namespace("secret"))
                    .leaseTime(Duration.ofMillis(600)).build();
            try {
                ConcurrencyLimiter limiter = ConcurrencyLimiter.builder().perKey(1).maxWait(Duration.ofSeconds(30)).store(store).build();
                limiter.forKey(runner, "alice").open(spec("alice")).close();
                assertFalse(store.toString().contains("Zq9"), store.toString());
            } finally {
                store.close();
            }
        }
        // a bad port, a bad database, a bad escape: the message says what is wrong, never the user info
        for (String bad : List.of("redis://u:" + PASSWORD + "@127.0.0.1:99999", "redis://u:" + PASSWORD + "@127.0.0.1:1/zz",
                "redis://u:" + PASSWORD + "%zz@127.0.0.1:1", "redis:/" + PASSWORD, "http://u:" + PASSWORD + "@h")) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> RedisPermitStore.builder().uri(bad));
            assertNoSecret(e);
        }
        // nothing listening: the error names the endpoint and never the password
        RedisPermitStore down = RedisPermitStore.builder().uri(rawUri(freePort())).namespace("down").timeout(Duration.ofMillis(500)).build();
        try {
            ConcurrencyLimiter limiter = ConcurrencyLimiter.builder().perKey(1).maxWait(Duration.ZERO).store(down).build();
            PermitStoreException e = assertThrows(PermitStoreException.class, () -> limiter.forKey(runner, "a").open(spec("a")));
            assertTrue(e.getMessage().contains("redis://127.0.0.1:"), e.getMessage());
            assertNoSecret(e);
        } finally {
            down.close();
        }
    }

    /**
     * DEBUG SLEEP stalls the server. open() fails closed within twice the timeout (connect and answer),
     * close() returns within the timeout, many callers at once do not queue for pooled connections, and
     * the leases the stalled server adds late (nobody holds them) are taken back soon after, not left to
     * block capacity for a lease time.
     */
    @Test
    void aStalledRedisKeepsOpenAndCloseWithinTheirBounds() throws Exception {
        Duration timeout = Duration.ofMillis(1000);
        Duration lease = Duration.ofSeconds(20);
        RedisPermitStore store = RedisPermitStore.builder().uri(rawUri(server.port())).namespace(RedisTests.namespace("stall"))
                .leaseTime(lease).timeout(timeout).pollInterval(Duration.ofMillis(100)).build();
        try {
            ConcurrencyLimiter limiter = ConcurrencyLimiter.builder().perKey(100).maxWait(Duration.ZERO).store(store).build();
            RedisTests.settled(store);
            Sandbox held = limiter.forKey(runner, "holder").open(spec("holder"));
            Thread stall = new Thread(() -> debugSleep(8));
            stall.start();
            awaitStalled();
            int callers = 24;
            List<Long> openMillis = new CopyOnWriteArrayList<>();
            List<Object> outcomes = new CopyOnWriteArrayList<>();
            List<Thread> threads = new ArrayList<>();
            for (int i = 0; i < callers; i++) {
                String key = "k" + i;
                Thread t = new Thread(() -> {
                    long t0 = System.nanoTime();
                    try {
                        outcomes.add(limiter.forKey(runner, key).open(spec(key)));
                    } catch (RuntimeException e) {
                        outcomes.add(e);
                    } finally {
                        openMillis.add(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0));
                    }
                });
                threads.add(t);
                t.start();
            }
            for (Thread t : threads) {
                RedisTests.join(t);
            }
            long t0 = System.nanoTime();
            held.close();
            long closeMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
            boolean stillStalled = stall.isAlive();
            long slowestOpen = openMillis.stream().mapToLong(Long::longValue).max().orElseThrow();
            System.out.println("during an 8 s DEBUG SLEEP with a 1 s timeout: slowest of " + callers + " open() "
                    + slowestOpen + " ms, close() " + closeMillis + " ms");
            assertTrue(stillStalled, "the stall must outlast the calls for this test to mean anything");
            for (Object o : outcomes) {
                assertTrue(o instanceof PermitStoreException, "fails closed during a stall: " + o);
            }
            // bounds: twice the timeout for open (connect, answer), the timeout for close; the rest is slack for load
            assertTrue(slowestOpen <= 2 * timeout.toMillis() + 1500, "open() took " + slowestOpen + " ms");
            assertTrue(closeMillis <= timeout.toMillis() + 1000, "close() took " + closeMillis + " ms");
            RedisTests.join(stall);
            // what the stalled server ran late is taken back well within the lease time
            long after = System.nanoTime();
            RedisTests.eventually("leases nobody holds are gone", () -> store.inUse() == 0);
            long cleanMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - after);
            System.out.println("orphan leases gone " + cleanMillis + " ms after the stall (lease " + lease.toMillis() + " ms)");
            assertTrue(cleanMillis < lease.toMillis() / 2, "orphans blocked capacity for " + cleanMillis + " ms");
            assertEquals(0, provider.open());
        } finally {
            store.close();
        }
    }

    /** A waiter on another replica gets a freed permit by the published release, not by polling. */
    @Test
    void aWaiterWakesOnAReleaseInAnotherReplicaWithoutPolling() throws Exception {
        String ns = RedisTests.namespace("wake");
        Duration poll = Duration.ofMinutes(10); // no poll can serve within this test
        RedisPermitStore one = RedisPermitStore.builder().uri(rawUri(server.port())).namespace(ns).leaseTime(Duration.ofSeconds(3))
                .pollInterval(poll).build();
        RedisPermitStore two = RedisPermitStore.builder().uri(rawUri(server.port())).namespace(ns).leaseTime(Duration.ofSeconds(3))
                .pollInterval(poll).build();
        try {
            Duration maxWait = Duration.ofSeconds(60);
            ConcurrencyLimiter a = ConcurrencyLimiter.builder().perKey(1).maxWait(maxWait).store(one).build();
            ConcurrencyLimiter b = ConcurrencyLimiter.builder().perKey(1).maxWait(maxWait).store(two).build();
            RedisTests.settled(one);
            Sandbox held = a.forKey(runner, "alice").open(spec("alice"));
            Object[] got = new Object[1];
            long[] waitedMillis = new long[1];
            Thread waiter = new Thread(() -> {
                try (Sandbox sb = b.forKey(runner, "alice").open(spec("alice"))) {
                    got[0] = sb.id();
                } catch (RuntimeException e) {
                    got[0] = e;
                }
            });
            waiter.start();
            RedisTests.eventually("the other replica waits", () -> b.waiting() == 1);
            long released = System.nanoTime();
            held.close();
            RedisTests.join(waiter);
            waitedMillis[0] = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - released);
            assertTrue(got[0] instanceof String, "got " + got[0]);
            assertTrue(waitedMillis[0] < maxWait.toMillis() / 2, "woken after " + waitedMillis[0] + " ms");
        } finally {
            one.close();
            two.close();
        }
    }

    private static Jedis raw(int socketTimeoutMillis) {
        return new Jedis(new HostAndPort("127.0.0.1", server.port()), DefaultJedisClientConfig.builder()
                .password(PASSWORD).socketTimeoutMillis(socketTimeoutMillis).connectionTimeoutMillis(socketTimeoutMillis).build());
    }

    private static void debugSleep(int seconds) {
        try (Jedis j = raw(60_000)) {
            // answers when the sleep is over
            j.sendCommand(() -> redis.clients.jedis.util.SafeEncoder.encode("DEBUG"), "SLEEP", Integer.toString(seconds));
        }
    }

    /** Waits until a PING goes unanswered for 300 ms: the server is asleep. */
    private static void awaitStalled() {
        RedisTests.eventually("the server stalls", () -> {
            try (Jedis j = raw(300)) {
                j.ping();
                return false;
            } catch (JedisException e) {
                return true;
            }
        });
    }

    private static int freePort() throws java.io.IOException {
        try (java.net.ServerSocket s = new java.net.ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }
}
