package dev.sandbox4j.compose;

import dev.sandbox4j.spi.Backoff;
import dev.sandbox4j.policy.Limits;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Deque;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import dev.sandbox4j.api.Attempt;
import dev.sandbox4j.api.Execution;
import dev.sandbox4j.api.ForwardingSandbox;
import dev.sandbox4j.api.ForwardingSandboxRunner;
import dev.sandbox4j.api.InputFile;
import dev.sandbox4j.api.RunRequest;
import dev.sandbox4j.api.RunResult;
import dev.sandbox4j.api.Sandbox;
import dev.sandbox4j.api.SandboxRunner;
import dev.sandbox4j.api.SandboxSpec;
import dev.sandbox4j.api.SweepRequest;
import dev.sandbox4j.api.SweepResult;

/**
 * A warm pool: keeps {@link Builder#size size} sandboxes of one spec created ahead of demand and hands
 * one out on {@link #open} (and {@link #run}), so a run does not wait for the provider's create.
 *
 * <pre>{@code
 * SandboxSpec spec = SandboxSpec.builder().egress(EgressPolicy.allowOnly("pypi.org")).build();
 * try (WarmPoolRunner pool = WarmPoolRunner.builder(runner, spec).size(4).maxIdle(Duration.ofMinutes(5)).build()) {
 *     RunResult r = pool.run(RunRequest.of(spec, Execution.python("print(1)")));
 * }
 * }</pre>
 *
 * <ul>
 *   <li>Each pooled sandbox is opened on the wrapped runner with the full spec (egress fixed before any
 *       code, files and setup applied, as always) and a lifetime of {@link Builder#maxIdle max idle}
 *       plus {@link Builder#budget budget} plus {@link SandboxSpec#LIFETIME_MARGIN}: the provider's
 *       clock kills what a crashed process leaves in the pool.</li>
 *   <li>A pooled sandbox serves one task and is never put back: closing the handed-out sandbox destroys
 *       it, and the pool opens a fresh one in the background.</li>
 *   <li>A spec is served from the pool when it equals the pool's spec in everything but the lifetime,
 *       and its lifetime (when set, or the one-shot lifetime {@link #run} computes) fits in the budget
 *       plus margin; a spec with no lifetime of its own gets the budget plus margin. Any other spec, an
 *       empty pool, or a pool that cannot refill opens a fresh sandbox on the wrapped runner: nothing
 *       older than max idle is handed out. {@link Sandbox#attempts()} and {@link RunResult#attempts()}
 *       end with an {@link Attempt.Source#POOL} attempt for a pooled sandbox.</li>
 *   <li>Sandboxes idle longer than max idle are retired (destroyed) and replaced. Failed refills are
 *       logged and retried with the {@link Builder#backoff backoff}.</li>
 *   <li>Refill threads are daemon threads, at most {@link Builder#refillThreads}, and exit when there
 *       is nothing to create; delays wait on the JDK's shared delayer, not on a pool thread. Size 0 (the
 *       default) is off: every open goes to the wrapped runner and no thread is started.</li>
 *   <li>{@link #close()} destroys every idle sandbox, waits a bounded time for creates in flight (and
 *       destroys what they return), then closes the wrapped runner (unless
 *       {@link Builder#ownsDelegate ownsDelegate(false)}). Sandboxes already handed out stay the caller's
 *       to close.</li>
 * </ul>
 *
 * @since 0.1.0
 */
public final class WarmPoolRunner extends ForwardingSandboxRunner<SandboxRunner> {
    private static final Logger log = LoggerFactory.getLogger(WarmPoolRunner.class);
    private static final AtomicInteger THREADS = new AtomicInteger();

