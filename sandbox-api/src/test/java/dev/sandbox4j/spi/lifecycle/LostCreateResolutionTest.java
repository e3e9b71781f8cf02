package dev.sandbox4j.spi.lifecycle;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sandbox4j.api.LifecycleStats;
import dev.sandbox4j.api.Sandbox;
import dev.sandbox4j.api.exception.SandboxException;
import dev.sandbox4j.api.exception.SandboxInterruptedException;
import dev.sandbox4j.api.SandboxSpec;
import dev.sandbox4j.api.SweepRequest;
import dev.sandbox4j.api.SweepResult;
import dev.sandbox4j.api.Teardown;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import dev.sandbox4j.spi.CreateRequest;

/**
 * Ambiguous creates are resolved off the caller's thread (issue 13, causes B and C), the outcome is
 * counted, and the orphan sweep destroys only this owner's sandboxes.
 */
@Timeout(60)
class LostCreateResolutionTest {
    private final ScriptedDriver driver = new ScriptedDriver("scripted");

    @AfterEach
    void nothingLeaked() {
        assertEquals(List.of(), driver.live(), "sandboxes left on the provider");
        assertFalse(Thread.interrupted(), "a test left the interrupt flag set");
    }

    private ManagedSandboxRunner.Builder<ScriptedDriver.Handle> builder() {
        return ManagedSandboxRunner.builder(driver).retryBaseDelay(Duration.ofMillis(1))
                .lostCreateWindow(Duration.ofSeconds(20)).closeDrainTimeout(Duration.ofSeconds(30));
    }

    private static SandboxException timedOut() {
        return SandboxException.builder("create timed out").provider("scripted").retriable(true)
                .requestMayHaveSucceeded(true).build();
    }

    /**
     * A create still in flight when {@code close()} begins, which then times out having taken effect (the
     * pool campaign's pool closed with hung creates): close waits for the open, so the ambiguous create is
     * looked up and destroyed before the lookups stop and the driver closes; before, it was not looked up
     * ("runner closed") and left until its lifetime ended.
     */
    @Test
    void aCreateInFlightWhenTheRunnerIsClosedIsStillLookedUpAndDestroyed() throws Exception {
        CountDownLatch inCreate = new CountDownLatch(1);
        CountDownLatch closing = new CountDownLatch(1);
        driver.onCreate((d, r) -> {
            inCreate.countDown();
            try {
                closing.await(10, TimeUnit.SECONDS);
                Thread.sleep(200); // close() is under way by now
            } catch (InterruptedException e) {
                throw new AssertionError(e);
            }
            d.plant(r.labels()); // it took effect; the answer is lost
            assertFalse(d.isClosed(), "the driver was closed while a create was in flight");
            throw timedOut();
        });
        ManagedSandboxRunner<ScriptedDriver.Handle> runner = builder().build();
        AtomicReference<Throwable> opened = new AtomicReference<>();
        Thread t = new Thread(() -> {
            try {
                runner.open(SandboxSpec.defaults()).close();
            } catch (Throwable e) {
                opened.set(e);
            }
        });
        t.start();
        assertTrue(inCreate.await(10, TimeUnit.SECONDS));
        closing.countDown();
        runner.close();
        t.join(10_000);
        assertInstanceOf(SandboxException.class, opened.get());
        LifecycleStats stats = runner.lifecycleStats();
        assertEquals(1, stats.ambiguousCreates(), stats.toString());
        assertEquals(1, stats.lateCreatesDestroyed(), stats.toString());
        assertEquals(List.of(), driver.live(), "the create that took effect during close() was left");
        assertTrue(driver.isClosed());
    }

