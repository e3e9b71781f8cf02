package dev.sandbox4j.compose;

import dev.sandbox4j.compose.internal.InProcessPermitStore;
import dev.sandbox4j.compose.PermitStore;
import dev.sandbox4j.policy.Capabilities;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import dev.sandbox4j.api.Execution;
import dev.sandbox4j.api.ForwardingSandbox;
import dev.sandbox4j.api.LifecycleStats;
import dev.sandbox4j.api.RunResult;
import dev.sandbox4j.api.Sandbox;
import dev.sandbox4j.api.SandboxRunner;
import dev.sandbox4j.api.SandboxSpec;
import dev.sandbox4j.api.SweepRequest;
import dev.sandbox4j.api.SweepResult;
import dev.sandbox4j.api.Teardown;
import dev.sandbox4j.api.exception.SandboxCapacityException;
import dev.sandbox4j.api.exception.SandboxConfigurationException;
import dev.sandbox4j.api.exception.SandboxException;
import dev.sandbox4j.api.exception.SandboxInterruptedException;

/**
 * Caps how many sandboxes are open at once: per key (a user, a tenant) and, optionally, in all.
 *
 * <pre>{@code
 * ConcurrencyLimiter limiter = ConcurrencyLimiter.builder()
 *         .perKey(2).global(10).maxWait(Duration.ofSeconds(30)).build();
 * SandboxRunner alice = limiter.forKey(runner, "alice");
 * try (Sandbox sb = alice.open(spec)) { ... }   // holds one of alice's 2 permits until close()
 * }</pre>
 *
 * <p>A permit is taken in {@link SandboxRunner#open} before the wrapped runner is called and given
 * back when the {@link Sandbox} is closed (or when opening fails, or when the sandbox tore itself down
 * after an interrupt). A caller waits for a permit up to {@link Builder#maxWait}, then gets a
 * {@link SandboxCapacityException} (retriable, nothing was created); an interrupted waiter gets a
 * {@link SandboxInterruptedException} with its interrupt flag set again. A sandbox that is never closed
 * keeps its permit: always close sandboxes.
 *
 * <p>Sessions that outlive a request: {@link Sandbox#detach()} keeps the permit for the detached
 * sandbox until someone attaches to it and closes it, or until its lifetime ({@link
 * SandboxSpec#effectiveLifetime()}, counted from the open) ends; with a shared store any replica's
 * {@link SandboxRunner#attach} takes that permit over. An attach to a sandbox that keeps no permit
 * (one opened outside this limiter, or whose permit expired) takes a new one, waiting like {@code open}
 * does; while it waits the sandbox is attached, and when no permit comes it is detached again and left
 * as it was. A store that cannot keep permits for detached sandboxes (see {@link PermitStore.Lease#detach})
 * keeps the lease here until the lifetime ends.
 *
 * <p>A lost permit: a shared store can find that a sandbox's lease is gone (it expired while this JVM
 * was paused or cut off from the store, or the store lost its data) and that the caps are full without
 * it. The cap is the promise, so the limiter then closes the sandbox at once: a running {@code exec}
 * ends (its sandbox destroyed under it) with {@link PermitLostException}, and so does every later one,
 * and an {@code exec} during which the lease went unrenewed for its whole time (this JVM paused while
 * the code ran) ends with it too, before the store has said so;
 * the loss goes to {@link Builder#onPermitLost} and is counted in {@link #permitsLost()}. A loss found
 * with a cap full means the cap was exceeded until that moment: {@link PermitLoss#perKeyExceeded()} and
 * {@link PermitLoss#globalExceeded()} say which.
 *
 * <p>One limiter is one pool of permits, whichever runners it wraps. Waiters are not served in strict
 * arrival order. Only keys with open sandboxes are remembered, so any number of distinct keys costs no
 * memory once their sandboxes are closed. Thread-safe.
 *
 * <p>The permits live in a {@link PermitStore}: in this JVM by default, so with several replicas each
 * has its own caps. For caps across replicas give every replica's limiter the same shared store, for
 * example {@code RedisPermitStore} ({@code sandbox-redis}). The semantics above hold for every store;
 * a store that cannot be reached fails closed with {@link PermitStoreException} (retriable, nothing
 * created).
 *
 * @since 0.1.0
 */
public final class ConcurrencyLimiter {
    private final int perKey;
    private final int global;
    private final Duration maxWait;
    private final PermitStore store;
    private final Consumer<PermitLoss> onPermitLost;
    private final AtomicInteger waiting = new AtomicInteger();
    private final AtomicLong permitsLost = new AtomicLong();
    private static final Logger log = LoggerFactory.getLogger(ConcurrencyLimiter.class);

