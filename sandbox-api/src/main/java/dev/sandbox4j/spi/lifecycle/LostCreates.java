package dev.sandbox4j.spi.lifecycle;

import dev.sandbox4j.api.LeakSuspected;
import dev.sandbox4j.api.LifecycleStats;
import dev.sandbox4j.api.Teardown;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import dev.sandbox4j.spi.Backoff;
import dev.sandbox4j.spi.CreateRequest;
import dev.sandbox4j.spi.SandboxDriver;
import dev.sandbox4j.spi.SandboxHandle;

/**
 * Resolution of ambiguous creates for {@link ManagedSandboxRunner}: the run id is looked up on a
 * small reaper owned by the runner until the sandbox is found and destroyed, or until it provably
 * cannot exist any more. Also keeps the lifecycle's counters and the run ids left unresolved.
 */
final class LostCreates<H extends SandboxHandle> {
    private static final Logger log = LoggerFactory.getLogger(ManagedSandboxRunner.class);
    private static final int UNRESOLVED_IDS_KEPT = 1_000;
    private static final AtomicInteger REAPER_THREADS = new AtomicInteger();

    enum Outcome { PENDING, DESTROYED, NOTHING, UNRESOLVED }

    private final SandboxDriver<H> driver;
    private final String name;
    private final Teardowns<H> teardowns;
    private final Backoff lookupBackoff;
    private final Duration lostCreateWindow;
    private final ScheduledThreadPoolExecutor reaper;
    private final Set<Resolution> pending = ConcurrentHashMap.newKeySet();
    // locks, not monitors, wherever a thread waits or does I/O under them: a virtual thread
    // blocked inside synchronized pins its carrier on Java 21
    private final ReentrantLock pendingLock = new ReentrantLock();
    private final Condition pendingChanged = pendingLock.newCondition();
    private final AtomicLong ambiguousCreates = new AtomicLong();
    private final AtomicLong lateCreatesDestroyed = new AtomicLong();
    private final AtomicLong resolvedNothing = new AtomicLong();
    private final AtomicLong unresolved = new AtomicLong();
    private final AtomicLong teardownFailures = new AtomicLong();
    private final ArrayDeque<String> unresolvedRunIds = new ArrayDeque<>();
    private final Observed observed;

    LostCreates(SandboxDriver<H> driver, Observed observed, Teardowns<H> teardowns, Backoff lookupBackoff, Duration lostCreateWindow) {
        this.driver = driver;
        this.name = driver.provider();
        this.teardowns = teardowns;
        this.observed = observed;
        this.lookupBackoff = lookupBackoff;
        this.lostCreateWindow = lostCreateWindow;
        // Two threads at most, none while idle: lookups wait on the scheduler, not on a sleeping thread.
        this.reaper = new ScheduledThreadPoolExecutor(2, r -> {
            Thread t = new Thread(r, "sandbox4j-reaper-" + name + "-" + REAPER_THREADS.incrementAndGet());
            t.setDaemon(true);
            return t;
        });
        this.reaper.setKeepAliveTime(10, TimeUnit.SECONDS);
        this.reaper.allowCoreThreadTimeOut(true);
        this.reaper.setRemoveOnCancelPolicy(true);
    }

    /** One ambiguous create being resolved on the reaper. */
    static final class Resolution {
        final String runId;
        final long deadlineNanos;
        final CountDownLatch firstLookup = new CountDownLatch(1);
        final AtomicBoolean done = new AtomicBoolean();
        volatile Outcome outcome = Outcome.PENDING;
        volatile boolean lastLookupFailed;
        /**
         * A lookup listed a sandbox whose teardown then found it already gone, or failed: looked for again,
         * and an empty lookup after it means gone for good.
         */
        boolean listedBefore;
        int rounds;

        Resolution(String runId, long deadlineNanos) {
            this.runId = runId;
            this.deadlineNanos = deadlineNanos;
        }

        Outcome outcome() {
            return outcome;
        }