    /**
     * A lookup lists the sandbox, but its teardown finds it already gone, and it is still there afterwards
     * (a create still under way when listed): looked up again and destroyed, not counted done at once.
     */
    @Test
    void aListedSandboxWhoseTeardownFoundItGoneIsLookedUpAgain() {
        AtomicReference<CreateRequest> sent = new AtomicReference<>();
        driver.onCreate((d, r) -> {
            sent.set(r);
            d.plant(r.labels()); // it took effect; the answer is lost
            throw timedOut();
        });
        driver.onDestroy((d, h) -> false); // the first teardown: "already gone", yet the sandbox stays
        ManagedSandboxRunner<ScriptedDriver.Handle> runner = builder().build();
        assertThrows(SandboxException.class, () -> runner.open(SandboxSpec.defaults()));
        runner.close(); // drains the search
        LifecycleStats stats = runner.lifecycleStats();
        assertEquals(1, stats.lateCreatesDestroyed(), stats.toString());
        assertEquals(2, driver.count("destroy"), driver.calls().toString());
        assertEquals(List.of(), driver.live(), "the sandbox listed and reported gone was left");
    }

    /**
     * A lookup lists the late create, and its teardown fails with an error the teardown does not retry
     * (the removal's answer lost, say): looked up again within the window and torn down, not given up as
     * unresolved at once (the Docker campaign at 10x left such a container, never started, on the engine).
     */
    @Test
    void aListedSandboxWhoseTeardownFailedIsLookedUpAgainAndDestroyed() {
        driver.onCreate((d, r) -> {
            d.plant(r.labels()); // it took effect; the answer is lost
            throw timedOut();
        });
        // the first teardown: an error it does not retry, and the sandbox stays; then destroy as usual
        driver.onDestroy((d, h) -> {
            throw SandboxException.builder("removal answer lost").provider("scripted").retriable(false).build();
        });
        ManagedSandboxRunner<ScriptedDriver.Handle> runner = builder().build();
        assertThrows(SandboxException.class, () -> runner.open(SandboxSpec.defaults()));
        runner.close(); // drains the search
        LifecycleStats stats = runner.lifecycleStats();
        assertEquals(1, stats.lateCreatesDestroyed(), stats.toString());
        assertEquals(0, stats.unresolved(), stats.toString());
        assertEquals(2, driver.count("destroy"), driver.calls().toString());
        assertEquals(List.of(), driver.live(), "the sandbox whose first teardown failed was left");
    }

    /** Cause B: the create takes effect after the client gave up; the first lookups find nothing. */
    @Test
    void aCreateThatCompletesAfterTheClientGaveUpIsFoundLaterAndDestroyed() {
        AtomicReference<CreateRequest> sent = new AtomicReference<>();
        driver.onCreate((d, r) -> {
            sent.set(r);
            throw timedOut();
        });
        // the sandbox appears at the third lookup, long after the caller got its exception
        driver.onFind((d, runId) -> {
            if (d.finds() == 3) {
                d.plant(sent.get().labels());
            }
            return d.liveWith(runId);
        });
        ManagedSandboxRunner<ScriptedDriver.Handle> runner = builder().build();
        SandboxException e = assertThrows(SandboxException.class, () -> runner.open(SandboxSpec.defaults()));
        String runId = sent.get().runId();
        assertEquals(runId, e.runId().orElseThrow());
        assertTrue(e.sandboxMayExist(), "the first lookup found nothing, so a sandbox may still appear");
        assertTrue(e.getMessage().contains("run id " + runId + " may exist"), e.getMessage());

        runner.close(); // drains the search
        LifecycleStats stats = runner.lifecycleStats();
        assertEquals(1, stats.ambiguousCreates(), stats.toString());
        assertEquals(1, stats.lateCreatesDestroyed(), stats.toString());
        assertEquals(0, stats.pending(), stats.toString());
        assertEquals(List.of(), driver.live());
    }