    private ConcurrencyLimiter(Builder b) {
        this.perKey = b.perKey;
        this.global = b.global;
        this.maxWait = b.maxWait;
        this.store = b.store != null ? b.store : new InProcessPermitStore();
        this.onPermitLost = b.onPermitLost;
        // a shared store checks here that every limiter on it has these caps
        store.configure(perKey, global);
    }

    /**
     * {@return a new builder; {@link Builder#perKey} is required, the rest defaults to no global cap, a 30 s
     * wait and an in-process store}
     */
    public static Builder builder() {
        return new Builder();
    }

    /**
     * A runner that opens sandboxes on {@code runner} under {@code key}'s cap and the global cap. Its
     * name and capabilities are the wrapped runner's; closing it makes it refuse new work
     * ({@link IllegalStateException}) but does not close the wrapped runner, which is typically shared by
     * many keys.
     *
     * @param runner the runner the sandboxes are opened on, typically shared by many keys; not null
     * @param key the caller's key (a tenant, a user); not null
     * @return the limited runner for {@code key}
     */
    public SandboxRunner forKey(SandboxRunner runner, String key) {
        return new LimitedRunner(Objects.requireNonNull(runner, "runner"), Objects.requireNonNull(key, "key"));
    }

    /**
     * {@return the permits held now, over all keys (with a shared store: over every limiter that shares it)}
     */
    public int inUse() {
        return store.inUse();
    }

    /**
     * {@return the permits held now by {@code key}}
     *
     * @param key the caller's key
     */
    public int inUse(String key) {
        return store.inUse(key);
    }

    /**
     * {@return the keys holding at least one permit now: the only keys the in-process store keeps in memory}
     */
    public int activeKeys() {
        return store.activeKeys();
    }

    /**
     * {@return the sandboxes of this limiter closed because their permit was lost ({@link PermitLoss}), since
     * it was built}
     */
    public long permitsLost() {
        return permitsLost.get();
    }

    /** {@return the callers of this limiter waiting for a permit now} */
    public int waiting() {
        return waiting.get();
    }

    /** {@return the most sandboxes open at once per key} */
    public int perKey() {
        return perKey;
    }

    /** {@return the global cap; {@link Integer#MAX_VALUE} when there is none} */
    public int global() {
        return global;
    }

    /**
     * {@return how long {@code open} waits for a permit before it throws {@link SandboxCapacityException}}
     */
    public Duration maxWait() {
        return maxWait;
    }

    /**
     * {@return where the permits are kept: the in-process store unless {@link Builder#store} set another}
     */
    public PermitStore store() {
        return store;
    }

    @Override
    public String toString() {
        return "ConcurrencyLimiter[perKey=" + perKey + ", global=" + (global == Integer.MAX_VALUE ? "none" : global)
                + ", maxWait=" + maxWait + ", store=" + store + "]";
    }

    private Permit acquire(String key, String runner) {
        if (Thread.currentThread().isInterrupted()) {
            throw new SandboxInterruptedException(SandboxException.builder(
                    "interrupted before waiting for a sandbox permit for key '" + key + "'").provider(runner));
        }
        long remaining = waitNanos();
        while (true) {
            // a store that cannot answer throws PermitStoreException: no permit, no sandbox
            PermitStore.Acquisition a = store.tryAcquire(key, perKey, global);
            if (a.isGranted()) {
                return new Permit(a.lease());
            }
            if (remaining <= 0) {
                throw new SandboxCapacityException(SandboxException.builder(
                        "no sandbox permit for key '" + key + "' within " + maxWait.toMillis() + " ms ("
                                + a.heldByKey() + " of " + perKey + " per key in use"
                                + (global == Integer.MAX_VALUE ? "" : ", " + a.heldInAll() + " of " + global + " in all")
                                + ")" + (a.note() == null ? "" : ": " + a.note()))
                        .provider(runner).retriable(true));
            }
            waiting.incrementAndGet();
            try {
                remaining = store.awaitRelease(a, remaining);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new SandboxInterruptedException(SandboxException.builder(
                        "interrupted while waiting for a sandbox permit for key '" + key + "'").provider(runner));
            } finally {
                waiting.decrementAndGet();
            }
        }
    }

    private long waitNanos() {
        try {
            return maxWait.toNanos();
        } catch (ArithmeticException e) {
            return Long.MAX_VALUE;
        }
    }

    /** One held permit; released or detached at most once. */
    private static final class Permit {
        private final PermitStore.Lease lease;
        private final AtomicBoolean done = new AtomicBoolean();

        Permit(PermitStore.Lease lease) {
            this.lease = lease;
        }

        void release() {
            if (done.compareAndSet(false, true)) {
                lease.release();
            }
        }

        /** Hands the permit to the detached sandbox; a store that cannot keeps it here until {@code left} ends. */
        void detach(String sandboxId, Duration left) {
            if (done.compareAndSet(false, true) && !lease.detach(sandboxId, left)) {
                CompletableFuture.delayedExecutor(Math.max(0, left.toMillis()), TimeUnit.MILLISECONDS)
                        .execute(lease::release);
            }
        }
    }

