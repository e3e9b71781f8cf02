package dev.sandbox4j.api.spi;

import dev.sandbox4j.api.Attempt;
import dev.sandbox4j.api.Execution;
import dev.sandbox4j.api.FileEntry;
import dev.sandbox4j.api.SandboxFile;
import dev.sandbox4j.api.SandboxPaths;
import dev.sandbox4j.api.LeakSuspected;
import dev.sandbox4j.api.LifecycleListener;
import dev.sandbox4j.api.LifecycleStats;
import dev.sandbox4j.api.RunRequest;
import dev.sandbox4j.api.RunResult;
import dev.sandbox4j.api.RunStatus;
import dev.sandbox4j.api.Sandbox;
import dev.sandbox4j.api.SandboxException;
import dev.sandbox4j.api.SandboxInterruptedException;
import dev.sandbox4j.api.SandboxRunner;
import dev.sandbox4j.api.SandboxSpec;
import dev.sandbox4j.api.SweepRequest;
import dev.sandbox4j.api.SweepResult;
import dev.sandbox4j.api.Teardown;
import dev.sandbox4j.policy.Capabilities;
import dev.sandbox4j.policy.Language;
import dev.sandbox4j.policy.Limits;
import dev.sandbox4j.policy.UnsupportedPolicyException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
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
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The one sandbox lifecycle, shared by every adapter: an adapter supplies a {@link SandboxDriver}
 * and gets a {@link SandboxRunner} that
 * <ol>
 *   <li>refuses, before any call, every rule of the spec the provider cannot enforce exactly;</li>
 *   <li>labels each sandbox with a fresh run id and retries a create that certainly failed
 *       (429, refused connection) with backoff, honouring Retry-After;</li>
 *   <li>after a create whose outcome is unknown (timeout, lost or garbled answer, dropped
 *       connection, 5xx, interrupt), never retries it: it looks the run id up on a small reaper owned
 *       by the runner until the sandbox is found and destroyed, or until it provably cannot exist any
 *       more (the driver's {@link SandboxDriver#createDeadline() create deadline} plus
 *       {@link #LOST_CREATE_MARGIN}, never past the lifetime the create asked for). The caller waits
 *       for the first lookup only (and not at all when interrupted); its exception carries the run id
 *       and says whether the sandbox may still exist. Outcomes are logged and counted in
 *       {@link #lifecycleStats()}; {@link #close()} waits a bounded time for searches still going on;</li>
 *   <li>writes input files, runs trusted setup commands, then locks the egress down, tearing the
 *       sandbox down if any of it fails;</li>
 *   <li>runs one execution at a time and builds the {@link RunResult} from the output limiter;</li>
 *   <li>tears down in {@code close()} on its own deadline, retrying retriable failures, with the
 *       thread's interrupt flag cleared during teardown and restored after it;</li>
 *   <li>tears the sandbox down at once when the calling thread is interrupted mid-run;</li>
 *   <li>sweeps orphans: lists the sandboxes carrying this library's labels (scoped to the runner's
 *       {@link Builder#owner owner}) and destroys the expired ones or those named by run id;</li>
 *   <li>tells its {@link Builder#lifecycleListener lifecycle listener} about every create, exec and
 *       teardown, and about every sandbox that may have leaked (metrics and traces).</li>
 * </ol>
 *
 * @since 0.1.0
 */
public final class ManagedSandboxRunner<H extends SandboxHandle> implements SandboxRunner {
    private static final Logger log = LoggerFactory.getLogger(ManagedSandboxRunner.class);
    private static final int SETUP_OUTPUT_LIMIT = 2_000;
    /** Added to the driver's create deadline: clocks differ, and a list may lag a create. */
    public static final Duration LOST_CREATE_MARGIN = Duration.ofSeconds(30);
    private static final Pattern OWNER = Pattern.compile("[A-Za-z0-9._-]{1,63}");
    private static final int UNRESOLVED_IDS_KEPT = 1_000;
    private static final AtomicInteger REAPER_THREADS = new AtomicInteger();

    private final SandboxDriver<H> driver;
    private final Duration teardownTimeout;
    private final int maxCreateAttempts;
    private final Backoff backoff;
    private final Backoff teardownBackoff;
    private final Backoff lookupBackoff;
    private final String owner;
    private final Duration lostCreateWindow;
    private final Duration firstLookupWait;
    private final Duration closeDrainTimeout;
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
    private final AtomicBoolean closed = new AtomicBoolean();
    private final Observed observed;

    private ManagedSandboxRunner(Builder<H> b) {
        this.driver = b.driver;
        this.teardownTimeout = b.teardownTimeout;
        this.maxCreateAttempts = b.maxCreateAttempts;
        this.backoff = b.backoff();
        // teardown and lookups: no jitter (nothing to spread), shorter caps
        this.teardownBackoff = backoff.toBuilder().max(Duration.ofSeconds(4)).jitter(0).build();
        this.lookupBackoff = backoff.toBuilder().base(Duration.ofMillis(250)).max(Duration.ofSeconds(4)).jitter(0).build();
        this.owner = b.owner;
        this.lostCreateWindow = b.lostCreateWindow;
        this.firstLookupWait = b.firstLookupWait;
        this.closeDrainTimeout = b.closeDrainTimeout;
        this.observed = new Observed(b.listener, driver.provider());
        // Two threads at most, none while idle: lookups wait on the scheduler, not on a sleeping thread.
        this.reaper = new ScheduledThreadPoolExecutor(2, r -> {
            Thread t = new Thread(r, "sandbox4j-reaper-" + driver.provider() + "-" + REAPER_THREADS.incrementAndGet());
            t.setDaemon(true);
            return t;
        });
        this.reaper.setKeepAliveTime(10, TimeUnit.SECONDS);
        this.reaper.allowCoreThreadTimeOut(true);
        this.reaper.setRemoveOnCancelPolicy(true);
    }

    public static <H extends SandboxHandle> ManagedSandboxRunner<H> of(SandboxDriver<H> driver) {
        return builder(driver).build();
    }

    public static <H extends SandboxHandle> Builder<H> builder(SandboxDriver<H> driver) {
        return new Builder<>(driver);
    }

    @Override
    public String name() {
        return driver.provider();
    }

    @Override
    public Capabilities capabilities() {
        return driver.capabilities();
    }

    /** The driver, for adapters' own tests. */
    public SandboxDriver<H> driver() {
        return driver;
    }

    @Override
    public Sandbox open(SandboxSpec spec) {
        return openManaged(spec);
    }

    private ManagedSandbox openManaged(SandboxSpec spec) {
        return observed.create(() -> openUnobserved(spec), s -> s.attempts().size());
    }

    private ManagedSandbox openUnobserved(SandboxSpec spec) {
        Objects.requireNonNull(spec, "spec");
        checkSpec(spec);
        String runId = RunIds.next();
        CreateRequest request = new CreateRequest(runId, spec, owner, Instant.now());
        List<Attempt> attempts = new ArrayList<>();
        H handle = create(request, attempts);
        try {
            if (!spec.files().isEmpty()) {
                driver.writeFiles(handle, spec.files());
            }
            runSetup(handle, spec);
            if (spec.needsLockDown()) {
                driver.updateEgress(handle, spec.egress());
                log.debug("{} sandbox {} locked down to {}", name(), handle.id(), spec.egress());
            }
        } catch (InterruptedException e) {
            boolean gone = finish(handle, runId) != Teardown.FAILED;
            Thread.currentThread().interrupt();
            throw interrupted("interrupted while preparing the sandbox" + (gone ? "" : leftNote(runId)), false)
                    .attachRunId(runId, !gone);
        } catch (SandboxException e) {
            boolean gone = finish(handle, runId) != Teardown.FAILED;
            throw e.attachRunId(runId, !gone, gone ? "" : leftNote(runId));
        } catch (RuntimeException | Error e) {
            finish(handle, runId);
            throw e;
        }
        return new ManagedSandbox(handle, runId, attempts);
    }

    /** Open, one exec, close, and the result built once, with the teardown outcome in it. */
    @Override
    public RunResult run(RunRequest request) {
        ManagedSandbox sandbox = openManaged(request.oneShotSpec());
        Ran ran;
        try {
            ran = sandbox.execute(request.execution());
        } catch (SandboxException e) {
            sandbox.close();
            if (sandbox.teardown() == Teardown.FAILED && !e.sandboxMayExist()) {
                // the caller gets no result to read the teardown from: the exception says it
                e.attachRunId(sandbox.runId(), true, leftNote(sandbox.runId()));
            }
            throw e;
        } finally {
            sandbox.close();
        }
        return sandbox.result(ran);
    }

    /**
     * Waits up to the close-drain timeout for lookups of ambiguous creates still going on, records
     * those left as unresolved (their run ids stay in {@link #lifecycleStats()}), then releases the
     * driver. Idempotent.
     */
    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        boolean interrupted = Thread.interrupted();
        long end = System.nanoTime() + closeDrainTimeout.toNanos();
        try {
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
                        + " until its lifetime ends (sweep it by run id)", name(), r.runId);
                complete(r, Outcome.UNRESOLVED);
            }
            reaper.shutdownNow();
            driver.close();
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    @Override
    public LifecycleStats lifecycleStats() {
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

    @Override
    public SweepResult sweep(SweepRequest request) {
        Objects.requireNonNull(request, "request");
        if (request.needsOwner() && owner == null) {
            throw new IllegalStateException(name() + ": a sweep of expired or all sandboxes needs the runner's owner"
                    + " label (set owner(...) on the runner's builder); without it only run ids can be swept");
        }
        AtomicBoolean interrupted = new AtomicBoolean(Thread.interrupted());
        try {
            Map<String, H> matched = new java.util.LinkedHashMap<>();
            int listed = 0;
            if (request.needsOwner()) {
                long now = Instant.now().getEpochSecond();
                List<Labelled<H>> all = deferInterrupts(() -> driver.listLabelled(owner), interrupted);
                for (Labelled<H> l : all) {
                    String runId = l.labels().get(CreateRequest.RUN_ID_LABEL);
                    if (runId == null || !owner.equals(l.labels().get(CreateRequest.OWNER_LABEL))) {
                        continue; // never trust the server's filter: not ours, not this owner's
                    }
                    listed++;
                    if (request.includesAllOfOwner() || request.runIdsToDestroy().contains(runId)
                            || (request.includesExpired() && expired(l.labels(), now))) {
                        matched.putIfAbsent(l.handle().id(), l.handle());
                    }
                }
            }
            for (String runId : request.runIdsToDestroy()) {
                for (H h : deferInterrupts(() -> driver.findByRunId(runId), interrupted)) {
                    listed++;
                    matched.putIfAbsent(h.id(), h);
                }
            }
            List<String> destroyed = new ArrayList<>();
            List<String> gone = new ArrayList<>();
            List<String> failed = new ArrayList<>();
            for (H h : matched.values()) {
                Teardown t = teardown(h);
                driver.release(h);
                (t == Teardown.DESTROYED ? destroyed : t == Teardown.ALREADY_GONE ? gone : failed).add(h.id());
            }
            SweepResult result = SweepResult.builder().listed(listed).destroyed(destroyed).alreadyGone(gone)
                    .failed(failed).build();
            log.info("{} sweep {}: {}", name(), request, result);
            return result;
        } finally {
            if (interrupted.get() || Thread.interrupted()) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private static boolean expired(Map<String, String> labels, long nowEpochSeconds) {
        try {
            String v = labels.get(CreateRequest.EXPIRES_LABEL);
            return v != null && Long.parseLong(v) < nowEpochSeconds;
        } catch (NumberFormatException e) {
            return false;
        }
    }

    private interface Lookup<T> {
        T get() throws InterruptedException;
    }

    /** Runs a lookup to its end whatever interrupts arrive; {@code seen} records them for the caller to restore. */
    private <T> T deferInterrupts(Lookup<T> lookup, AtomicBoolean seen) {
        for (int i = 0; ; i++) {
            try {
                return lookup.get();
            } catch (InterruptedException e) {
                seen.set(true);
                if (i >= 3) {
                    throw interrupted("interrupted repeatedly during a sweep", false);
                }
            }
        }
    }

    /** Teardown, then release, of a sandbox opened by this lifecycle; a failure is counted and recorded. */
    private Teardown finish(H handle, String runId) {
        Teardown t = teardown(handle);
        driver.release(handle);
        if (t == Teardown.FAILED) {
            teardownFailures.incrementAndGet();
            recordUnresolved(runId);
            observed.leak(LeakSuspected.Reason.TEARDOWN_FAILED, runId);
        }
        return t;
    }

    private static String leftNote(String runId) {
        return "; its teardown failed, so a sandbox with run id " + runId + " may exist until its lifetime ends";
    }

    private void recordUnresolved(String runId) {
        synchronized (unresolvedRunIds) {
            if (unresolvedRunIds.size() >= UNRESOLVED_IDS_KEPT) {
                unresolvedRunIds.removeFirst();
            }
            unresolvedRunIds.addLast(runId);
        }
    }

    @Override
    public String toString() {
        return "ManagedSandboxRunner[" + name() + "]";
    }

    private void checkSpec(SandboxSpec spec) {
        Capabilities caps = capabilities();
        List<String> v = new ArrayList<>(caps.violations(spec.egress(), spec.limits()));
        if (spec.needsLockDown()) {
            caps.violations(spec.setupEgress(), Limits.defaults()).forEach(s -> v.add("setup egress: " + s));
            if (!caps.supports(Capabilities.Egress.LIVE_UPDATE)) {
                v.add("a setup egress different from the code's egress (" + name()
                        + " cannot change egress on a live sandbox, so the code would run under the setup egress)");
            }
        }
        if (!spec.setupCommands().isEmpty() && !caps.supports(Capabilities.Feature.SETUP_COMMANDS)) {
            v.add("setup commands (" + name() + " does not run them)");
        }
        if (!spec.files().isEmpty() && !caps.supports(Capabilities.Feature.INPUT_FILES)) {
            v.add("input files (" + name() + " cannot write them)");
        }
        if (!spec.env().isEmpty() && !caps.supports(Capabilities.Feature.ENV)) {
            v.add("environment variables (" + name() + " cannot set them)");
        }
        if (!v.isEmpty()) {
            throw new UnsupportedPolicyException(name(), v);
        }
    }

    private H create(CreateRequest request, List<Attempt> attempts) {
        String runId = request.runId();
        for (int attempt = 1; ; attempt++) {
            long t0 = System.nanoTime();
            try {
                H handle = driver.create(request);
                attempts.add(Attempt.succeeded(name(), since(t0)));
                log.debug("{} sandbox {} created (run id {})", name(), handle.id(), runId);
                return handle;
            } catch (InterruptedException e) {
                attempts.add(Attempt.failed(name(), e, since(t0)));
                // the caller gets its exception at once; the lookup goes on without it
                Resolution r = resolve(request, t0);
                Thread.currentThread().interrupt();
                throw interrupted("interrupted while creating the sandbox" + note(r), false)
                        .attachRunId(runId, r.outcome() != Outcome.DESTROYED);
            } catch (SandboxException e) {
                attempts.add(Attempt.failed(name(), e, since(t0)));
                if (e.requestMayHaveSucceeded()) {
                    log.warn("{} create failed with an unknown outcome ({}); looking for run id {} to destroy it",
                            name(), e.getMessage(), runId);
                    Resolution r = resolve(request, t0);
                    r.awaitFirstLookup(firstLookupWait);
                    throw e.attachRunId(runId, r.outcome() != Outcome.DESTROYED, note(r));
                }
                Duration delay = retryDelay(e, attempt);
                if (delay == null) {
                    throw e.attachRunId(runId, false);
                }
                log.debug("{} create failed ({}), retrying in {} ms", name(), e.getMessage(), delay.toMillis());
                try {
                    backoff.sleep(delay);
                } catch (InterruptedException ie) {
                    Thread.currentThread().interrupt();
                    throw interrupted("interrupted while waiting to retry the create", false).attachRunId(runId, false);
                }
            } catch (UnsupportedPolicyException e) {
                // a refusal: by the driver's contract nothing is left running
                attempts.add(Attempt.failed(name(), e, since(t0)));
                throw e;
            } catch (RuntimeException | Error e) {
                // an adapter bug or an answer it could not read: the sandbox may exist all the same
                attempts.add(Attempt.failed(name(), e, since(t0)));
                log.warn("{} create failed unexpectedly ({}); looking for run id {} to destroy it",
                        name(), e.getClass().getSimpleName(), runId);
                resolve(request, t0).awaitFirstLookup(firstLookupWait);
                throw e;
            }
        }
    }

    private static String note(Resolution r) {
        switch (r.outcome()) {
            case DESTROYED:
                return "; the sandbox it created (run id " + r.runId + ") was found and destroyed";
            case NOTHING:
                return "; no sandbox with run id " + r.runId + " was created";
            case UNRESOLVED:
                return "; a sandbox with run id " + r.runId + " may exist: it could not be found and destroyed,"
                        + " and its lifetime bounds it (sweep it by run id)";
            default:
                return "; a sandbox with run id " + r.runId + " may exist: it is being looked up in the background"
                        + " until it is found and destroyed or can no longer appear";
        }
    }

    // ---------------------------------------------------------------- lost-create resolution

    enum Outcome { PENDING, DESTROYED, NOTHING, UNRESOLVED }

    /** One ambiguous create being resolved on the reaper. */
    private static final class Resolution {
        final String runId;
        final long deadlineNanos;
        final CountDownLatch firstLookup = new CountDownLatch(1);
        final AtomicBoolean done = new AtomicBoolean();
        volatile Outcome outcome = Outcome.PENDING;
        volatile boolean lastLookupFailed;
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
    }

    /** Starts resolving an ambiguous create sent at {@code sentNanos}; never blocks. */
    private Resolution resolve(CreateRequest request, long sentNanos) {
        Duration window = lostCreateWindow != null ? lostCreateWindow : driver.createDeadline().plus(LOST_CREATE_MARGIN);
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
                    name(), r.runId);
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
                for (H h : found) {
                    Teardown t = teardown(h);
                    driver.release(h);
                    allDown &= t != Teardown.FAILED;
                    log.warn("{} sandbox {} from an ambiguous create (run id {}): {}", name(), h.id(), r.runId, t);
                }
                complete(r, allDown ? Outcome.DESTROYED : Outcome.UNRESOLVED);
                return;
            }
        } catch (InterruptedException e) {
            complete(r, Outcome.UNRESOLVED); // only shutdownNow() interrupts a reaper thread
            return;
        } catch (RuntimeException e) {
            r.lastLookupFailed = true;
            log.debug("{}: lookup of run id {} failed ({}); trying again", name(), r.runId, e.getMessage());
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
                log.debug("{}: no sandbox with run id {} appeared before its create deadline", name(), r.runId);
                break;
            default:
                unresolved.incrementAndGet();
                recordUnresolved(r.runId);
                observed.leak(LeakSuspected.Reason.CREATE_UNRESOLVED, r.runId);
                log.warn("{}: run id {} is unresolved; a sandbox may exist until its lifetime ends", name(), r.runId);
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

    /** Null when the failure must not be retried. */
    private Duration retryDelay(SandboxException e, int attempt) {
        if (!e.isRetriable() || attempt >= maxCreateAttempts) {
            return null;
        }
        return backoff.delay(attempt, e.retryAfter()).orElse(null);
    }

    private void runSetup(H handle, SandboxSpec spec) throws InterruptedException {
        int i = 0;
        for (String command : spec.setupCommands()) {
            i++;
            Execution e = Execution.builder(command).language(Language.BASH).budget(spec.setupBudget())
                    .outputLimit(SETUP_OUTPUT_LIMIT).build();
            OutputSink sink = new OutputSink(e);
            ExecOutcome o = driver.exec(handle, e, sink);
            if (o.status() != RunStatus.EXITED || o.exitCode() == null || o.exitCode() != 0) {
                // Daytona merges stderr into stdout, so fall back to it; trusted output, but still cleaned.
                String err = sink.stderrLimiter().text().strip();
                if (err.isEmpty()) {
                    err = sink.stdoutLimiter().text().strip();
                }
                err = OutputLimiter.stripControlCharacters(err);
                throw SandboxException.builder("setup command " + i + " of " + spec.setupCommands().size()
                                + " ended with " + o + (err.isEmpty() ? "" : ": " + err))
                        .provider(name()).build();
            }
        }
    }

    /** Destroys with retries until the teardown deadline; interrupt flag cleared during, restored after. */
    Teardown teardown(H handle) {
        return observed.teardown(() -> destroyWithRetries(handle));
    }

    private Teardown destroyWithRetries(H handle) {
        boolean interrupted = Thread.interrupted();
        long deadline = teardownBackoff.nanoTime() + teardownTimeout.toNanos();
        try {
            for (int attempt = 1; ; attempt++) {
                try {
                    boolean destroyed = driver.destroy(handle);
                    Teardown t = destroyed ? Teardown.DESTROYED : Teardown.ALREADY_GONE;
                    log.debug("{} sandbox {} torn down: {}", name(), handle.id(), t);
                    return t;
                } catch (InterruptedException e) {
                    interrupted = true; // finish the teardown first; the flag is restored below
                } catch (SandboxException e) {
                    if (!e.isRetriable()) {
                        log.warn("{} sandbox {} teardown failed: {}", name(), handle.id(), e.getMessage());
                        return Teardown.FAILED;
                    }
                    log.debug("{} sandbox {} teardown attempt {} failed: {}", name(), handle.id(), attempt, e.getMessage());
                } catch (RuntimeException e) {
                    log.warn("{} sandbox {} teardown failed: {}", name(), handle.id(), e.toString());
                    return Teardown.FAILED;
                }
                Duration delay = teardownBackoff.delay(attempt);
                if (teardownBackoff.nanoTime() + delay.toNanos() - deadline >= 0) {
                    log.warn("{} sandbox {} teardown failed after {} attempts; its lifetime will expire it",
                            name(), handle.id(), attempt);
                    return Teardown.FAILED;
                }
                try {
                    teardownBackoff.sleep(delay);
                } catch (InterruptedException e) {
                    interrupted = true;
                }
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private SandboxInterruptedException interrupted(String message, boolean codeMayHaveRun) {
        return new SandboxInterruptedException(SandboxException.builder(message).provider(name())
                .codeMayHaveRun(codeMayHaveRun));
    }

    private static Duration since(long t0) {
        return Duration.ofNanos(System.nanoTime() - t0);
    }

    /** What one exec produced, before it becomes a {@link RunResult}. */
    private static final class Ran {
        final Execution execution;
        final OutputSink sink;
        final ExecOutcome outcome;
        final Duration duration;
        final FileCollector.Collected files;

        Ran(Execution execution, OutputSink sink, ExecOutcome outcome, Duration duration, FileCollector.Collected files) {
            this.execution = execution;
            this.sink = sink;
            this.outcome = outcome;
            this.duration = duration;
            this.files = files;
        }

        RunStatus status() {
            return sink.capped() ? RunStatus.OUTPUT_LIMIT : outcome.status();
        }
    }

    private final class ManagedSandbox implements Sandbox {
        private final H handle;
        private final String runId;
        private final List<Attempt> attempts;
        private final ReentrantLock execLock = new ReentrantLock();
        private final ReentrantLock closeLock = new ReentrantLock(); // held across the teardown's HTTP calls
        private volatile boolean closed;
        private volatile Teardown teardown = Teardown.OPEN;

        ManagedSandbox(H handle, String runId, List<Attempt> attempts) {
            this.handle = handle;
            this.runId = runId;
            this.attempts = List.copyOf(attempts);
        }

        @Override
        public String id() {
            return handle.id();
        }

        @Override
        public String provider() {
            return name();
        }

        @Override
        public String runId() {
            return runId;
        }

        @Override
        public List<Attempt> attempts() {
            return attempts;
        }

        @Override
        public RunResult exec(Execution execution) {
            return result(execute(execution));
        }

        /** Runs one execution; the result is built from what it returns, once. */
        Ran execute(Execution execution) {
            return observed.exec(() -> executeUnobserved(execution), Ran::status);
        }

        private Ran executeUnobserved(Execution execution) {
            Objects.requireNonNull(execution, "execution");
            ensureOpen();
            try {
                execLock.lockInterruptibly();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw interrupted("interrupted while waiting for the previous exec", false);
            }
            try {
                ensureOpen();
                if (!execution.collect().isEmpty()) {
                    FileCollector.check(capabilities(), execution.collect());
                }
                OutputSink sink = new OutputSink(execution);
                long t0 = System.nanoTime();
                ExecOutcome outcome;
                FileCollector.Collected files = FileCollector.Collected.NONE;
                try {
                    try {
                        outcome = driver.exec(handle, execution, sink);
                    } finally {
                        sink.finish(); // the listener gets the last characters, on an interrupt too
                    }
                    Duration ran = since(t0);
                    if (!execution.collect().isEmpty()) {
                        // before any teardown: a one-shot run closes only after this returns
                        files = new FileCollector(new FileCollector.Source() {
                            @Override
                            public SandboxFile read(String path, long maxBytes) throws InterruptedException {
                                return driver.readFile(handle, path, maxBytes);
                            }

                            @Override
                            public List<FileEntry> list(String directory) throws InterruptedException {
                                return driver.listFiles(handle, directory);
                            }
                        }, execution).collect();
                    }
                    return new Ran(execution, sink, outcome, ran, files);
                } catch (InterruptedException e) {
                    close();
                    Thread.currentThread().interrupt();
                    boolean gone = teardown != Teardown.FAILED;
                    throw interrupted("interrupted during exec; sandbox " + handle.id() + " torn down: " + teardown
                            + (gone ? "" : leftNote(runId)), true).attachRunId(runId, !gone);
                }
            } finally {
                execLock.unlock();
            }
        }

        @Override
        public SandboxFile readFile(String path, long maxBytes) {
            if (!capabilities().supports(Capabilities.Feature.READ_FILES)) {
                throw new UnsupportedOperationException(name() + " cannot read files back");
            }
            if (maxBytes < 0) {
                throw new IllegalArgumentException("maxBytes must not be negative, was " + maxBytes);
            }
            String p = SandboxPaths.normalize(path);
            if (p.isEmpty()) {
                throw new IllegalArgumentException("path names the working directory, not a file");
            }
            return underLock(() -> driver.readFile(handle, p, maxBytes), "reading " + p);
        }

        @Override
        public List<FileEntry> listFiles(String directory) {
            if (!capabilities().supports(Capabilities.Feature.LIST_FILES)) {
                throw new UnsupportedOperationException(name() + " cannot list files");
            }
            String p = SandboxPaths.normalize(directory);
            return underLock(() -> driver.listFiles(handle, p), "listing " + (p.isEmpty() ? "." : p));
        }

        /** A file call: one at a time with exec, on an open sandbox; an interrupt leaves the sandbox open. */
        private <T> T underLock(Lookup<T> call, String what) {
            ensureOpen();
            try {
                execLock.lockInterruptibly();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw interrupted("interrupted while waiting for the previous exec", false);
            }
            try {
                ensureOpen();
                return call.get();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw interrupted("interrupted while " + what + " in sandbox " + handle.id(), false);
            } finally {
                execLock.unlock();
            }
        }

        RunResult result(Ran ran) {
            return result(ran.execution, ran.sink, ran.outcome, ran.duration, ran.files);
        }

        private RunResult result(Execution execution, OutputSink sink, ExecOutcome outcome, Duration duration,
                FileCollector.Collected files) {
            OutputLimiter out = sink.stdoutLimiter();
            OutputLimiter err = sink.stderrLimiter();
            String stdout = out.text();
            String stderr = err.text();
            if (execution.stripControlCharacters()) {
                stdout = OutputLimiter.stripControlCharacters(stdout);
                stderr = OutputLimiter.stripControlCharacters(stderr);
            }
            return RunResult.builder()
                    .stdout(stdout).stderr(stderr)
                    .stdoutTruncated(out.truncated()).stderrTruncated(err.truncated())
                    .stdoutBytes(out.totalBytes()).stderrBytes(err.totalBytes())
                    .status(sink.capped() ? RunStatus.OUTPUT_LIMIT : outcome.status())
                    .exitCode(outcome.exitCode())
                    .duration(duration)
                    .provider(name())
                    .sandboxId(handle.id())
                    .teardown(teardown)
                    .attempts(attempts)
                    .files(files.files())
                    .fileProblems(files.problems())
                    .richResults(sink.results())
                    .build();
        }

        private void ensureOpen() {
            if (closed) {
                throw new IllegalStateException("sandbox " + handle.id() + " is closed (" + teardown + ")");
            }
        }

        @Override
        public boolean isClosed() {
            return closed;
        }

        @Override
        public Teardown teardown() {
            return teardown;
        }

        @Override
        public void close() {
            closeLock.lock();
            try {
                if (closed) {
                    return;
                }
                closed = true;
                teardown = finish(handle, runId);
            } finally {
                closeLock.unlock();
            }
        }

        @Override
        public String toString() {
            return "Sandbox[" + name() + " " + handle.id() + ", run id " + runId + ", " + teardown + "]";
        }
    }

    public static final class Builder<H extends SandboxHandle> {
        private final SandboxDriver<H> driver;
        private Duration teardownTimeout = Duration.ofSeconds(30);
        private int maxCreateAttempts = 3;
        private Duration retryBaseDelay = Duration.ofMillis(500);
        private Duration maxRetryAfter = Duration.ofSeconds(20);
        private Backoff backoff;
        private String owner;
        private Duration lostCreateWindow;
        private Duration firstLookupWait = Duration.ofSeconds(10);
        private Duration closeDrainTimeout = Duration.ofSeconds(10);
        private LifecycleListener listener = LifecycleListener.NONE;

        private Builder(SandboxDriver<H> driver) {
            this.driver = Objects.requireNonNull(driver, "driver");
        }

        /** How long teardown keeps retrying before it reports {@link Teardown#FAILED}. Default 30 s. */
        public Builder<H> teardownTimeout(Duration d) {
            this.teardownTimeout = Objects.requireNonNull(d);
            return this;
        }

        /** Tries per create for failures that certainly created nothing (429, refused connection). Default 3. */
        public Builder<H> maxCreateAttempts(int n) {
            if (n < 1) {
                throw new IllegalArgumentException("maxCreateAttempts must be at least 1");
            }
            this.maxCreateAttempts = n;
            return this;
        }

        /** The first backoff delay, doubled per attempt. Default 500 ms. */
        public Builder<H> retryBaseDelay(Duration d) {
            this.retryBaseDelay = Objects.requireNonNull(d);
            return this;
        }

        /**
         * The whole backoff policy (its sleeper and clock among them, for tests). Overrides
         * {@link #retryBaseDelay} and {@link #maxRetryAfter}.
         */
        public Builder<H> backoff(Backoff backoff) {
            this.backoff = Objects.requireNonNull(backoff, "backoff");
            return this;
        }

        Backoff backoff() {
            return backoff != null ? backoff
                    : Backoff.builder().base(retryBaseDelay).maxRetryAfter(maxRetryAfter).build();
        }

        /** A Retry-After longer than this is not waited for; the error is thrown. Default 20 s. */
        public Builder<H> maxRetryAfter(Duration d) {
            this.maxRetryAfter = Objects.requireNonNull(d);
            return this;
        }

        /**
         * The owner label ({@value CreateRequest#OWNER_LABEL}) put on every sandbox with its expiry, so
         * {@link ManagedSandboxRunner#sweep} can find this owner's orphans and no one else's: a stable
         * name per replica (a pod name, a host name). Letters, digits, '.', '_' and '-', at most 63.
         * Default none (no owner or expiry label is sent, and only run ids can be swept).
         */
        public Builder<H> owner(String owner) {
            if (owner != null && !OWNER.matcher(owner).matches()) {
                throw new IllegalArgumentException("owner '" + owner + "' must be 1 to 63 of [A-Za-z0-9._-]");
            }
            this.owner = owner;
            return this;
        }

        /**
         * How long after an ambiguous create its run id is looked up before the create counts as having
         * created nothing. Default: the driver's {@link SandboxDriver#createDeadline()} plus
         * {@link #LOST_CREATE_MARGIN}; never longer than the lifetime the create asked for.
         */
        public Builder<H> lostCreateWindow(Duration d) {
            if (d != null && (d.isNegative() || d.isZero())) {
                throw new IllegalArgumentException("lostCreateWindow must be positive");
            }
            this.lostCreateWindow = d;
            return this;
        }

        /** How long a caller whose create had an unknown outcome waits for the first lookup. Default 10 s. */
        public Builder<H> firstLookupWait(Duration d) {
            this.firstLookupWait = Objects.requireNonNull(d);
            return this;
        }

        /** How long {@code close()} waits for lookups still going on. Default 10 s. */
        public Builder<H> closeDrainTimeout(Duration d) {
            this.closeDrainTimeout = Objects.requireNonNull(d);
            return this;
        }

        /** Hears every create, exec, teardown and suspected leak (metrics, traces). Default none. */
        public Builder<H> lifecycleListener(LifecycleListener listener) {
            this.listener = Objects.requireNonNull(listener, "listener");
            return this;
        }

        public ManagedSandboxRunner<H> build() {
            return new ManagedSandboxRunner<>(this);
        }
    }
}
