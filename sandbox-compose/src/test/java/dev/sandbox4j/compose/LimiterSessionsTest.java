package dev.sandbox4j.compose;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sandbox4j.compose.internal.InProcessPermitStore;
import dev.sandbox4j.spi.lifecycle.ManagedSandboxRunner;
import dev.sandbox4j.compose.PermitStore;
import dev.sandbox4j.spi.lifecycle.ScriptedDriver;
import dev.sandbox4j.policy.Limits;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import dev.sandbox4j.api.Execution;
import dev.sandbox4j.api.Sandbox;
import dev.sandbox4j.api.SandboxRunner;
import dev.sandbox4j.api.SandboxSpec;
import dev.sandbox4j.api.Teardown;
import dev.sandbox4j.api.exception.SandboxCapacityException;

/**
 * The limiter with sessions that outlive a request (detach, attach) and with a store that loses a
 * lease: the contract every permit store gets from {@link ConcurrencyLimiter}.
 */
class LimiterSessionsTest {
    private static final Duration GIVE_UP = Duration.ofSeconds(30);
    private final ScriptedDriver driver = new ScriptedDriver("p");
    private final SandboxRunner runner = ManagedSandboxRunner.builder(driver)
            .maxCreateAttempts(1).retryBaseDelay(Duration.ofMillis(1)).build();

    @AfterEach
    void nothingLeaked() {
        assertEquals(List.of(), driver.live());
    }

    private static void eventually(String what, BooleanSupplier condition) {
        long giveUp = System.nanoTime() + GIVE_UP.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > giveUp) {
                throw new AssertionError("never happened: " + what);
            }
            Thread.yield();
        }
    }

    @Test
    void aDetachedSandboxKeepsItsPermitAndAnAttachTakesItOver() {
        ConcurrencyLimiter limiter = ConcurrencyLimiter.builder().perKey(1).global(1).maxWait(Duration.ZERO).build();
        SandboxRunner alice = limiter.forKey(runner, "alice");
        SandboxSpec spec = SandboxSpec.defaults();
        Sandbox first = alice.open(spec);
        String id = first.id();
        first.detach();
        assertEquals(Teardown.DETACHED, first.teardown());
        assertEquals(1, limiter.inUse("alice"), "the detached sandbox still counts");
        assertThrows(SandboxCapacityException.class, () -> limiter.forKey(runner, "bob").open(spec));
        try (Sandbox again = alice.attach(id, spec)) {
            assertEquals(1, limiter.inUse(), "the attach took over the detached sandbox's permit, no second one");
            assertEquals("hi", again.exec(Execution.python("hi")).stdout());
            assertThrows(SandboxCapacityException.class, () -> alice.open(spec));
        }
        assertEquals(0, limiter.inUse(), "closing the attached sandbox gave the permit back");
        assertEquals(0, limiter.activeKeys());
    }

    @Test
    void anAttachToASandboxWithoutAPermitCountsAgainstTheCaps() {
        SandboxSpec spec = SandboxSpec.defaults();
        Sandbox outside = runner.open(spec); // opened without the limiter: keeps no permit
        String id = outside.id();
        outside.detach();
        ConcurrencyLimiter limiter = ConcurrencyLimiter.builder().perKey(1).maxWait(Duration.ZERO).build();
        SandboxRunner alice = limiter.forKey(runner, "alice");
        try (Sandbox held = alice.open(spec)) {
            SandboxCapacityException e = assertThrows(SandboxCapacityException.class, () -> alice.attach(id, spec));
            assertTrue(e.getMessage().contains("1 of 1 per key"), e.getMessage());
            assertEquals(1, limiter.inUse());
            assertFalse(held.isClosed());
        }
        // refused for capacity, the sandbox was detached again, not destroyed: it can still be attached
        try (Sandbox attached = alice.attach(id, spec)) {
            assertEquals(1, limiter.inUse("alice"));
            assertEquals("x", attached.exec(Execution.python("x")).stdout());
        }
        assertEquals(0, limiter.inUse());
    }

    @Test
    void aDetachedSandboxsPermitEndsWithItsLifetime() {
        InProcessPermitStore store = new InProcessPermitStore();
        ConcurrencyLimiter limiter = ConcurrencyLimiter.builder().perKey(1).maxWait(GIVE_UP).store(store).build();
        SandboxSpec shortLived = SandboxSpec.builder().limits(Limits.builder().lifetime(Duration.ofMillis(300)).build()).build();
        Sandbox sb = limiter.forKey(runner, "alice").open(shortLived);
        sb.detach();
        assertEquals(1, limiter.inUse("alice"));
        // a waiter gets the permit once the lifetime is over (the provider's clock killed the sandbox by then)
        Sandbox next = limiter.forKey(runner, "alice").open(SandboxSpec.defaults());
        next.close();
        driver.expire(sb.id());
        assertEquals(0, limiter.inUse());
    }

    @Test
    void aStoreThatLosesALeaseGetsTheSandboxClosedAndTheLossReported() {
        LosingStore store = new LosingStore();
        List<PermitLoss> reported = new CopyOnWriteArrayList<>();
        ConcurrencyLimiter limiter = ConcurrencyLimiter.builder().perKey(2).global(3).maxWait(Duration.ZERO)
                .store(store).onPermitLost(reported::add).build();
        Sandbox sb = limiter.forKey(runner, "alice").open(SandboxSpec.defaults());
        assertEquals("a", sb.exec(Execution.python("a")).stdout());
        store.lose(PermitLoss.builder("alice", PermitLoss.Reason.TAKEN).held(2, 3).caps(2, 3).build());
        eventually("the sandbox is closed", sb::isClosed);
        eventually("the loss is reported", () -> reported.size() == 1);
        PermitLoss loss = reported.get(0);
        assertTrue(loss.perKeyExceeded());
        assertTrue(loss.globalExceeded(), "the global cap is reported too");
        assertEquals(1, limiter.permitsLost());
        PermitLostException e = assertThrows(PermitLostException.class, () -> sb.exec(Execution.python("b")));
        assertTrue(e.isRetriable());
        assertFalse(e.codeMayHaveRun(), "a later exec runs nothing");
        assertNotNull(e.loss());
        assertEquals(0, store.inUse(), "the lease was given back");
    }

    /** The in-process store, with a lever that loses the last lease it granted. */
    private static final class LosingStore implements PermitStore {
        private final InProcessPermitStore inner = new InProcessPermitStore();
        private final AtomicReference<Consumer<PermitLoss>> handler = new AtomicReference<>();

        @Override
        public Acquisition tryAcquire(String key, int perKey, int global) {
            Acquisition a = inner.tryAcquire(key, perKey, global);
            if (!a.isGranted()) {
                return a;
            }
            Lease lease = a.lease();
            return Acquisition.granted(new Lease() {
                @Override
                public void release() {
                    lease.release();
                }

                @Override
                public void onLost(Consumer<PermitLoss> h) {
                    handler.set(h);
                }
            });
        }

        void lose(PermitLoss loss) {
            handler.get().accept(loss);
        }

        @Override
        public long awaitRelease(Acquisition refused, long nanos) throws InterruptedException {
            return inner.awaitRelease(refused, nanos);
        }

        @Override
        public int inUse() {
            return inner.inUse();
        }

        @Override
        public int inUse(String key) {
            return inner.inUse(key);
        }

        @Override
        public int activeKeys() {
            return inner.activeKeys();
        }
    }
}