    private final SandboxSpec spec;
    private final SandboxSpec pooledSpec;
    private final int size;
    private final Duration maxIdle;
    private final Duration servedLifetime;
    private final Duration closeTimeout;
    private final Backoff backoff;
    private final LongSupplier clock;
    private final boolean ownsDelegate;
    private final ThreadPoolExecutor refills;
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition creatingDone = lock.newCondition();
    private final Deque<Idle> idle = new ArrayDeque<>();
    private int creating;
    private int failuresInARow;
    private boolean retryScheduled;
    private boolean closed;
    private final AtomicLong handedOut = new AtomicLong();
    private final AtomicLong fallbacks = new AtomicLong();
    private final AtomicLong retired = new AtomicLong();
    private final AtomicLong refillFailures = new AtomicLong();

    private static final class Idle {
        final Sandbox sandbox;
        final long since;

        Idle(Sandbox sandbox, long since) {
            this.sandbox = sandbox;
            this.since = since;
        }
    }

    private WarmPoolRunner(Builder b) {
        super(b.delegate);
        this.spec = b.spec;
        this.size = b.size;
        this.maxIdle = b.maxIdle;
        this.servedLifetime = b.budget.plus(SandboxSpec.LIFETIME_MARGIN);
        this.closeTimeout = b.closeTimeout;
        this.backoff = b.backoff != null ? b.backoff
                : Backoff.builder().base(Duration.ofSeconds(1)).max(Duration.ofSeconds(60)).build();
        this.clock = b.clock;
        this.ownsDelegate = b.ownsDelegate;
        Duration lifetime = maxIdle.plus(servedLifetime);
        this.pooledSpec = spec.toBuilder().limits(spec.limits().toBuilder().lifetime(lifetime).build()).build();
        this.refills = new ThreadPoolExecutor(b.refillThreads, b.refillThreads, 10, TimeUnit.SECONDS,
                new LinkedBlockingQueue<>(), r -> {
                    Thread t = new Thread(r, "sandbox4j-pool-" + b.delegate.name() + "-" + THREADS.incrementAndGet());
                    t.setDaemon(true);
                    return t;
                });
        this.refills.allowCoreThreadTimeOut(true);
    }

    /**
     * Starts a pool of sandboxes of {@code spec} on {@code delegate}.
     *
     * @param delegate the runner that creates (and destroys) the sandboxes; closed with the pool
     * @param spec the spec every pooled sandbox is opened with (its lifetime is the pool's, see above)
     * @return a builder
     */
    public static Builder builder(SandboxRunner delegate, SandboxSpec spec) {
        return new Builder(delegate, spec);
    }

    @Override
    public String name() {
        return "pool(" + delegate().name() + ")";
    }

    /**
     * A pooled sandbox when {@code spec} matches the pool's and one is ready, else a fresh one from the
     * wrapped runner. Either way the pool refills in the background.
     */
    @Override
    public Sandbox open(SandboxSpec spec) {
        Objects.requireNonNull(spec, "spec");
        ensureOpen();
        if (size == 0 || !serves(spec)) {
            return delegate().open(spec);
        }
        long t0 = System.nanoTime();
        Sandbox pooled = take();
        refill();
        if (pooled == null) {
            fallbacks.incrementAndGet();
            log.debug("{}: no warm sandbox ready, creating one", name());
            return delegate().open(spec);
        }
        handedOut.incrementAndGet();
        return new Pooled(pooled, Attempt.reused(name(), Attempt.Source.POOL, Duration.ofNanos(System.nanoTime() - t0)));
    }

    @Override
    public Sandbox attach(String sandboxId, SandboxSpec expected) {
        ensureOpen();
        return super.attach(sandboxId, expected);
    }

    @Override
    public SweepResult sweep(SweepRequest request) {
        ensureOpen();
        return super.sweep(request);
    }

    /** Closed pools take no work, even when the wrapped runner (not owned) is still open. */
    private void ensureOpen() {
        lock.lock();
        try {
            if (closed) {
                throw new IllegalStateException(name() + " is closed: it takes no more work; build a new runner");
            }
        } finally {
            lock.unlock();
        }
    }

    /** Open (from the pool when the one-shot spec matches), one exec, close. */
    @Override
    public RunResult run(RunRequest request) {
        Sandbox sandbox = open(request.oneShotSpec());
        RunResult result;
        try {
            result = sandbox.exec(request.execution());
        } finally {
            sandbox.close();
        }
        return result.toBuilder().teardown(sandbox.teardown()).build();
    }