    private final class LimitedRunner implements SandboxRunner {
        private final SandboxRunner delegate;
        private final String key;
        private volatile boolean closed;

        LimitedRunner(SandboxRunner delegate, String key) {
            this.delegate = delegate;
            this.key = key;
        }

        @Override
        public String name() {
            return delegate.name();
        }

        @Override
        public Capabilities capabilities() {
            return delegate.capabilities();
        }

        @Override
        public Sandbox open(SandboxSpec spec) {
            Objects.requireNonNull(spec, "spec");
            ensureOpen();
            Permit permit = acquire(key, delegate.name());
            Sandbox sandbox;
            try {
                sandbox = delegate.open(spec);
            } catch (RuntimeException | Error e) {
                permit.release();
                throw e;
            }
            return new LimitedSandbox(sandbox, permit, key, spec.effectiveLifetime());
        }

        /**
         * Attaches first (a refused attach changes no permit), then takes over the permit the detached
         * sandbox keeps, or a new one; without a permit the sandbox is detached again and left as it was.
         */
        @Override
        public Sandbox attach(String sandboxId, SandboxSpec expected) {
            Objects.requireNonNull(expected, "expected");
            ensureOpen();
            Sandbox sandbox = delegate.attach(sandboxId, expected);
            Permit permit;
            try {
                PermitStore.Lease adopted = store.adopt(key, sandboxId);
                permit = adopted != null ? new Permit(adopted) : acquire(key, delegate.name());
            } catch (RuntimeException | Error e) {
                try {
                    sandbox.detach();
                } catch (RuntimeException | Error suppressed) {
                    e.addSuppressed(suppressed);
                }
                throw e;
            }
            return new LimitedSandbox(sandbox, permit, key, expected.effectiveLifetime());
        }

        @Override
        public LifecycleStats lifecycleStats() {
            return delegate.lifecycleStats();
        }

        /** Not capped: a sweep only destroys sandboxes. */
        @Override
        public SweepResult sweep(SweepRequest request) {
            ensureOpen();
            return delegate.sweep(request);
        }

        private void ensureOpen() {
            if (closed) {
                throw new IllegalStateException("the capped " + delegate.name() + " runner for key '" + key
                        + "' is closed: it takes no more work; get a new one from the limiter");
            }
        }

        /**
         * Refuses new work from now on. Does not close the wrapped runner, which other keys may share, nor
         * the sandboxes opened through it: the wrapped runner's own close tears those down.
         */
        @Override
        public void close() {
            closed = true;
        }

        @Override
        public String toString() {
            return "LimitedRunner[" + delegate.name() + ", key " + key + ", " + ConcurrencyLimiter.this + "]";
        }
    }

    private final class LimitedSandbox extends ForwardingSandbox {
        private final Permit permit;
        private final String key;
        // System.nanoTime() when the sandbox's lifetime ends: how long a detached sandbox keeps its permit
        private final long lifetimeEnd;
        private volatile PermitLoss lost;

        LimitedSandbox(Sandbox delegate, Permit permit, String key, Duration lifetime) {
            super(delegate);
            this.permit = permit;
            this.key = key;
            Duration capped = lifetime.compareTo(Duration.ofDays(365)) > 0 ? Duration.ofDays(365) : lifetime;
            this.lifetimeEnd = System.nanoTime() + capped.toNanos();
            permit.lease.onLost(this::lost);
        }

        /** On the store's thread: closing may take a provider round trip, so it gets a thread of its own. */
        private void lost(PermitLoss loss) {
            if (permit.done.get()) {
                return; // closed or detached already: nothing runs under this lease
            }
            lost = loss;
            permitsLost.incrementAndGet();
            log.warn("sandbox {} ({}) lost its concurrency permit: {}; closing it", delegate().id(), delegate().provider(), loss);
            Thread closer = new Thread(() -> {
                try {
                    delegate().close();
                } finally {
                    permit.release();
                    if (onPermitLost != null) {
                        try {
                            onPermitLost.accept(loss);
                        } catch (RuntimeException e) {
                            log.warn("the onPermitLost listener threw", e);
                        }
                    }
                }
            }, "sandbox4j-permit-lost");
            closer.setDaemon(true);
            closer.start();
        }

        private PermitLostException lostException(PermitLoss loss, boolean ran, Throwable cause) {
            return new PermitLostException(SandboxException.builder("sandbox " + delegate().id() + " lost its concurrency permit"
                            + (ran ? " while its code ran; the sandbox was closed" : "; nothing was run") + ": " + loss)
                    .provider(delegate().provider()).codeMayHaveRun(ran).cause(cause), loss);
        }