    /** Cause B with an interrupt: the caller returns at once, the search goes on without it. */
    @Test
    void anInterruptDuringTheCreateReturnsAtOnceAndTheSandboxIsStillDestroyed() throws Exception {
        CountDownLatch inCreate = new CountDownLatch(1);
        AtomicReference<CreateRequest> sent = new AtomicReference<>();
        driver.onCreate((d, r) -> {
            sent.set(r);
            inCreate.countDown();
            try {
                new CountDownLatch(1).await();
            } finally {
                d.plant(r.labels()); // the server finishes the create anyway
            }
            return null;
        });
        CountDownLatch findsMayGo = new CountDownLatch(1);
        driver.onFind((d, runId) -> {
            findsMayGo.await(); // a slow lookup: the caller must not wait for it
            return d.liveWith(runId);
        });
        ManagedSandboxRunner<ScriptedDriver.Handle> runner = builder().build();
        AtomicReference<Throwable> thrown = new AtomicReference<>();
        Thread caller = new Thread(() -> {
            try {
                runner.open(SandboxSpec.defaults());
            } catch (Throwable t) {
                thrown.set(t);
            }
        });
        caller.start();
        assertTrue(inCreate.await(10, TimeUnit.SECONDS));
        caller.interrupt();
        caller.join(10_000);
        assertFalse(caller.isAlive(), "the interrupted caller waited for the lookup");
        SandboxInterruptedException e = assertInstanceOf(SandboxInterruptedException.class, thrown.get());
        assertEquals(sent.get().runId(), e.runId().orElseThrow());
        assertTrue(e.sandboxMayExist());
        assertEquals(1, runner.lifecycleStats().pending());

        findsMayGo.countDown();
        runner.close();
        assertEquals(1, runner.lifecycleStats().lateCreatesDestroyed(), runner.lifecycleStats().toString());
    }

    /** Cause C: an interrupt while the caller waits for the lookup does not end the lookup. */
    @Test
    void anInterruptDuringTheLookupDoesNotAbandonIt() throws Exception {
        driver.onCreate(ScriptedDriver.lostResponse(timedOut()));
        CountDownLatch inFind = new CountDownLatch(1);
        CountDownLatch findsMayGo = new CountDownLatch(1);
        driver.onFind((d, runId) -> {
            inFind.countDown();
            findsMayGo.await();
            return d.liveWith(runId);
        });
        ManagedSandboxRunner<ScriptedDriver.Handle> runner = builder().build();
        AtomicReference<Throwable> thrown = new AtomicReference<>();
        AtomicReference<Boolean> flagAfter = new AtomicReference<>();
        Thread caller = new Thread(() -> {
            try {
                runner.open(SandboxSpec.defaults());
            } catch (Throwable t) {
                thrown.set(t);
                flagAfter.set(Thread.currentThread().isInterrupted());
            }
        });
        caller.start();
        assertTrue(inFind.await(10, TimeUnit.SECONDS));
        caller.interrupt();
        caller.join(10_000);
        assertFalse(caller.isAlive());
        SandboxException e = assertInstanceOf(SandboxException.class, thrown.get());
        assertTrue(e.sandboxMayExist(), e.getMessage());
        assertTrue(flagAfter.get(), "the caller's interrupt flag is restored");

        findsMayGo.countDown(); // the lookup goes on and finds the sandbox
        runner.close();
        assertEquals(1, runner.lifecycleStats().lateCreatesDestroyed(), runner.lifecycleStats().toString());
    }

    @Test
    void lookupsRetryFailuresAndASearchThatNeverSucceedsIsRecordedAsUnresolved() {
        driver.onCreate(ScriptedDriver.failing(timedOut()));
        driver.onFind((d, runId) -> {
            throw SandboxException.builder("list failed").provider("scripted").retriable(true).build();
        });
        ManagedSandboxRunner<ScriptedDriver.Handle> runner = builder().lostCreateWindow(Duration.ofMillis(600)).build();
        SandboxException e = assertThrows(SandboxException.class, () -> runner.open(SandboxSpec.defaults()));
        runner.close();
        LifecycleStats stats = runner.lifecycleStats();
        assertEquals(1, stats.unresolved(), stats.toString());
        assertEquals(List.of(e.runId().orElseThrow()), stats.unresolvedRunIds());
        assertTrue(driver.finds() >= 2, "lookups were retried: " + driver.finds());
    }

    @Test
    void aCreateThatCreatedNothingIsProvedSoOnceTheWindowHasPassed() {
        driver.onCreate(ScriptedDriver.failing(timedOut()));
        ManagedSandboxRunner<ScriptedDriver.Handle> runner = builder().lostCreateWindow(Duration.ofMillis(300)).build();
        assertThrows(SandboxException.class, () -> runner.open(SandboxSpec.defaults()));
        runner.close();
        LifecycleStats stats = runner.lifecycleStats();
        assertEquals(1, stats.resolvedNothingCreated(), stats.toString());
        assertEquals(0, stats.unresolved(), stats.toString());
    }