    /**
     * The spec equals the pool's but for the lifetime, and the lifetime fits in what a pooled sandbox has left.
     * Header rules compare by secret name: one name must stand for one credential.
     */
    boolean serves(SandboxSpec s) {
        boolean lifetimeFits = s.lifetime().isPresent() ? s.effectiveLifetime().compareTo(servedLifetime) <= 0
                : s.effectiveLifetime().compareTo(servedLifetime) <= 0
                        || s.effectiveLifetime().equals(SandboxSpec.DEFAULT_SESSION_LIFETIME);
        return lifetimeFits && s.egress().equals(spec.egress()) && s.setupEgress().equals(spec.setupEgress())
                && s.setupCommands().equals(spec.setupCommands()) && s.setupBudget().equals(spec.setupBudget())
                && withoutLifetime(s.limits()).equals(withoutLifetime(spec.limits()))
                && s.env().equals(spec.env()) && s.labels().equals(spec.labels()) && sameFiles(s.files(), spec.files());
    }

    private static Limits withoutLifetime(Limits l) {
        return l.toBuilder().lifetime(Duration.ofSeconds(1)).build();
    }

    private static boolean sameFiles(List<InputFile> a, List<InputFile> b) {
        if (a.size() != b.size()) {
            return false;
        }
        for (int i = 0; i < a.size(); i++) {
            if (!a.get(i).path().equals(b.get(i).path()) || !Arrays.equals(a.get(i).content(), b.get(i).content())) {
                return false;
            }
        }
        return true;
    }

    /** The oldest sandbox still fresh enough, or null; stale ones are retired on the way. */
    private Sandbox take() {
        List<Sandbox> stale = new ArrayList<>();
        Sandbox out = null;
        lock.lock();
        try {
            stale.addAll(pollStale());
            Idle i = idle.pollFirst();
            if (i != null) {
                out = i.sandbox;
            }
        } finally {
            lock.unlock();
        }
        retire(stale);
        return out;
    }

    /** Under the lock. */
    private List<Sandbox> pollStale() {
        List<Sandbox> stale = new ArrayList<>();
        long now = clock.getAsLong();
        while (!idle.isEmpty() && now - idle.peekFirst().since >= maxIdle.toNanos()) {
            stale.add(idle.pollFirst().sandbox);
        }
        return stale;
    }

    private void retire(List<Sandbox> stale) {
        for (Sandbox s : stale) {
            retired.incrementAndGet();
            log.debug("{}: retiring sandbox {} (idle for {} or more)", name(), s.id(), maxIdle);
            if (!execute(s::close)) {
                s.close(); // the pool is closing: its threads take no more work, so retire here
            }
        }
    }

    private void retireStale() {
        List<Sandbox> stale;
        lock.lock();
        try {
            stale = pollStale();
        } finally {
            lock.unlock();
        }
        retire(stale);
        refill();
    }

    /** Starts creates until the pool (ready plus in flight) is full, unless a retry is waiting out its backoff. */
    private void refill() {
        lock.lock();
        try {
            while (!closed && !retryScheduled && idle.size() + creating < size) {
                creating++;
                if (!execute(this::createOne)) {
                    creating--;
                    return;
                }
            }
        } finally {
            lock.unlock();
        }
    }

