package dev.sandbox4j.api.spi;

import dev.sandbox4j.api.Attempt;
import dev.sandbox4j.api.Execution;
import dev.sandbox4j.api.RunResult;
import dev.sandbox4j.api.RunStatus;
import dev.sandbox4j.api.Sandbox;
import dev.sandbox4j.api.SandboxException;
import dev.sandbox4j.api.SandboxInterruptedException;
import dev.sandbox4j.api.SandboxRunner;
import dev.sandbox4j.api.SandboxSpec;
import dev.sandbox4j.api.Teardown;
import dev.sandbox4j.api.internal.RunIds;
import dev.sandbox4j.policy.Capabilities;
import dev.sandbox4j.policy.Language;
import dev.sandbox4j.policy.Limits;
import dev.sandbox4j.policy.UnsupportedPolicyException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.locks.ReentrantLock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The one sandbox lifecycle, shared by every adapter: an adapter supplies a {@link SandboxDriver}
 * and gets a {@link SandboxRunner} that
 * <ol>
 *   <li>refuses, before any call, every rule of the spec the provider cannot enforce exactly;</li>
 *   <li>labels each sandbox with a fresh run id and retries a create that certainly failed
 *       (429, refused connection) with backoff, honouring Retry-After;</li>
 *   <li>after a create whose outcome is unknown (timeout, dropped connection, 5xx), finds the
 *       sandbox by its run id and destroys it, and never retries blindly;</li>
 *   <li>writes input files, runs trusted setup commands, then locks the egress down, tearing the
 *       sandbox down if any of it fails;</li>
 *   <li>runs one execution at a time and builds the {@link RunResult} from the output limiter;</li>
 *   <li>tears down in {@code close()} on its own deadline, retrying retriable failures, with the
 *       thread's interrupt flag cleared during teardown and restored after it;</li>
 *   <li>tears the sandbox down at once when the calling thread is interrupted mid-run.</li>
 * </ol>
 */
public final class ManagedSandboxRunner<H extends SandboxHandle> implements SandboxRunner {
    private static final Logger log = LoggerFactory.getLogger(ManagedSandboxRunner.class);
    private static final int SETUP_OUTPUT_LIMIT = 2_000;

    private final SandboxDriver<H> driver;
    private final Duration teardownTimeout;
    private final int maxCreateAttempts;
    private final Duration retryBaseDelay;
    private final Duration maxRetryAfter;

