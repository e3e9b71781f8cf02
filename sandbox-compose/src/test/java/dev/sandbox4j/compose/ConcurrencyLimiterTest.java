package dev.sandbox4j.compose;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sandbox4j.compose.internal.InProcessPermitStore;
import dev.sandbox4j.spi.lifecycle.ManagedSandboxRunner;
import dev.sandbox4j.compose.PermitStore;
import dev.sandbox4j.spi.lifecycle.ScriptedDriver;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import dev.sandbox4j.api.Execution;
import dev.sandbox4j.api.RunRequest;
import dev.sandbox4j.api.RunResult;
import dev.sandbox4j.api.Sandbox;
import dev.sandbox4j.api.SandboxRunner;
import dev.sandbox4j.api.SandboxSpec;
import dev.sandbox4j.api.Teardown;
import dev.sandbox4j.api.TestErrors;
import dev.sandbox4j.api.exception.SandboxCapacityException;
import dev.sandbox4j.api.exception.SandboxException;
import dev.sandbox4j.api.exception.SandboxInterruptedException;

class ConcurrencyLimiterTest {
    private static final Duration LONG = Duration.ofMinutes(5);
    private static final Duration GIVE_UP = Duration.ofSeconds(30);
    private final ScriptedDriver driver = new ScriptedDriver("p");
    private final SandboxRunner runner = ManagedSandboxRunner.builder(driver)
            .maxCreateAttempts(1).retryBaseDelay(Duration.ofMillis(1)).build();

    @AfterEach
    void nothingLeaked() {
        assertEquals(List.of(), driver.live());
        assertFalse(Thread.interrupted(), "a test left the interrupt flag set");
    }

    private static void assertDrained(ConcurrencyLimiter limiter) {
        assertEquals(0, limiter.inUse(), "permits held");
        assertEquals(0, limiter.activeKeys(), "keys remembered");
        assertEquals(0, limiter.waiting(), "waiters");
    }

    /**
     * Waits, without sleeping, until {@code n} callers are blocked inside the limiter. The bound only
     * turns a broken limiter into a failure instead of a hang; a working one gets there at once.
     */
    private static void awaitWaiting(ConcurrencyLimiter limiter, int n) {
        long giveUp = System.nanoTime() + GIVE_UP.toNanos();
        while (limiter.waiting() != n) {
            if (System.nanoTime() > giveUp || Thread.currentThread().isInterrupted()) {
                throw new AssertionError("expected " + n + " waiters, have " + limiter.waiting()
                        + " with " + limiter.inUse() + " permits held");
            }
            Thread.yield();
        }
    }

    private static void await(CountDownLatch latch) throws InterruptedException {
        assertTrue(latch.await(GIVE_UP.toMillis(), TimeUnit.MILLISECONDS), "latch never opened");
    }

    private static void join(Thread t) throws InterruptedException {
        t.join(GIVE_UP.toMillis());
        assertFalse(t.isAlive(), t.getName() + " is stuck");
    }

    private static SandboxException status(int status) {
        return TestErrors.forStatus(SandboxException.builder("HTTP " + status).httpStatus(status));
    }