    private void createOne() {
        lock.lock();
        try {
            if (closed) { // queued before close(): send no create for a pool that is gone
                creating--;
                creatingDone.signalAll();
                return;
            }
        } finally {
            lock.unlock();
        }
        Sandbox s;
        try {
            s = delegate().open(pooledSpec);
        } catch (RuntimeException e) {
            int n;
            boolean schedule;
            lock.lock();
            try {
                creating--;
                creatingDone.signalAll();
                n = ++failuresInARow;
                schedule = !closed && !retryScheduled;
                retryScheduled = true;
            } finally {
                lock.unlock();
            }
            refillFailures.incrementAndGet();
            Duration delay = backoff.delay(n);
            if (n == 1) {
                log.warn("{}: could not create a warm sandbox ({}); retrying with backoff, opens create fresh meanwhile",
                        name(), e.toString());
            } else {
                log.debug("{}: warm create failed {} times in a row ({}); next try in {} ms", name(), n, e.toString(),
                        delay.toMillis());
            }
            if (schedule) {
                later(delay, () -> {
                    lock.lock();
                    try {
                        retryScheduled = false;
                    } finally {
                        lock.unlock();
                    }
                    refill();
                });
            }
            return;
        }
        boolean keep;
        lock.lock();
        try {
            creating--;
            creatingDone.signalAll();
            failuresInARow = 0;
            keep = !closed;
            if (keep) {
                idle.addLast(new Idle(s, clock.getAsLong()));
            }
        } finally {
            lock.unlock();
        }
        if (!keep) {
            s.close();
            return;
        }
        later(maxIdle, this::retireStale);
    }

    private boolean execute(Runnable r) {
        try {
            refills.execute(r);
            return true;
        } catch (RejectedExecutionException e) {
            return false; // closed
        }
    }

    private void later(Duration delay, Runnable r) {
        CompletableFuture.delayedExecutor(Math.max(1, delay.toMillis()), TimeUnit.MILLISECONDS, this::execute).execute(r);
    }

    /** @return sandboxes ready to hand out now */
    public int idle() {
        lock.lock();
        try {
            return idle.size();
        } finally {
            lock.unlock();
        }
    }

    /** @return opens served from the pool so far */
    public long handedOut() {
        return handedOut.get();
    }

    /** @return opens of the pool's spec that found the pool empty and created fresh */
    public long fallbacks() {
        return fallbacks.get();
    }

    /** @return pooled sandboxes destroyed for idling longer than max idle */
    public long retired() {
        return retired.get();
    }

    /** @return pooled creates that failed (each is retried with backoff) */
    public long refillFailures() {
        return refillFailures.get();
    }