    @Test
    void theSearchNeverOutlastsTheLifetimeTheCreateAskedFor() {
        driver.onCreate(ScriptedDriver.failing(timedOut()));
        ManagedSandboxRunner<ScriptedDriver.Handle> runner = ManagedSandboxRunner.builder(driver)
                .closeDrainTimeout(Duration.ofSeconds(30)).build(); // default window: 60 s + 30 s
        assertThrows(SandboxException.class,
                () -> runner.open(SandboxSpec.builder().defaultLifetime(Duration.ofMillis(500)).build()));
        long t0 = System.nanoTime();
        runner.close();
        assertTrue(System.nanoTime() - t0 < TimeUnit.SECONDS.toNanos(20), "searched past the lifetime");
        assertEquals(1, runner.lifecycleStats().resolvedNothingCreated());
    }

    @Test
    void closeWaitsBoundedlyAndRecordsWhatIsLeft() {
        driver.onCreate(ScriptedDriver.failing(timedOut()));
        ManagedSandboxRunner<ScriptedDriver.Handle> runner = builder().lostCreateWindow(Duration.ofMinutes(5))
                .closeDrainTimeout(Duration.ofMillis(200)).build();
        SandboxException e = assertThrows(SandboxException.class, () -> runner.open(SandboxSpec.defaults()));
        runner.close();
        LifecycleStats stats = runner.lifecycleStats();
        assertEquals(0, stats.pending());
        assertEquals(1, stats.unresolved());
        assertEquals(List.of(e.runId().orElseThrow()), stats.unresolvedRunIds());
    }

    @Test
    void aFailedTeardownIsCountedAndItsRunIdKept() {
        driver.onEveryDestroy(ScriptedDriver.throwing(SandboxException.builder("forbidden").provider("scripted")
                .httpStatus(403).build()));
        ManagedSandboxRunner<ScriptedDriver.Handle> runner = builder().build();
        Sandbox s = runner.open(SandboxSpec.defaults());
        s.close();
        assertEquals(Teardown.FAILED, s.teardown());
        assertEquals(1, runner.lifecycleStats().teardownFailures());
        assertEquals(List.of(s.runId()), runner.lifecycleStats().unresolvedRunIds());
        assertEquals(List.of(s.id()), driver.released(), "per-sandbox state released after teardown");
        // the sweep by run id finds it again once the provider lets us
        driver.onEveryDestroy((d, h) -> { d.expire(h.id()); return true; });
        SweepResult swept = runner.sweep(SweepRequest.runIds(runner.lifecycleStats().unresolvedRunIds()));
        assertEquals(List.of(s.id()), swept.destroyed());
        runner.close();
    }

    @Test
    void theSweepDestroysOnlyThisOwnersExpiredOrNamedSandboxes() {
        ManagedSandboxRunner<ScriptedDriver.Handle> mine = builder().owner("replica-1").build();
        ManagedSandboxRunner<ScriptedDriver.Handle> sibling = builder().owner("replica-2").build();
        Sandbox live = mine.open(SandboxSpec.defaults()); // in use: not expired, not named
        Sandbox named = mine.open(SandboxSpec.defaults());
        Sandbox siblings = sibling.open(SandboxSpec.defaults());
        String past = Long.toString(Instant.now().minusSeconds(60).getEpochSecond());
        ScriptedDriver.Handle expired = driver.plant(Map.of(CreateRequest.RUN_ID_LABEL, "expired000000000",
                CreateRequest.OWNER_LABEL, "replica-1", CreateRequest.EXPIRES_LABEL, past));
        ScriptedDriver.Handle siblingsExpired = driver.plant(Map.of(CreateRequest.RUN_ID_LABEL, "expired000000001",
                CreateRequest.OWNER_LABEL, "replica-2", CreateRequest.EXPIRES_LABEL, past));
        assertEquals("replica-1", driver.createRequests().get(0).labels().get(CreateRequest.OWNER_LABEL));

        SweepResult r = mine.sweep(SweepRequest.builder().expired().runId(named.runId()).build());
        assertEquals(List.of(expired.id(), named.id()).stream().sorted().toList(),
                r.destroyed().stream().sorted().toList(), r.toString());
        assertTrue(driver.live().contains(live.id()));
        assertTrue(driver.live().contains(siblings.id()));
        assertTrue(driver.live().contains(siblingsExpired.id()));

        // a replica restarting under its stable name takes back everything it owned
        assertEquals(List.of(live.id()), mine.sweep(SweepRequest.builder().allOfOwner().build()).destroyed());
        assertEquals(List.of(siblingsExpired.id()), sibling.sweep(SweepRequest.expired()).destroyed());
        siblings.close();
        live.close(); // already gone: reported, not an error
        assertEquals(Teardown.ALREADY_GONE, live.teardown());
        mine.close();
        sibling.close();
    }