    /**
     * 50 callers over a few keys. The first wave fills the caps and holds its sandboxes behind a gate;
     * the rest must all be waiting; four waiters are interrupted; then the gate opens and everyone runs,
     * some opens and some execs failing. The caps are never exceeded and no permit is lost.
     */
    @ParameterizedTest(name = "perKey={0} global={1} keys={2}")
    @CsvSource({"2, 6, 5, 6", "2, 0, 3, 6", "3, 4, 1, 3", "1, 0, 50, 50"})
    void fiftyConcurrentCallersNeverExceedTheCapsAndLoseNoPermit(int perKey, int global, int keys, int firstWave)
            throws Exception {
        int callers = 50;
        ConcurrencyLimiter.Builder b = ConcurrencyLimiter.builder().perKey(perKey).maxWait(LONG);
        if (global > 0) {
            b.global(global);
        }
        ConcurrencyLimiter limiter = b.build();
        // the first wave opens fine; later every third create is refused (400, not retried)
        for (int i = 0; i < firstWave; i++) {
            driver.onCreate(ScriptedDriver.created());
        }
        for (int i = 0; i < callers; i++) {
            driver.onCreate(i % 3 == 0 ? ScriptedDriver.failing(status(400)) : ScriptedDriver.created());
        }
        driver.onExec((h, e, sink) -> {
            if (e.code().equals("fail")) {
                throw status(502).toBuilder().codeMayHaveRun(true).build();
            }
            return ScriptedDriver.echo(h, e, sink);
        });

        AtomicInteger open = new AtomicInteger();
        AtomicInteger maxOpen = new AtomicInteger();
        Map<String, AtomicInteger> openByKey = new ConcurrentHashMap<>();
        Map<String, AtomicInteger> maxByKey = new ConcurrentHashMap<>();
        Set<Integer> holders = ConcurrentHashMap.newKeySet();
        CountDownLatch start = new CountDownLatch(1);
        CountDownLatch wave = new CountDownLatch(firstWave);
        CountDownLatch gate = new CountDownLatch(1);
        List<AtomicReference<Object>> outcomes = new ArrayList<>();
        List<Thread> threads = new ArrayList<>();
        for (int i = 0; i < callers; i++) {
            int id = i;
            String key = "k" + (i % keys);
            SandboxRunner limited = limiter.forKey(runner, key);
            AtomicReference<Object> outcome = new AtomicReference<>();
            outcomes.add(outcome);
            Thread t = new Thread(() -> {
                try {
                    start.await();
                    try (Sandbox sb = limited.open(SandboxSpec.defaults())) {
                        int now = open.incrementAndGet();
                        maxOpen.accumulateAndGet(now, Math::max);
                        int mine = openByKey.computeIfAbsent(key, k -> new AtomicInteger()).incrementAndGet();
                        maxByKey.computeIfAbsent(key, k -> new AtomicInteger()).accumulateAndGet(mine, Math::max);
                        holders.add(id);
                        wave.countDown();
                        gate.await();
                        try {
                            outcome.set(sb.exec(Execution.python(id % 7 == 0 ? "fail" : "ok")));
                        } finally {
                            openByKey.get(key).decrementAndGet();
                            open.decrementAndGet();
                        }
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
            await(wave);
            awaitWaiting(limiter, callers - firstWave);
            assertEquals(firstWave, limiter.inUse());
            assertEquals(firstWave, open.get());
            for (int i = 0; i < callers && interrupted < 4 && callers > firstWave; i++) {
                if (!holders.contains(i)) {
                    threads.get(i).interrupt();
                    interrupted++;
                }
            }
            awaitWaiting(limiter, callers - firstWave - interrupted);
            assertEquals(firstWave, limiter.inUse(), "interrupted waiters took no permit");
        } finally {
            gate.countDown();
        }
        for (Thread t : threads) {
            join(t);
        }

        assertDrained(limiter);
        assertEquals(firstWave, maxOpen.get(), "the caps were reached");
        maxByKey.values().forEach(m -> assertTrue(m.get() <= perKey, "per-key cap exceeded: " + m));
        assertTrue(maxOpen.get() <= (global > 0 ? global : Integer.MAX_VALUE));
        int ok = 0;
        int openFailed = 0;
        int execFailed = 0;
        int stopped = 0;
        for (AtomicReference<Object> o : outcomes) {
            Object v = o.get();
            if (v instanceof RunResult) {
                ok++;
            } else if (v instanceof SandboxInterruptedException) {
                stopped++;
            } else if (v instanceof SandboxException e && e.httpStatus().orElse(0) == 400) {
                openFailed++;
            } else if (v instanceof SandboxException e && e.httpStatus().orElse(0) == 502) {
                execFailed++;
            } else {
                throw new AssertionError("unexpected outcome " + v, v instanceof Throwable t ? t : null);
            }
        }
        assertEquals(callers, ok + openFailed + execFailed + stopped);
        assertEquals(interrupted, stopped);
        assertTrue(callers == firstWave || openFailed > 0, "some opens failed");
        assertTrue(execFailed > 0, "some execs failed");
        assertEquals(driver.count("create") - openFailed, driver.count("destroy"), "every opened sandbox was torn down");
    }

    @Test
    void aCallerOverItsKeysCapGetsATypedRetriableErrorAndNoSandbox() {
        ConcurrencyLimiter limiter = ConcurrencyLimiter.builder().perKey(1).maxWait(Duration.ZERO).build();
        SandboxRunner alice = limiter.forKey(runner, "alice");
        try (Sandbox held = alice.open(SandboxSpec.defaults())) {
            assertEquals("p", held.provider());
            assertEquals(1, limiter.inUse("alice"));
            SandboxCapacityException e = assertThrows(SandboxCapacityException.class, () -> alice.open(SandboxSpec.defaults()));
            assertTrue(e.isRetriable());
            assertFalse(e.codeMayHaveRun());
            assertEquals("no sandbox permit for key 'alice' within 0 ms (1 of 1 per key in use)", e.getMessage());
            assertEquals(1, driver.count("create"), "the second caller never reached the provider");
            // another key is not affected by alice's cap
            try (Sandbox bob = limiter.forKey(runner, "bob").open(SandboxSpec.defaults())) {
                assertEquals("p", bob.provider());
                assertEquals(2, limiter.inUse());
                assertEquals(1, limiter.inUse("bob"));
            }
        }
        assertDrained(limiter);
    }

    @Test
    void theGlobalCapBindsAcrossKeys() {
        ConcurrencyLimiter limiter = ConcurrencyLimiter.builder().perKey(5).global(2).maxWait(Duration.ofMillis(20)).build();
        try (Sandbox a = limiter.forKey(runner, "a").open(SandboxSpec.defaults());
             Sandbox b = limiter.forKey(runner, "b").open(SandboxSpec.defaults())) {
            assertFalse(a.isClosed() || b.isClosed());
            SandboxCapacityException e = assertThrows(SandboxCapacityException.class,
                    () -> limiter.forKey(runner, "c").open(SandboxSpec.defaults()));
            assertEquals("no sandbox permit for key 'c' within 20 ms (0 of 5 per key in use, 2 of 2 in all)", e.getMessage());
            assertEquals("p", e.provider());
        }
        assertDrained(limiter);
    }

    @Test
    void aWaiterGetsThePermitWhenTheHolderCloses() throws Exception {
        ConcurrencyLimiter limiter = ConcurrencyLimiter.builder().perKey(1).maxWait(LONG).build();
        SandboxRunner alice = limiter.forKey(runner, "alice");
        Sandbox held = alice.open(SandboxSpec.defaults());
        AtomicReference<Object> result = new AtomicReference<>();
        Thread waiter = new Thread(() -> {
            try {
                result.set(alice.run(RunRequest.python("second")));
            } catch (Throwable t) {
                result.set(t);
            }
        });
        waiter.start();
        awaitWaiting(limiter, 1);
        assertEquals(1, driver.count("create"), "the waiter has not reached the provider");
        held.close();
        join(waiter);
        assertEquals("second", ((RunResult) result.get()).stdout());
        assertDrained(limiter);
    }

    /** Runs {@code body} in a new thread, recording what it threw. */
    private static Thread start(AtomicReference<Throwable> thrown, Runnable body) {
        Thread t = new Thread(() -> {
            try {
                body.run();
            } catch (Throwable e) {
                thrown.set(e);
            }
        });
        t.start();
        return t;
    }

    @Test
    void aFreedPermitReachesTheWaiterItSuitsNotJustTheLongestWaiting() throws Exception {
        ConcurrencyLimiter limiter = ConcurrencyLimiter.builder().perKey(1).global(2).maxWait(LONG).build();
        Sandbox alice = limiter.forKey(runner, "alice").open(SandboxSpec.defaults());
        Sandbox bob = limiter.forKey(runner, "bob").open(SandboxSpec.defaults());
        AtomicReference<Throwable> thrown = new AtomicReference<>();
        // alice's second sandbox waits first: blocked by her own cap and by the global one
        Thread alice2 = start(thrown, () -> limiter.forKey(runner, "alice").open(SandboxSpec.defaults()).close());
        awaitWaiting(limiter, 1);
        // carol waits second: blocked by the global cap only
        Thread carol = start(thrown, () -> limiter.forKey(runner, "carol").open(SandboxSpec.defaults()).close());
        awaitWaiting(limiter, 2);
        bob.close(); // frees a global permit that only carol can use
        join(carol);
        assertTrue(alice2.isAlive(), "alice is still over her own cap");
        alice.close();
        join(alice2);
        assertNull(thrown.get());
        assertDrained(limiter);
    }

    @Test
    void anInterruptedWaiterGetsSandboxInterruptedExceptionWithTheFlagRestored() throws Exception {
        ConcurrencyLimiter limiter = ConcurrencyLimiter.builder().perKey(1).maxWait(LONG).build();
        SandboxRunner alice = limiter.forKey(runner, "alice");
        try (Sandbox held = alice.open(SandboxSpec.defaults())) {
            assertFalse(held.isClosed());
            AtomicReference<Throwable> thrown = new AtomicReference<>();
            AtomicReference<Boolean> flag = new AtomicReference<>();
            Thread waiter = new Thread(() -> {
                try {
                    alice.open(SandboxSpec.defaults()).close();
                } catch (Throwable t) {
                    thrown.set(t);
                }
                flag.set(Thread.currentThread().isInterrupted());
            });
            waiter.start();
            awaitWaiting(limiter, 1);
            waiter.interrupt();
            join(waiter);
            SandboxInterruptedException e = (SandboxInterruptedException) thrown.get();
            assertEquals("interrupted while waiting for a sandbox permit for key 'alice'", e.getMessage());
            assertFalse(e.codeMayHaveRun());
            assertTrue(flag.get());
            assertEquals(1, limiter.inUse(), "the waiter took nothing");
            assertEquals(0, limiter.waiting());
        }
        assertDrained(limiter);
        assertEquals(1, driver.count("create"));
    }

    @Test
    void anAlreadyInterruptedCallerDoesNotOpen() {
        ConcurrencyLimiter limiter = ConcurrencyLimiter.builder().perKey(1).build();
        Thread.currentThread().interrupt();
        assertThrows(SandboxInterruptedException.class, () -> limiter.forKey(runner, "a").open(SandboxSpec.defaults()));
        assertTrue(Thread.interrupted(), "flag kept");
        assertEquals(0, driver.count("create"));
        assertDrained(limiter);
    }

    @Test
    void aFailedOpenGivesThePermitBack() {
        ConcurrencyLimiter limiter = ConcurrencyLimiter.builder().perKey(1).maxWait(Duration.ZERO).build();
        SandboxRunner alice = limiter.forKey(runner, "alice");
        driver.onCreate(ScriptedDriver.failing(status(503)));
        assertThrows(SandboxException.class, () -> alice.open(SandboxSpec.defaults()));
        assertDrained(limiter);
        ScriptedRunner buggy = new ScriptedRunner("buggy", spec -> {
            throw new AssertionError("an Error, not an exception");
        });
        assertThrows(AssertionError.class, () -> limiter.forKey(buggy, "alice").open(SandboxSpec.defaults()));
        assertDrained(limiter);
        alice.open(SandboxSpec.defaults()).close();
        assertDrained(limiter);
    }

    @Test
    void closingTwiceGivesBackOnePermit() {
        ConcurrencyLimiter limiter = ConcurrencyLimiter.builder().perKey(2).build();
        SandboxRunner alice = limiter.forKey(runner, "alice");
        Sandbox first = alice.open(SandboxSpec.defaults());
        Sandbox second = alice.open(SandboxSpec.defaults());
        first.close();
        first.close();
        assertEquals(1, limiter.inUse("alice"), "the second sandbox still holds its permit");
        second.close();
        assertDrained(limiter);
    }

    @Test
    void thePermitIsHeldDuringExecAndGivenBackWhenAnInterruptTearsTheSandboxDown() throws Exception {
        ConcurrencyLimiter limiter = ConcurrencyLimiter.builder().perKey(1).build();
        CountDownLatch started = new CountDownLatch(1);
        AtomicInteger heldDuringExec = new AtomicInteger(-1);
        driver.onExec((h, e, sink) -> {
            heldDuringExec.set(limiter.inUse("alice"));
            started.countDown();
            new CountDownLatch(1).await(); // until interrupted
            throw new AssertionError("not reached");
        });
        Sandbox sb = limiter.forKey(runner, "alice").open(SandboxSpec.defaults());
        AtomicReference<Throwable> thrown = new AtomicReference<>();
        Thread worker = new Thread(() -> {
            try {
                sb.exec(Execution.python("loop"));
            } catch (Throwable t) {
                thrown.set(t);
            }
        });
        worker.start();
        await(started);
        worker.interrupt();
        join(worker);
        assertTrue(thrown.get() instanceof SandboxInterruptedException);
        assertEquals(1, heldDuringExec.get());
        assertTrue(sb.isClosed());
        assertDrained(limiter); // given back although the caller has not called close()
        sb.close();
        assertDrained(limiter);
    }

    @Test
    void runHoldsThePermitForTheWholeRun() {
        ConcurrencyLimiter limiter = ConcurrencyLimiter.builder().perKey(1).build();
        AtomicInteger seen = new AtomicInteger(-1);
        driver.onExec((h, e, sink) -> {
            seen.set(limiter.inUse("alice"));
            return ScriptedDriver.echo(h, e, sink);
        });
        RunResult r = limiter.forKey(runner, "alice").run(RunRequest.python("hi"));
        assertEquals("hi", r.stdout());
        assertEquals(Teardown.DESTROYED, r.teardown());
        assertEquals(1, seen.get());
        assertDrained(limiter);
    }

    @Test
    void keysNoLongerInUseAreForgotten() {
        ConcurrencyLimiter limiter = ConcurrencyLimiter.builder().perKey(1).global(100).build();
        List<Sandbox> open = new ArrayList<>();
        for (int i = 0; i < 100; i++) {
            open.add(limiter.forKey(runner, "user-" + i).open(SandboxSpec.defaults()));
        }
        assertEquals(100, limiter.activeKeys());
        open.forEach(Sandbox::close);
        assertDrained(limiter);
        for (int i = 0; i < 1_000; i++) {
            limiter.forKey(runner, "tenant-" + i).open(SandboxSpec.defaults()).close();
        }
        assertDrained(limiter);
    }

    @Test
    void theLimitedRunnerIsTransparent() {
        ConcurrencyLimiter limiter = ConcurrencyLimiter.builder().perKey(1).build();
        SandboxRunner alice = limiter.forKey(runner, "alice");
        assertEquals("p", alice.name());
        assertSame(runner.capabilities(), alice.capabilities());
        try (Sandbox sb = alice.open(SandboxSpec.defaults())) {
            assertEquals("p-1", sb.id());
            assertEquals(1, sb.attempts().size());
            assertEquals(Teardown.OPEN, sb.teardown());
        }
        alice.close();
        assertFalse(driver.isClosed(), "the shared runner stays open");
        assertThrows(IllegalStateException.class, () -> alice.open(SandboxSpec.defaults()), "a closed runner takes no work");
        limiter.forKey(runner, "alice").open(SandboxSpec.defaults()).close(); // a new one for the key does
    }

    @Test
    void aCapacityErrorFailsOverToTheNextRunner() {
        ConcurrencyLimiter limiter = ConcurrencyLimiter.builder().perKey(1).maxWait(Duration.ZERO).build();
        ScriptedDriver other = new ScriptedDriver("other");
        FailoverRunner failover = FailoverRunner.of(limiter.forKey(runner, "alice"), ManagedSandboxRunner.of(other));
        try (Sandbox first = failover.open(SandboxSpec.defaults());
             Sandbox second = failover.open(SandboxSpec.defaults())) {
            assertEquals("p", first.provider());
            assertEquals("other", second.provider());
            assertEquals("SandboxCapacityException", second.attempts().get(0).errorType().orElseThrow());
        }
        assertDrained(limiter);
        assertEquals(List.of(), other.live());
    }

    @Test
    void twoLimitersOnOneStoreShareTheCaps() {
        PermitStore store = new InProcessPermitStore();
        ConcurrencyLimiter one = ConcurrencyLimiter.builder().perKey(1).global(2).maxWait(Duration.ZERO).store(store).build();
        ConcurrencyLimiter two = ConcurrencyLimiter.builder().perKey(1).global(2).maxWait(Duration.ZERO).store(store).build();
        assertSame(store, two.store());
        try (Sandbox a = one.forKey(runner, "alice").open(SandboxSpec.defaults())) {
            assertFalse(a.isClosed());
            SandboxCapacityException e = assertThrows(SandboxCapacityException.class,
                    () -> two.forKey(runner, "alice").open(SandboxSpec.defaults()));
            assertEquals("no sandbox permit for key 'alice' within 0 ms (1 of 1 per key in use, 1 of 2 in all)", e.getMessage());
            try (Sandbox b = two.forKey(runner, "bob").open(SandboxSpec.defaults())) {
                assertFalse(b.isClosed());
                assertThrows(SandboxCapacityException.class, () -> one.forKey(runner, "carol").open(SandboxSpec.defaults()));
                assertEquals(2, one.inUse());
            }
        }
        assertDrained(one);
        assertDrained(two);
        assertEquals(2, driver.count("create"));
    }

    @Test
    void aStoreThatCannotAnswerFailsClosed() {
        AtomicInteger asked = new AtomicInteger();
        PermitStore down = new InProcessPermitStore();
        PermitStore failing = new PermitStore() {
            @Override
            public Acquisition tryAcquire(String key, int perKey, int global) {
                asked.incrementAndGet();
                throw new PermitStoreException("permit store unreachable", new java.io.IOException("connection refused"));
            }

            @Override
            public long awaitRelease(Acquisition refused, long nanos) {
                throw new AssertionError("never waits after a failure");
            }

            @Override
            public int inUse() {
                return down.inUse();
            }

            @Override
            public int inUse(String key) {
                return down.inUse(key);
            }

            @Override
            public int activeKeys() {
                return down.activeKeys();
            }
        };
        ConcurrencyLimiter limiter = ConcurrencyLimiter.builder().perKey(1).maxWait(LONG).store(failing).build();
        PermitStoreException e = assertThrows(PermitStoreException.class,
                () -> limiter.forKey(runner, "alice").open(SandboxSpec.defaults()));
        assertTrue(e.isRetriable());
        assertFalse(e.codeMayHaveRun());
        assertTrue(e instanceof SandboxCapacityException, "callers that back off on capacity back off here too");
        assertEquals(1, asked.get(), "fails at once, does not wait out maxWait");
        assertEquals(0, driver.count("create"), "no permit, no sandbox");
        assertDrained(limiter);
    }

    @Test
    void builderRefusesNonsense() {
        assertThrows(IllegalStateException.class, () -> ConcurrencyLimiter.builder().build());
        assertThrows(IllegalArgumentException.class, () -> ConcurrencyLimiter.builder().perKey(0));
        assertThrows(IllegalArgumentException.class, () -> ConcurrencyLimiter.builder().global(0));
        assertThrows(IllegalArgumentException.class, () -> ConcurrencyLimiter.builder().maxWait(Duration.ofSeconds(-1)));
        ConcurrencyLimiter huge = ConcurrencyLimiter.builder().perKey(1).maxWait(Duration.ofSeconds(Long.MAX_VALUE)).build();
        huge.forKey(runner, "a").open(SandboxSpec.defaults()).close();
        assertDrained(huge);
    }
}