    /**
     * Destroys every idle sandbox, waits up to {@link Builder#closeTimeout} for creates in flight
     * (destroying what they return), stops the refill threads and closes the wrapped runner. Idempotent.
     */
    @Override
    public void close() {
        List<Sandbox> left = new ArrayList<>();
        boolean interrupted = false;
        lock.lock();
        try {
            if (closed) {
                return;
            }
            closed = true;
            idle.forEach(i -> left.add(i.sandbox));
            idle.clear();
        } finally {
            lock.unlock();
        }
        left.forEach(Sandbox::close);
        long end = System.nanoTime() + closeTimeout.toNanos();
        lock.lock();
        try {
            while (creating > 0 && end - System.nanoTime() > 0) {
                try {
                    creatingDone.awaitNanos(end - System.nanoTime());
                } catch (InterruptedException e) {
                    interrupted = true;
                }
            }
            if (creating > 0) {
                log.warn("{}: closed with {} warm creates still in flight; they are destroyed when they return,"
                        + " or their lifetime ends them", name(), creating);
            }
        } finally {
            lock.unlock();
        }
        refills.shutdown();
        try {
            // retirements still queued or running tear sandboxes down through the delegate: let them end first
            if (!refills.awaitTermination(Math.max(0, end - System.nanoTime()), TimeUnit.NANOSECONDS)) {
                log.warn("{}: closed with warm-pool work still running after {}", name(), closeTimeout);
            }
        } catch (InterruptedException e) {
            interrupted = true;
        }
        if (ownsDelegate) {
            super.close();
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    @Override
    public String toString() {
        return "WarmPoolRunner[" + delegate().name() + ", size " + size + ", max idle " + maxIdle + "]";
    }

    /** A pooled sandbox, handed out once: its attempts end with the pool's. */
    private static final class Pooled extends ForwardingSandbox {
        private final List<Attempt> attempts;

        Pooled(Sandbox delegate, Attempt taken) {
            super(delegate);
            List<Attempt> a = new ArrayList<>(delegate.attempts());
            a.add(taken);
            this.attempts = List.copyOf(a);
        }

        @Override
        public List<Attempt> attempts() {
            return attempts;
        }

        @Override
        public RunResult exec(Execution execution) {
            return delegate().exec(execution).toBuilder().attempts(attempts).build();
        }
    }

    /**
     * Configures a {@link WarmPoolRunner}.
     *
     * @since 0.1.0
     */
    public static final class Builder {
        private final SandboxRunner delegate;
        private final SandboxSpec spec;
        private int size;
        private Duration maxIdle = Duration.ofMinutes(5);
        private Duration budget = Execution.DEFAULT_BUDGET;
        private Duration closeTimeout = Duration.ofSeconds(60);
        private int refillThreads = 2;
        private Backoff backoff;
        private LongSupplier clock = System::nanoTime;
        private boolean ownsDelegate = true;

        private Builder(SandboxRunner delegate, SandboxSpec spec) {
            this.delegate = Objects.requireNonNull(delegate, "delegate");
            this.spec = Objects.requireNonNull(spec, "spec");
        }

        /**
         * @param size sandboxes kept ready; 0 (the default) turns the pool off
         * @return this builder
         */
        public Builder size(int size) {
            if (size < 0) {
                throw new IllegalArgumentException("size must not be negative, was " + size);
            }
            this.size = size;
            return this;
        }

        /**
         * @param maxIdle how long a sandbox waits in the pool before it is retired; default 5 minutes
         * @return this builder
         */
        public Builder maxIdle(Duration maxIdle) {
            this.maxIdle = positive(maxIdle, "maxIdle");
            return this;
        }

        /**
         * @param budget how long a handed-out sandbox must still live (its setup and exec budgets); a
         *        pooled sandbox's lifetime is max idle plus this plus the margin. Default 60 s
         *        ({@link Execution#DEFAULT_BUDGET})
         * @return this builder
         */
        public Builder budget(Duration budget) {
            this.budget = positive(budget, "budget");
            return this;
        }

        /**
         * @param threads most refill threads at once (creates in parallel); default 2
         * @return this builder
         */
        public Builder refillThreads(int threads) {
            if (threads < 1) {
                throw new IllegalArgumentException("refillThreads must be at least 1, was " + threads);
            }
            this.refillThreads = threads;
            return this;
        }

        /**
         * @param backoff the delays between failed refills; default 1 s doubling to 60 s, with jitter
         * @return this builder
         */
        public Builder backoff(Backoff backoff) {
            this.backoff = Objects.requireNonNull(backoff, "backoff");
            return this;
        }

        /**
         * @param closeTimeout how long {@link WarmPoolRunner#close()} waits for creates in flight; default 60 s
         * @return this builder
         */
        public Builder closeTimeout(Duration closeTimeout) {
            this.closeTimeout = Objects.requireNonNull(closeTimeout, "closeTimeout");
            return this;
        }

        /**
         * @param nanoClock the clock idle times are measured on (tests); default {@link System#nanoTime()}
         * @return this builder
         */
        public Builder clock(LongSupplier nanoClock) {
            this.clock = Objects.requireNonNull(nanoClock, "nanoClock");
            return this;
        }

        /**
         * @param owns whether {@link WarmPoolRunner#close()} closes the wrapped runner too; default true.
         *        False for a pool over a runner shared with other code
         * @return this builder
         */
        public Builder ownsDelegate(boolean owns) {
            this.ownsDelegate = owns;
            return this;
        }

        /** @return the pool, already filling in the background */
        public WarmPoolRunner build() {
            WarmPoolRunner pool = new WarmPoolRunner(this);
            pool.refill();
            return pool;
        }

        private static Duration positive(Duration d, String what) {
            if (d.isNegative() || d.isZero()) {
                throw new IllegalArgumentException(what + " must be positive, was " + d);
            }
            return d;
        }
    }
}