        @Override
        public RunResult exec(Execution execution) {
            PermitLoss before = lost;
            if (before == null && permit.lease.isLost()) {
                // not renewed within the lease time: the permit may be someone else's by now
                before = PermitLoss.builder(key, PermitLoss.Reason.NOT_RENEWED).caps(perKey, global).build();
            }
            if (before != null) {
                throw lostException(before, false, null);
            }
            RunResult result;
            try {
                result = delegate().exec(execution);
            } catch (RuntimeException e) {
                PermitLoss during = lostDuringExec();
                if (during != null) {
                    throw lostException(during, true, e);
                }
                throw e;
            } finally {
                // a sandbox torn down after an interrupt holds nothing any more
                if (delegate().isClosed() && delegate().teardown() != Teardown.DETACHED) {
                    permit.release();
                }
            }
            PermitLoss during = lostDuringExec();
            if (during != null) {
                throw lostException(during, true, null);
            }
            return result;
        }

        /**
         * The loss the store reported, or, when it has reported none yet, a lease not renewed within its
         * time while the code ran (this JVM paused mid-exec: its renewals stopped, the permit may have
         * been someone else's meanwhile, and the store's report comes only once its renewal thread runs
         * again). Either way the exec did not run under the permit throughout.
         */
        private PermitLoss lostDuringExec() {
            PermitLoss during = lost;
            if (during == null && permit.lease.isLost()) {
                during = PermitLoss.builder(key, PermitLoss.Reason.NOT_RENEWED).caps(perKey, global).build();
            }
            return during;
        }

        @Override
        public void detach() {
            delegate().detach();
            if (delegate().teardown() == Teardown.DETACHED) {
                permit.detach(delegate().id(), Duration.ofNanos(Math.max(0, lifetimeEnd - System.nanoTime())));
            }
        }

        @Override
        public void close() {
            try {
                delegate().close();
            } finally {
                permit.release();
            }
        }
    }

    /**
     * Collects a limiter's caps, wait and store; each setter checks its value at once.
     *
     * @since 0.1.0
     */
    public static final class Builder {
        private int perKey;
        private int global = Integer.MAX_VALUE;
        private Duration maxWait = Duration.ofSeconds(30);
        private PermitStore store;
        private Consumer<PermitLoss> onPermitLost;

        private Builder() {
        }

        /**
         * Sandboxes open at once per key. Required.
         *
         * @param max at least 1
         * @return this builder
         * @throws IllegalArgumentException when below 1
         */
        public Builder perKey(int max) {
            if (max < 1) {
                throw new IllegalArgumentException("perKey must be at least 1, was " + max);
            }
            this.perKey = max;
            return this;
        }

        /**
         * Sandboxes open at once over all keys. Optional: no global cap by default.
         *
         * @param max at least 1
         * @return this builder
         * @throws IllegalArgumentException when below 1
         */
        public Builder global(int max) {
            if (max < 1) {
                throw new IllegalArgumentException("global must be at least 1, was " + max);
            }
            this.global = max;
            return this;
        }

        /**
         * How long {@code open} waits for a permit before it throws {@link SandboxCapacityException}. Default 30 s; zero fails at once.
         *
         * @param maxWait zero or positive
         * @return this builder
         * @throws IllegalArgumentException when null or negative
         */
        public Builder maxWait(Duration maxWait) {
            if (maxWait == null || maxWait.isNegative()) {
                throw new IllegalArgumentException("maxWait must be zero or positive, was " + maxWait);
            }
            this.maxWait = maxWait;
            return this;
        }

        /**
         * Where permits are kept. Default: a new in-process store, so the caps hold within this JVM.
         * Give every replica a store on the same shared backend (such as {@code RedisPermitStore} from
         * {@code sandbox-redis}) to make the caps hold across replicas; limiters sharing a store must use
         * the same caps. The limiter does not close the store.
         *
         * @param store not null
         * @return this builder
         */
        public Builder store(PermitStore store) {
            this.store = Objects.requireNonNull(store, "store");
            return this;
        }

        /**
         * Told of every permit lost while its sandbox was open (the limiter has closed the sandbox by
         * then), on a thread of the limiter's; for a metric or an alert. Exceptions it throws are logged.
         *
         * @param listener not null
         * @return this builder
         */
        public Builder onPermitLost(Consumer<PermitLoss> listener) {
            this.onPermitLost = Objects.requireNonNull(listener, "listener");
            return this;
        }

        /**
         * Builds the limiter and registers its caps with the store.
         *
         * @return the limiter
         * @throws IllegalStateException when {@link #perKey} was not set
         * @throws SandboxConfigurationException when a shared store holds other caps for its namespace
         */
        public ConcurrencyLimiter build() {
            if (perKey == 0) {
                throw new IllegalStateException("perKey is required");
            }
            return new ConcurrencyLimiter(this);
        }
    }
}