    @Test
    void aSweepOfExpiredSandboxesNeedsAnOwner() {
        ManagedSandboxRunner<ScriptedDriver.Handle> runner = builder().build();
        assertThrows(IllegalStateException.class, () -> runner.sweep(SweepRequest.expired()));
        runner.close();
    }

    /** Issue 13 item 5: what the runner keeps per sandbox does not grow with runs. */
    @Test
    void perSandboxStateStaysBoundedOverManyRuns() {
        driver.onEveryDestroy(ScriptedDriver.throwing(SandboxException.builder("forbidden").provider("scripted")
                .httpStatus(403).build()));
        ManagedSandboxRunner<ScriptedDriver.Handle> runner = builder().build();
        for (int i = 0; i < 1_050; i++) {
            Sandbox s = runner.open(SandboxSpec.defaults());
            s.close(); // FAILED: its run id is kept, up to the bound
            driver.expire(s.id());
        }
        LifecycleStats stats = runner.lifecycleStats();
        assertEquals(1_050, stats.teardownFailures());
        assertEquals(1_000, stats.unresolvedRunIds().size(), "the run ids kept are bounded");
        assertEquals(0, stats.pending());
        assertEquals(1_050, driver.released().size(), "every handle was released");
        runner.close();
    }

    /** A one-shot run whose exec fails gives no result: its exception says when the teardown failed too. */
    @Test
    void aFailedExecFollowedByAFailedTeardownSaysTheSandboxMayExist() {
        driver.onExec((h, e, sink) -> {
            throw SandboxException.builder("stream dropped").provider("scripted").codeMayHaveRun(true).build();
        });
        driver.onEveryDestroy(ScriptedDriver.throwing(SandboxException.builder("forbidden").provider("scripted")
                .httpStatus(403).build()));
        ManagedSandboxRunner<ScriptedDriver.Handle> runner = builder().build();
        SandboxException e = org.junit.jupiter.api.Assertions.assertThrows(SandboxException.class,
                () -> runner.run(dev.sandbox4j.api.RunRequest.python("print(1)")));
        assertTrue(e.sandboxMayExist(), e.getMessage());
        assertTrue(e.getMessage().contains("teardown failed"), e.getMessage());
        driver.live().forEach(driver::expire);
        runner.close();
    }

    @Test
    void anInterruptedExecWhoseTeardownFailedSaysTheSandboxMayExist() {
        driver.onExec((h, e, sink) -> {
            throw new InterruptedException("scripted");
        });
        driver.onEveryDestroy(ScriptedDriver.throwing(SandboxException.builder("forbidden").provider("scripted")
                .httpStatus(403).build()));
        ManagedSandboxRunner<ScriptedDriver.Handle> runner = builder().build();
        SandboxInterruptedException e = org.junit.jupiter.api.Assertions.assertThrows(SandboxInterruptedException.class,
                () -> runner.run(dev.sandbox4j.api.RunRequest.python("print(1)")));
        assertTrue(Thread.interrupted());
        assertTrue(e.sandboxMayExist(), e.getMessage());
        driver.live().forEach(driver::expire);
        runner.close();
    }
}