    private ManagedSandboxRunner(Builder<H> b) {
        this.driver = b.driver;
        this.teardownTimeout = b.teardownTimeout;
        this.maxCreateAttempts = b.maxCreateAttempts;
        this.retryBaseDelay = b.retryBaseDelay;
        this.maxRetryAfter = b.maxRetryAfter;
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
        Objects.requireNonNull(spec, "spec");
        checkSpec(spec);
        String runId = RunIds.next();
        CreateRequest request = new CreateRequest(runId, spec);
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
            teardown(handle);
            Thread.currentThread().interrupt();
            throw interrupted("interrupted while preparing the sandbox", false);
        } catch (RuntimeException | Error e) {
            teardown(handle);
            throw e;
        }
        return new ManagedSandbox(handle, runId, attempts);
    }

    @Override
    public void close() {
        driver.close();
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
        for (int attempt = 1; ; attempt++) {
            long t0 = System.nanoTime();
            try {
                H handle = driver.create(request);
                attempts.add(Attempt.succeeded(name(), since(t0)));
                log.debug("{} sandbox {} created (run id {})", name(), handle.id(), request.runId());
                return handle;
            } catch (InterruptedException e) {
                attempts.add(Attempt.failed(name(), e, since(t0)));
                recoverLostCreate(request.runId());
                Thread.currentThread().interrupt();
                throw interrupted("interrupted while creating the sandbox", false);
            } catch (SandboxException e) {
                attempts.add(Attempt.failed(name(), e, since(t0)));
                if (e.requestMayHaveSucceeded()) {
                    log.warn("{} create failed with an unknown outcome ({}); looking for run id {} to destroy it",
                            name(), e.getMessage(), request.runId());
                    recoverLostCreate(request.runId());
                    throw e;
                }
                Duration delay = retryDelay(e, attempt);
                if (delay == null) {
                    throw e;
                }
                log.debug("{} create failed ({}), retrying in {} ms", name(), e.getMessage(), delay.toMillis());
                try {
                    Thread.sleep(delay.toMillis());
                } catch (InterruptedException ie) {
                    Thread.currentThread().interrupt();
                    throw interrupted("interrupted while waiting to retry the create", false);
                }
            } catch (UnsupportedPolicyException e) {
                // a refusal: by the driver's contract nothing is left running
                attempts.add(Attempt.failed(name(), e, since(t0)));
                throw e;
            } catch (RuntimeException | Error e) {
                // an adapter bug or an answer it could not read: the sandbox may exist all the same
                attempts.add(Attempt.failed(name(), e, since(t0)));
                log.warn("{} create failed unexpectedly ({}); looking for run id {} to destroy it",
                        name(), e.getClass().getSimpleName(), request.runId());
                recoverLostCreate(request.runId());
                throw e;
            }
        }
    }

    /** Null when the failure must not be retried. */
    private Duration retryDelay(SandboxException e, int attempt) {
        if (!e.isRetriable() || attempt >= maxCreateAttempts) {
            return null;
        }
        if (e.retryAfter().isPresent()) {
            Duration ra = e.retryAfter().get();
            return ra.compareTo(maxRetryAfter) > 0 ? null : ra;
        }
        long base = retryBaseDelay.toMillis() << Math.min(attempt - 1, 4);
        long jitter = ThreadLocalRandom.current().nextLong(base / 4 + 1);
        return Duration.ofMillis(Math.min(base + jitter, 8_000));
    }

    private void recoverLostCreate(String runId) {
        boolean interrupted = Thread.interrupted();
        try {
            List<H> found = driver.findByRunId(runId);
            for (H h : found) {
                Teardown t = teardown(h);
                log.warn("{} sandbox {} from a lost create (run id {}): {}", name(), h.id(), runId, t);
            }
            if (found.isEmpty()) {
                log.debug("{}: no sandbox found for run id {}", name(), runId);
            }
        } catch (InterruptedException e) {
            interrupted = true;
            log.warn("{}: interrupted while looking for run id {}; its lifetime will expire it", name(), runId);
        } catch (RuntimeException e) {
            log.warn("{}: could not look for run id {} ({}); its lifetime will expire it", name(), runId, e.getMessage());
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
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
        boolean interrupted = Thread.interrupted();
        long deadline = System.nanoTime() + teardownTimeout.toNanos();
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
                long delayMs = Math.min(retryBaseDelay.toMillis() << Math.min(attempt - 1, 4), 4_000);
                if (System.nanoTime() + delayMs * 1_000_000 >= deadline) {
                    log.warn("{} sandbox {} teardown failed after {} attempts; its lifetime will expire it",
                            name(), handle.id(), attempt);
                    return Teardown.FAILED;
                }
                try {
                    Thread.sleep(delayMs);
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

    private final class ManagedSandbox implements Sandbox {
        private final H handle;
        private final String runId;
        private final List<Attempt> attempts;
        private final ReentrantLock execLock = new ReentrantLock();
        private final Object closeLock = new Object();
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
                OutputSink sink = new OutputSink(execution);
                long t0 = System.nanoTime();
                ExecOutcome outcome;
                try {
                    outcome = driver.exec(handle, execution, sink);
                } catch (InterruptedException e) {
                    close();
                    Thread.currentThread().interrupt();
                    throw interrupted("interrupted during exec; sandbox " + handle.id() + " torn down: " + teardown, true);
                }
                return result(execution, sink, outcome, since(t0));
            } finally {
                execLock.unlock();
            }
        }

        private RunResult result(Execution execution, OutputSink sink, ExecOutcome outcome, Duration duration) {
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
            synchronized (closeLock) {
                if (closed) {
                    return;
                }
                closed = true;
                teardown = ManagedSandboxRunner.this.teardown(handle);
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

        /** A Retry-After longer than this is not waited for; the error is thrown. Default 20 s. */
        public Builder<H> maxRetryAfter(Duration d) {
            this.maxRetryAfter = Objects.requireNonNull(d);
            return this;
        }

        public ManagedSandboxRunner<H> build() {
            return new ManagedSandboxRunner<>(this);
        }
    }
}
