package dev.sandbox4j.spi.lifecycle;

import dev.sandbox4j.api.PartialOutput;
import dev.sandbox4j.api.Attempt;
import dev.sandbox4j.api.exception.AttachRefusedException;
import dev.sandbox4j.api.exception.AttachUnsupportedException;
import dev.sandbox4j.api.Execution;
import dev.sandbox4j.api.FileEntry;
import dev.sandbox4j.api.SandboxFile;
import dev.sandbox4j.api.SandboxPaths;
import dev.sandbox4j.api.LifecycleListener;
import dev.sandbox4j.api.LifecycleStats;
import dev.sandbox4j.api.RunRequest;
import dev.sandbox4j.api.RunResult;
import dev.sandbox4j.api.RunStatus;
import dev.sandbox4j.api.Sandbox;
import dev.sandbox4j.api.exception.SandboxException;
import dev.sandbox4j.api.exception.SandboxInterruptedException;
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
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.ReentrantLock;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import dev.sandbox4j.spi.Attachable;
import dev.sandbox4j.spi.Backoff;
import dev.sandbox4j.spi.CreateRequest;
import dev.sandbox4j.spi.internal.PolicyLabel;
import dev.sandbox4j.spi.ExecOutcome;
import dev.sandbox4j.spi.OutputLimiter;
import dev.sandbox4j.spi.OutputSink;
import dev.sandbox4j.spi.RunIds;
import dev.sandbox4j.spi.SandboxDriver;
import dev.sandbox4j.spi.SandboxHandle;

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
 *   <li>records the policy each sandbox was created with in a label ({@link CreateRequest#POLICY_LABEL})
 *       and {@link #attach attaches} by id only after checking labels, owner, state and policy (read
 *       back from the provider where the driver can); execs through every object for one sandbox in
 *       this JVM share one lock, and {@link Sandbox#detach()} hands a sandbox on without destroying it;</li>
 *   <li>tells its {@link Builder#lifecycleListener lifecycle listener} about every create, exec and
 *       teardown, and about every sandbox that may have leaked (metrics and traces);</li>
 *   <li>once {@link #close() closed}, refuses new work ({@code open}, {@code attach}, {@code run},
 *       {@code sweep}) with an {@link IllegalStateException}, and tears down the sandboxes it opened or
 *       attached that are still open (a detached sandbox is no longer its to destroy).</li>
 * </ol>
 *
 * <p>The lost-create reaper and counters live in {@code LostCreates}, the sweep in {@code Sweeper}, the
 * retrying teardown in {@code Teardowns} and one sandbox in {@code ManagedSandbox} (package-private).
 *
 * @since 0.1.0
 */
public final class ManagedSandboxRunner<H extends SandboxHandle> implements SandboxRunner {
    private static final Logger log = LoggerFactory.getLogger(ManagedSandboxRunner.class);
    private static final int SETUP_OUTPUT_LIMIT = 2_000;
    /** Added to the driver's create deadline: clocks differ, and a list may lag a create. */
    public static final Duration LOST_CREATE_MARGIN = Duration.ofSeconds(30);
    private static final Pattern OWNER = Pattern.compile("[A-Za-z0-9._-]{1,63}");
    private static final Pattern RUN_ID = Pattern.compile("[a-z0-9]{1,63}");

    private final SandboxDriver<H> driver;
    private final int maxCreateAttempts;
    private final Backoff backoff;
    private final String owner;
    private final Duration firstLookupWait;
    private final Duration closeDrainTimeout;
    /**
     * Opens under way (past their closed check, not yet returned or thrown): {@link #close()} waits for them
     * (within its drain timeout) before it stops the lost-create lookups, so that a create still in flight
     * when the runner is closed, whose outcome turns out ambiguous (a timeout, a lost answer), is still
     * looked up and destroyed, and one that succeeds is torn down while the driver is open.
     */
    private final java.util.concurrent.atomic.AtomicInteger opening = new java.util.concurrent.atomic.AtomicInteger();
    private final Teardowns<H> teardowns;
    private final LostCreates<H> lostCreates;
    private final Sweeper<H> sweeper;
    private final AtomicBoolean closed = new AtomicBoolean();
    // sandboxes opened or attached here and not yet closed or detached: close() tears them down
    private final Set<ManagedSandbox<H>> live = ConcurrentHashMap.newKeySet();
    private final Observed observed;
    // the languages declared instead of the driver's: configured, or found by the probe at build; null for the driver's
    private volatile Set<Language> languages;
    /** The last answer of {@link #capabilities()} with the driver's capabilities and languages it came from. */
    private volatile CapabilitiesWith lastCapabilities;

    private ManagedSandboxRunner(Builder<H> b) {
        this.driver = b.driver;
        this.languages = b.languages;
        this.maxCreateAttempts = b.maxCreateAttempts;
        this.backoff = b.backoff();
        this.owner = b.owner;
        this.firstLookupWait = b.firstLookupWait;
        this.closeDrainTimeout = b.closeDrainTimeout;
        this.observed = new Observed(b.listener, driver.provider());
        // teardown and lookups: no jitter (nothing to spread), shorter caps
        this.teardowns = new Teardowns<>(driver, observed, b.teardownTimeout,
                backoff.toBuilder().max(Duration.ofSeconds(4)).jitter(0).build());
        this.lostCreates = new LostCreates<>(driver, observed, teardowns,
                backoff.toBuilder().base(Duration.ofMillis(250)).max(Duration.ofSeconds(4)).jitter(0).build(),
                b.lostCreateWindow);
        this.sweeper = new Sweeper<>(driver, owner, teardowns);
    }

    /**
     * The lifecycle around {@code driver} with every default: 3 create tries, 30 s teardown, no owner.
     *
     * @param <H> the driver's handle type
     * @param driver the adapter's driver; not null
     * @return the runner
     */
    public static <H extends SandboxHandle> ManagedSandboxRunner<H> of(SandboxDriver<H> driver) {
        return builder(driver).build();
    }

    /**
     * Starts the lifecycle around {@code driver}, to change its retries, deadlines, owner or listener.
     *
     * @param <H> the driver's handle type
     * @param driver the adapter's driver; not null
     * @return a new builder
     */
    public static <H extends SandboxHandle> Builder<H> builder(SandboxDriver<H> driver) {
        return new Builder<>(driver);
    }

    @Override
    public String name() {
        return driver.provider();
    }

    /**
     * The driver's capabilities, with the languages configured for the runner's image or found in it
     * ({@code RunnerBuilder.languages}, {@code probeLanguages}) in place of the driver's own.
     */
    @Override
    public Capabilities capabilities() {
        Set<Language> l = languages;
        Capabilities d = driver.capabilities();
        if (l == null) {
            return d;
        }
        CapabilitiesWith last = lastCapabilities;
        if (last != null && last.driver == d && last.languages == l) {
            return last.result; // asked on every run and exec: not rebuilt while neither changed
        }
        Capabilities result = d.withLanguages(l);
        lastCapabilities = new CapabilitiesWith(d, l, result);
        return result;
    }

    private static final class CapabilitiesWith {
        final Capabilities driver;
        final Set<Language> languages;
        final Capabilities result;

        CapabilitiesWith(Capabilities driver, Set<Language> languages, Capabilities result) {
            this.driver = driver;
            this.languages = languages;
            this.result = result;
        }
    }

    /** The lifecycle listener's adapter, for the sandboxes' execs. */
    Observed observed() {
        return observed;
    }

    /** {@return the driver, for adapters' own tests} */
    public SandboxDriver<H> driver() {
        return driver;
    }

    @Override
    public Sandbox open(SandboxSpec spec) {
        return openManaged(spec);
    }

    /**
     * Refuses code in a language this runner does not declare, before any call: the interpreter is not
     * in the image (or not known to be), so the code would only fail inside the sandbox.
     */
    void checkLanguage(Language language) {
        Capabilities caps = capabilities();
        if (!caps.supports(language)) {
            throw new dev.sandbox4j.api.exception.SandboxConfigurationException(SandboxException.builder(name()
                    + " does not run " + language.id() + " code: it declares " + caps.languages()
                    + ", the languages of its image (set them with the runner's languages(...) or find them with"
                    + " probeLanguages(true))").provider(name()));
        }
    }

    /** A sandbox for the language probe: the same path as {@link #open}. */
    ManagedSandbox<H> openForProbe(SandboxSpec spec) {
        return openManaged(spec);
    }

    private ManagedSandbox<H> openManaged(SandboxSpec spec) {
        return openManaged(spec, null);
    }

    /** With {@code firstProcess}, a one-shot's sandbox whose own first process is that execution. */
    private ManagedSandbox<H> openManaged(SandboxSpec spec, Execution firstProcess) {
        ensureOpen(); // before the listener: a refused call is no create
        List<Attempt> attempts = new ArrayList<>(); // read by the listener's event, failed creates included
        return observed.create(() -> openUnobserved(spec, firstProcess, attempts), attempts::size);
    }

    private ManagedSandbox<H> openUnobserved(SandboxSpec spec, Execution firstProcess, List<Attempt> attempts) {
        opening.incrementAndGet(); // before the check: close() either refuses this open or waits for it
        try {
            return openCounted(spec, firstProcess, attempts);
        } finally {
            if (opening.decrementAndGet() == 0) {
                synchronized (opening) {
                    opening.notifyAll();
                }
            }
        }
    }

    private ManagedSandbox<H> openCounted(SandboxSpec spec, Execution firstProcess, List<Attempt> attempts) {
        Objects.requireNonNull(spec, "spec");
        ensureOpen();
        checkSpec(spec);
        String runId = RunIds.next();
        CreateRequest request = owner == null ? CreateRequest.of(runId, spec) : CreateRequest.of(runId, spec, owner, Instant.now());
        if (firstProcess != null) {
            request = request.withFirstProcess(firstProcess);
        }
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
        return track(new ManagedSandbox<>(this, handle, runId, attempts, SandboxLocks.acquire(name(), handle.id())));
    }

    /**
     * Records a sandbox as live; when {@link #close()} ran meanwhile (it missed this one), tears it down
     * and refuses, so no sandbox outlives a closed runner.
     */
    private ManagedSandbox<H> track(ManagedSandbox<H> sandbox) {
        live.add(sandbox);
        if (closed.get()) {
            sandbox.close();
            throw closedRunner();
        }
        return sandbox;
    }

    /** A live sandbox was closed or detached: the runner no longer tears it down at close. */
    void untrack(ManagedSandbox<H> sandbox) {
        live.remove(sandbox);
    }

    private void ensureOpen() {
        if (closed.get()) {
            throw closedRunner();
        }
    }

    private IllegalStateException closedRunner() {
        return new IllegalStateException("the " + name() + " runner is closed: it takes no more work; build a new runner");
    }

    /**
     * Attaches by id after checking, in this order: the spec can be enforced here at all; the sandbox
     * exists; it carries the run-id label; its owner label equals this runner's owner (both absent
     * counts as equal); it runs; its recorded policy label and, where the driver reads it back, the
     * provider's own report of its egress equal {@code expected}'s. The label covers the lifetime and the
     * egress only: limits, env, files and setup are compared only where the driver reports them (Docker
     * reports limits; the hosted providers do not). Where the provider does not report egress, a spec that
     * locks egress down after setup is refused, since its label cannot show that the lock-down happened.
     * A refusal names every failed check and leaves the sandbox alone: an id alone is no proof that the
     * sandbox is the caller's to kill.
     */
    @Override
    public Sandbox attach(String sandboxId, SandboxSpec expected) {
        Objects.requireNonNull(sandboxId, "sandboxId");
        Objects.requireNonNull(expected, "expected");
        ensureOpen();
        if (!capabilities().supports(Capabilities.Feature.ATTACH)) {
            throw new AttachUnsupportedException(name(), "it does not declare Feature.ATTACH");
        }
        checkSpec(expected);
        long t0 = System.nanoTime();
        Attachable<H> found;
        try {
            found = driver.attach(sandboxId, expected);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw interrupted("interrupted while looking up sandbox " + sandboxId, false);
        }
        Map<String, String> labels = found.labels();
        String runId = labels.get(CreateRequest.RUN_ID_LABEL);
        List<String> reasons = new ArrayList<>();
        if (runId == null || !RUN_ID.matcher(runId).matches()) {
            reasons.add("labels: no " + CreateRequest.RUN_ID_LABEL + " label, so this library did not create it");
        }
        String theirs = labels.get(CreateRequest.OWNER_LABEL);
        if (!Objects.equals(owner, theirs)) {
            reasons.add("owner: the sandbox's owner label is " + (theirs == null ? "absent" : "'" + theirs + "'")
                    + ", this runner's is " + (owner == null ? "unset" : "'" + owner + "'"));
        }
        if (!found.running()) {
            reasons.add("state: the sandbox is " + found.state() + ", not running");
        }
        reasons.addAll(PolicyLabel.differences(labels.get(CreateRequest.POLICY_LABEL), expected));
        if (expected.needsLockDown() && !found.policyReported()) {
            // the label records the code's egress from the create on, before the lock-down ran: a sandbox
            // whose lock-down never happened (a crash during setup) would carry the same label
            reasons.add("egress: the spec locks egress down after setup, and " + name() + " does not report a"
                    + " sandbox's egress, so the lock-down cannot be shown to have happened");
        }
        found.reportedDifferences().forEach(d -> reasons.add("reported by " + name() + ": " + d));
        if (!reasons.isEmpty()) {
            driver.release(found.handle());
            log.debug("{}: refused to attach sandbox {}: {}", name(), sandboxId, reasons); // the exception says it
            throw new AttachRefusedException(name(), sandboxId, reasons);
        }
        log.debug("{} sandbox {} attached (run id {}, egress {})", name(), sandboxId, runId,
                found.policyReported() ? "read back" : "from its label");
        H handle = found.handle();
        return track(new ManagedSandbox<>(this, handle, runId,
                List.of(Attempt.reused(name(), Attempt.Source.ATTACHED, since(t0))), SandboxLocks.acquire(name(), handle.id())));
    }

    /**
     * Open, one exec, close, and the result built once, with the teardown outcome in it. When the spec
     * needs nothing between the create and the code (no input files, setup commands or lock-down) and
     * the driver {@linkplain SandboxDriver#runsAsFirstProcess runs the execution as the sandbox's own
     * first process}, the create carries the execution ({@link CreateRequest#firstProcess()}) and the
     * exec starts the sandbox with it; creates, their retries, lost-create lookups, the exec's events
     * and the teardown are the same either way.
     */
    @Override
    public RunResult run(RunRequest request) {
        checkLanguage(request.execution().language()); // before the create: no sandbox for code that cannot run
        SandboxSpec spec = request.oneShotSpec();
        Execution execution = request.execution();
        boolean first = spec.files().isEmpty() && spec.setupCommands().isEmpty() && !spec.needsLockDown()
                && driver.runsAsFirstProcess(spec, execution);
        ManagedSandbox<H> sandbox = openManaged(spec, first ? execution : null);
        ManagedSandbox.Ran ran;
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
     * Refuses new work from now on, tears down every sandbox opened or attached here that is still open
     * (an exec running in one ends with an error), waits up to the close-drain timeout, in all, first for
     * opens still under way (a create in flight: one that succeeds is torn down, one that turns out
     * ambiguous is looked up) and then for lookups of ambiguous creates still going on, records those
     * left as unresolved (their run ids stay in {@link #lifecycleStats()}), then releases the driver.
     * Idempotent.
     */
    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        boolean interrupted = Thread.interrupted();
        try {
            List<ManagedSandbox<H>> open = new ArrayList<>(live);
            if (!open.isEmpty()) {
                log.info("{}: closing with {} sandbox(es) still open; tearing them down", name(), open.size());
                open.forEach(ManagedSandbox::close); // each close clears and restores the interrupt itself
            }
            long end = System.nanoTime() + closeDrainTimeout.toNanos();
            interrupted |= awaitOpens(end);
            interrupted |= lostCreates.shutdown(Duration.ofNanos(Math.max(0, end - System.nanoTime())));
            driver.close();
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** Waits until no open is under way or {@code end} passes; true when interrupted meanwhile. */
    private boolean awaitOpens(long end) {
        boolean interrupted = false;
        synchronized (opening) {
            while (opening.get() > 0) {
                long left = end - System.nanoTime();
                if (left <= 0) {
                    log.warn("{}: closed with {} open(s) still under way after the drain timeout; a create among them"
                            + " that turns out ambiguous is not looked up", name(), opening.get());
                    break;
                }
                try {
                    java.util.concurrent.TimeUnit.NANOSECONDS.timedWait(opening, left);
                } catch (InterruptedException e) {
                    interrupted = true;
                }
            }
        }
        return interrupted;
    }

    @Override
    public LifecycleStats lifecycleStats() {
        return lostCreates.stats();
    }

    @Override
    public SweepResult sweep(SweepRequest request) {
        ensureOpen();
        return sweeper.sweep(request);
    }

    /** Teardown, then release, of a sandbox opened by this lifecycle; a failure is counted and recorded. */
    Teardown finish(H handle, String runId) {
        Teardown t = teardowns.teardownAndRelease(handle);
        if (t == Teardown.FAILED) {
            lostCreates.teardownFailed(runId);
        }
        return t;
    }

    static String leftNote(String runId) {
        return "; its teardown failed, so a sandbox with run id " + runId + " may exist until its lifetime ends";
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
                LostCreates.Resolution r = lostCreates.resolve(request, t0);
                Thread.currentThread().interrupt();
                throw interrupted("interrupted while creating the sandbox" + r.note(), false)
                        .attachRunId(runId, r.outcome() != LostCreates.Outcome.DESTROYED);
            } catch (SandboxException e) {
                attempts.add(Attempt.failed(name(), e, since(t0)));
                if (e.requestMayHaveSucceeded()) {
                    log.warn("{} create failed with an unknown outcome ({}); looking for run id {} to destroy it",
                            name(), e.getMessage(), runId);
                    LostCreates.Resolution r = lostCreates.resolve(request, t0);
                    r.awaitFirstLookup(firstLookupWait);
                    throw e.attachRunId(runId, r.outcome() != LostCreates.Outcome.DESTROYED, r.note());
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
                lostCreates.resolve(request, t0).awaitFirstLookup(firstLookupWait);
                throw e;
            }
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
                // a command that failed quietly on stderr may have said why on stdout; trusted output, but still cleaned.
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

    SandboxInterruptedException interrupted(String message, boolean codeMayHaveRun) {
        return interrupted(message, codeMayHaveRun, PartialOutput.none());
    }

    SandboxInterruptedException interrupted(String message, boolean codeMayHaveRun, PartialOutput output) {
        return new SandboxInterruptedException(SandboxException.builder(message).provider(name())
                .codeMayHaveRun(codeMayHaveRun), output);
    }

    static Duration since(long t0) {
        return Duration.ofNanos(System.nanoTime() - t0);
    }

    /**
     * Collects the lifecycle's settings; each setter checks its value at once.
     *
     * @param <H> the driver's handle type
     * @since 0.1.0
     */
    public static final class Builder<H extends SandboxHandle> {
        private final SandboxDriver<H> driver;
        private Duration teardownTimeout = dev.sandbox4j.spi.LifecycleOptions.DEFAULT_TEARDOWN_TIMEOUT;
        private int maxCreateAttempts = dev.sandbox4j.spi.LifecycleOptions.DEFAULT_MAX_CREATE_ATTEMPTS;
        private Duration retryBaseDelay = Duration.ofMillis(500);
        private Duration maxRetryAfter = Duration.ofSeconds(20);
        private Backoff backoff;
        private String owner;
        private Duration lostCreateWindow;
        private Duration firstLookupWait = Duration.ofSeconds(10);
        private Duration closeDrainTimeout = Duration.ofSeconds(10);
        private LifecycleListener listener = LifecycleListener.NONE;
        private Set<Language> languages;
        private boolean probeLanguages;

        private Builder(SandboxDriver<H> driver) {
            this.driver = Objects.requireNonNull(driver, "driver");
        }

        /**
         * How long teardown keeps retrying before it reports {@link Teardown#FAILED}. Default 30 s.
         *
         * @param d not null
         * @return this builder
         */
        public Builder<H> teardownTimeout(Duration d) {
            this.teardownTimeout = Objects.requireNonNull(d);
            return this;
        }

        /**
         * Tries per create for failures that certainly created nothing (429, refused connection). Default 3.
         *
         * @param n at least 1
         * @return this builder
         * @throws IllegalArgumentException when below 1
         */
        public Builder<H> maxCreateAttempts(int n) {
            if (n < 1) {
                throw new IllegalArgumentException("maxCreateAttempts must be at least 1");
            }
            this.maxCreateAttempts = n;
            return this;
        }

        /**
         * The first backoff delay, doubled per attempt. Default 500 ms.
         *
         * @param d not null
         * @return this builder
         */
        public Builder<H> retryBaseDelay(Duration d) {
            this.retryBaseDelay = Objects.requireNonNull(d);
            return this;
        }

        /**
         * The whole backoff policy (its sleeper and clock among them, for tests). Overrides
         * {@link #retryBaseDelay} and {@link #maxRetryAfter}.
         *
         * @param backoff not null
         * @return this builder
         */
        public Builder<H> backoff(Backoff backoff) {
            this.backoff = Objects.requireNonNull(backoff, "backoff");
            return this;
        }

        Backoff backoff() {
            return backoff != null ? backoff
                    : Backoff.builder().base(retryBaseDelay).maxRetryAfter(maxRetryAfter).build();
        }

        /**
         * A Retry-After longer than this is not waited for; the error is thrown. Default 20 s.
         *
         * @param d not null
         * @return this builder
         */
        public Builder<H> maxRetryAfter(Duration d) {
            this.maxRetryAfter = Objects.requireNonNull(d);
            return this;
        }

        /**
         * The owner label ({@value CreateRequest#OWNER_LABEL}) put on every sandbox with its expiry, so
         * {@link ManagedSandboxRunner#sweep} can find this owner's orphans and no one else's: a stable
         * name per replica (a pod name, a host name). Letters, digits, '.', '_' and '-', at most 63.
         * Default none (no owner or expiry label is sent, and only run ids can be swept).
         *
         * @param owner the name, or null for none
         * @return this builder
         * @throws IllegalArgumentException when not 1 to 63 of {@code [A-Za-z0-9._-]}
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
         *
         * @param d positive, or null for the default
         * @return this builder
         * @throws IllegalArgumentException when zero or negative
         */
        public Builder<H> lostCreateWindow(Duration d) {
            if (d != null && (d.isNegative() || d.isZero())) {
                throw new IllegalArgumentException("lostCreateWindow must be positive");
            }
            this.lostCreateWindow = d;
            return this;
        }

        /**
         * How long a caller whose create had an unknown outcome waits for the first lookup. Default 10 s.
         *
         * @param d not null
         * @return this builder
         */
        public Builder<H> firstLookupWait(Duration d) {
            this.firstLookupWait = Objects.requireNonNull(d);
            return this;
        }

        /**
         * How long {@code close()} waits for opens still under way (their creates in flight) and then for lookups still
         * going on, in all. Default 10 s.
         *
         * @param d not null
         * @return this builder
         */
        public Builder<H> closeDrainTimeout(Duration d) {
            this.closeDrainTimeout = Objects.requireNonNull(d);
            return this;
        }

        /**
         * Hears every create, exec, teardown and suspected leak (metrics, traces). Default none.
         *
         * @param listener not null; {@link LifecycleListener#NONE} for none
         * @return this builder
         */
        public Builder<H> lifecycleListener(LifecycleListener listener) {
            this.listener = Objects.requireNonNull(listener, "listener");
            return this;
        }

        /**
         * Applies an adapter builder's lifecycle settings ({@link dev.sandbox4j.spi.RunnerBuilder}): the
         * teardown timeout, tries per create, owner, lost-create window and listener always; the retry base
         * delay only when one was set, so a default the adapter set before this call stays.
         *
         * @param options not null
         * @return this builder
         */
        public Builder<H> options(dev.sandbox4j.spi.LifecycleOptions options) {
            teardownTimeout(options.teardownTimeout());
            maxCreateAttempts(options.maxCreateAttempts());
            options.retryBaseDelay().ifPresent(this::retryBaseDelay);
            owner(options.owner().orElse(null));
            lostCreateWindow(options.lostCreateWindow().orElse(null));
            languages = options.languages().orElse(null);
            probeLanguages = options.probeLanguages();
            return lifecycleListener(options.lifecycleListener());
        }

        /**
         * Declares {@code languages} instead of the driver's own (an image of the user's choosing).
         *
         * @param languages not null; at least one
         * @return this builder
         */
        public Builder<H> languages(Set<Language> languages) {
            if (languages.isEmpty()) {
                throw new IllegalArgumentException("at least one language");
            }
            this.languages = Set.copyOf(languages);
            return this;
        }

        /**
         * Finds the image's languages once at {@link #build()} ({@code RunnerBuilder.probeLanguages}).
         *
         * @param probe whether to probe
         * @return this builder
         */
        public Builder<H> probeLanguages(boolean probe) {
            this.probeLanguages = probe;
            return this;
        }

        /**
         * {@return the runner} With {@link #probeLanguages}, the probe runs here; when it fails the
         * runner is closed (its driver released) and the failure is thrown.
         */
        public ManagedSandboxRunner<H> build() {
            ManagedSandboxRunner<H> runner = new ManagedSandboxRunner<>(this);
            if (probeLanguages) {
                try {
                    runner.languages = LanguageProbe.run(runner);
                    log.debug("{}: the image has {}", runner.name(), runner.languages);
                } catch (RuntimeException | Error e) {
                    runner.close();
                    throw e;
                }
            }
            return runner;
        }
    }
}