        /** Waits for the first lookup round; an interrupt ends the wait and stays set. */
        void awaitFirstLookup(Duration max) {
            try {
                firstLookup.await(max.toNanos(), TimeUnit.NANOSECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }

        /** What the caller's exception says about the sandbox. */
        String note() {
            switch (outcome) {
                case DESTROYED:
                    return "; the sandbox it created (run id " + runId + ") was found and destroyed";
                case NOTHING:
                    return "; no sandbox with run id " + runId + " was created";
                case UNRESOLVED:
                    return "; a sandbox with run id " + runId + " may exist: it could not be found and destroyed,"
                            + " and its lifetime bounds it (sweep it by run id)";
                default:
                    return "; a sandbox with run id " + runId + " may exist: it is being looked up in the background"
                            + " until it is found and destroyed or can no longer appear";
            }
        }
    }

    /** Starts resolving an ambiguous create sent at {@code sentNanos}; never blocks. */
    Resolution resolve(CreateRequest request, long sentNanos) {
        Duration window = lostCreateWindow != null ? lostCreateWindow
                : driver.createDeadline().plus(ManagedSandboxRunner.LOST_CREATE_MARGIN);
        if (window.compareTo(request.lifetime()) > 0) {
            window = request.lifetime(); // past its lifetime the provider's clock has killed it anyway
        }
        Resolution r = new Resolution(request.runId(), sentNanos + window.toNanos());
        ambiguousCreates.incrementAndGet();
        pending.add(r);
        schedule(r, 0);
        return r;
    }

    private void schedule(Resolution r, long delayMs) {
        try {
            reaper.schedule(() -> lookup(r), delayMs, TimeUnit.MILLISECONDS);
        } catch (RejectedExecutionException e) {
            log.warn("{}: runner closed; run id {} is not looked up and a sandbox may exist until its lifetime ends",
                    name, r.runId);
            complete(r, Outcome.UNRESOLVED);
        }
    }

    /** One lookup round, on a reaper thread. Reschedules itself until the outcome is known. */
    private void lookup(Resolution r) {
        if (r.done.get()) {
            return;
        }
        boolean last = System.nanoTime() - r.deadlineNanos >= 0;
        try {
            List<H> found = driver.findByRunId(r.runId);
            r.lastLookupFailed = false;
            if (!found.isEmpty()) {
                boolean allDown = true;
                boolean anyGone = false;
                for (H h : found) {
                    Teardown t = teardowns.teardownAndRelease(h);
                    allDown &= t != Teardown.FAILED;
                    anyGone |= t == Teardown.ALREADY_GONE;
                    log.warn("{} sandbox {} from an ambiguous create (run id {}): {}", name, h.id(), r.runId, t);
                }
                if (last || (allDown && !anyGone)) {
                    complete(r, allDown ? Outcome.DESTROYED : Outcome.UNRESOLVED);
                    return;
                }
                // listed, yet already gone when torn down: a provider may list a sandbox whose create is still
                // under way before a teardown can reach it (a Docker engine listed a late create's container,
                // answered its removal 404, then finished creating it); or listed, and its teardown failed (an
                // error the teardown does not retry, or retries that ran out): the sandbox is there and the
                // window is not over. Either way look again until a lookup comes back empty (gone for good) or
                // the window ends, and tear down what is listed each time
                r.listedBefore = true;
            } else if (r.listedBefore) {
                complete(r, Outcome.DESTROYED); // listed before, and now gone for good
                return;
            }
        } catch (InterruptedException e) {
            complete(r, Outcome.UNRESOLVED); // only shutdownNow() interrupts a reaper thread
            return;
        } catch (RuntimeException e) {
            r.lastLookupFailed = true;
            log.debug("{}: lookup of run id {} failed ({}); trying again", name, r.runId, e.getMessage());
        }
        r.firstLookup.countDown();
        if (last) {
            complete(r, r.lastLookupFailed ? Outcome.UNRESOLVED : Outcome.NOTHING);
            return;
        }
        long delay = lookupBackoff.delay(++r.rounds).toMillis();
        long untilDeadline = TimeUnit.NANOSECONDS.toMillis(r.deadlineNanos - System.nanoTime());
        schedule(r, Math.max(0, Math.min(delay, untilDeadline))); // the last lookup starts at the deadline
    }

    private void complete(Resolution r, Outcome outcome) {
        if (!r.done.compareAndSet(false, true)) {
            return;
        }
        r.outcome = outcome;
        switch (outcome) {
            case DESTROYED:
                lateCreatesDestroyed.incrementAndGet();
                break;
            case NOTHING:
                resolvedNothing.incrementAndGet();
                log.debug("{}: no sandbox with run id {} appeared before its create deadline", name, r.runId);
                break;
            default:
                unresolved.incrementAndGet();
                recordUnresolved(r.runId);
                observed.leak(LeakSuspected.Reason.CREATE_UNRESOLVED, r.runId);
                log.warn("{}: run id {} is unresolved; a sandbox may exist until its lifetime ends", name, r.runId);
        }
        r.firstLookup.countDown();
        pendingLock.lock();
        try {
            pending.remove(r);
            pendingChanged.signalAll();
        } finally {
            pendingLock.unlock();
        }
    }

    /** A teardown of one of the lifecycle's own sandboxes failed: counted, and its run id kept. */
    void teardownFailed(String runId) {
        teardownFailures.incrementAndGet();
        recordUnresolved(runId);
        observed.leak(LeakSuspected.Reason.TEARDOWN_FAILED, runId);
    }

    private void recordUnresolved(String runId) {
        synchronized (unresolvedRunIds) {
            if (unresolvedRunIds.size() >= UNRESOLVED_IDS_KEPT) {
                unresolvedRunIds.removeFirst();
            }
            unresolvedRunIds.addLast(runId);
        }
    }

    LifecycleStats stats() {
        List<String> ids;
        synchronized (unresolvedRunIds) {
            ids = List.copyOf(unresolvedRunIds);
        }
        return LifecycleStats.builder()
                .ambiguousCreates(ambiguousCreates.get())
                .lateCreatesDestroyed(lateCreatesDestroyed.get())
                .resolvedNothingCreated(resolvedNothing.get())
                .unresolved(unresolved.get())
                .pending(pending.size())
                .teardownFailures(teardownFailures.get())
                .unresolvedRunIds(ids)
                .build();
    }

    /**
     * Waits up to {@code drainTimeout} for lookups still going on, records those left as unresolved,
     * and stops the reaper. Returns whether the waiting thread was interrupted (for the caller to restore).
     */
    boolean shutdown(Duration drainTimeout) {
        boolean interrupted = false;
        long end = System.nanoTime() + drainTimeout.toNanos();
        pendingLock.lock();
        try {
            while (!pending.isEmpty()) {
                long left = end - System.nanoTime();
                if (left <= 0) {
                    break;
                }
                try {
                    pendingChanged.awaitNanos(left);
                } catch (InterruptedException e) {
                    interrupted = true;
                }
            }
        } finally {
            pendingLock.unlock();
        }
        for (Resolution r : List.copyOf(pending)) {
            log.warn("{}: runner closed while run id {} was still being looked up; a sandbox may exist"
                    + " until its lifetime ends (sweep it by run id)", name, r.runId);
            complete(r, Outcome.UNRESOLVED);
        }
        reaper.shutdownNow();
        return interrupted;
    }
}
