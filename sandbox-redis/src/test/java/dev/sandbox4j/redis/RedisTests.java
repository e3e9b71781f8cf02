package dev.sandbox4j.redis;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sandbox4j.api.SandboxSpec;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.Assumptions;

/** What the Redis tests share: the server, unique namespaces, specs labelled with their key. */
final class RedisTests {
    static final Duration GIVE_UP = Duration.ofSeconds(60);
    private static final AtomicInteger namespaces = new AtomicInteger();

    private RedisTests() {
    }

    /** Starts a redis-server, or skips the test class with the reason when there is no binary. */
    static RedisServer startServer(String... extraArgs) {
        String binary = RedisServer.binary().orElse(null);
        Assumptions.assumeTrue(binary != null, RedisServer.SKIP_REASON);
        return RedisServer.start(binary, extraArgs);
    }

    /** A namespace no other test uses, so that tests sharing a server do not see each other's permits. */
    static String namespace(String test) {
        return test + "-" + ProcessHandle.current().pid() + "-" + namespaces.incrementAndGet();
    }

    static SandboxSpec spec(String key) {
        return SandboxSpec.builder().label(CountingDriver.KEY_LABEL, key).build();
    }

    static void await(CountDownLatch latch) throws InterruptedException {
        assertTrue(latch.await(GIVE_UP.toMillis(), TimeUnit.MILLISECONDS), "latch never opened");
    }

    static void join(Thread t) throws InterruptedException {
        t.join(GIVE_UP.toMillis());
        assertFalse(t.isAlive(), t.getName() + " is stuck");
    }

    /** Waits until a new namespace's re-establishing window is over, so that the next open need not wait. */
    static void settled(RedisPermitStore store) {
        eventually("the namespace " + store.namespace() + " is settled", () -> store.reestablishing().isZero());
    }

    /**
     * Re-checks {@code condition} until it holds. Each check is a Redis round trip, so this is not a busy
     * spin of its own; the bound only turns a broken store into a failure instead of a hang.
     */
    static void eventually(String what, BooleanSupplier condition) {
        long giveUp = System.nanoTime() + GIVE_UP.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > giveUp || Thread.currentThread().isInterrupted()) {
                throw new AssertionError("never happened: " + what);
            }
            try {
                Thread.sleep(5); // every condition here stays true once met; spinning would only load the machine
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError("interrupted while waiting for: " + what);
            }
        }
    }
}
