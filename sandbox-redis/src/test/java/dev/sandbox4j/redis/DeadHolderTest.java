package dev.sandbox4j.redis;

import static dev.sandbox4j.redis.RedisTests.spec;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sandbox4j.compose.ConcurrencyLimiter;
import dev.sandbox4j.api.Sandbox;
import dev.sandbox4j.api.exception.SandboxCapacityException;
import dev.sandbox4j.api.SandboxRunner;
import dev.sandbox4j.spi.lifecycle.ManagedSandboxRunner;
import java.io.BufferedReader;
import java.io.File;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** A replica killed with SIGKILL while it holds permits: they come back within the lease time. */
class DeadHolderTest {
    private static final Duration LEASE = Duration.ofSeconds(3);
    // generous: two shared cores, a JVM start and a poll interval on top of the lease time
    private static final Duration MARGIN = Duration.ofSeconds(10);
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

    @Test
    void aHolderKilledWithoutReleasingFreesItsPermitsWithinTheLeaseTime() throws Exception {
        String ns = RedisTests.namespace("dead");
        String java = System.getProperty("java.home") + File.separator + "bin" + File.separator + "java";
        String classpath = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
        Process child = new ProcessBuilder(java, "-cp", classpath, HolderMain.class.getName(),
                server.uri(), ns, Long.toString(LEASE.toMillis()), "victim", "2")
                .redirectError(ProcessBuilder.Redirect.INHERIT).start();
        try (RedisPermitStore store = RedisPermitStore.builder().uri(server.uri()).namespace(ns)
                .leaseTime(LEASE).pollInterval(Duration.ofMillis(20)).build()) {
            BufferedReader out = new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8));
            String said = CompletableFuture.supplyAsync(() -> {
                try {
                    return out.readLine();
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            }).get(RedisTests.GIVE_UP.toSeconds(), TimeUnit.SECONDS);
            assertEquals("held 2", said);
            assertEquals(2, store.inUse("victim"));

            CountingDriver provider = new CountingDriver();
            SandboxRunner runner = ManagedSandboxRunner.of(provider);
            // while the child lives it renews: a caller waiting longer than a lease time gets nothing
            ConcurrencyLimiter impatient = ConcurrencyLimiter.builder().perKey(2).global(2)
                    .maxWait(LEASE.plus(LEASE.dividedBy(2))).store(store).build();
            assertThrows(SandboxCapacityException.class, () -> impatient.forKey(runner, "victim").open(spec("victim")));
            assertEquals(2, store.inUse(), "the live holder's permits were renewed past their lease time");

            child.destroyForcibly(); // SIGKILL: no shutdown hook, no release
            assertTrue(child.waitFor(RedisTests.GIVE_UP.toSeconds(), TimeUnit.SECONDS));
            long killed = System.nanoTime();
            assertEquals(137, child.exitValue(), "killed by SIGKILL");

            ConcurrencyLimiter limiter = ConcurrencyLimiter.builder().perKey(2).global(2)
                    .maxWait(LEASE.plus(MARGIN)).store(store).build();
            try (Sandbox first = limiter.forKey(runner, "victim").open(spec("victim"));
                 Sandbox second = limiter.forKey(runner, "victim").open(spec("victim"))) {
                long backMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - killed);
                System.out.println("dead holder's 2 permits back " + backMillis + " ms after SIGKILL (lease time "
                        + LEASE.toMillis() + " ms)");
                assertTrue(backMillis <= LEASE.plus(MARGIN).toMillis(), "back after " + backMillis + " ms");
                assertEquals(List.of(false, false), List.of(first.isClosed(), second.isClosed()));
                assertEquals(2, store.inUse("victim"));
            }
            assertEquals(0, store.inUse());
        } finally {
            child.destroyForcibly();
        }
    }
}
