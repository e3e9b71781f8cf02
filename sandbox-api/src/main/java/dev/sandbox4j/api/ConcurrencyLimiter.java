package dev.sandbox4j.api;

import dev.sandbox4j.policy.Capabilities;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

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
 * <p>One limiter is one pool of permits, whichever runners it wraps. Waiters are not served in strict
 * arrival order. Only keys with open sandboxes are remembered, so any number of distinct keys costs no
 * memory once their sandboxes are closed. Thread-safe.
 */
public final class ConcurrencyLimiter {
    private final int perKey;
    private final int global;
    private final Duration maxWait;
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition released = lock.newCondition();
    // keys with at least one permit held; an entry is removed when its count drops to zero
    private final Map<String, Integer> heldByKey = new HashMap<>();
    private int held;
    private int waiting;

    private ConcurrencyLimiter(Builder b) {
        this.perKey = b.perKey;
        this.global = b.global;
        this.maxWait = b.maxWait;
    }

    public static Builder builder() {
        return new Builder();
    }

    /**
     * A runner that opens sandboxes on {@code runner} under {@code key}'s cap and the global cap. Its
     * name and capabilities are the wrapped runner's; closing it does not close the wrapped runner, which
     * is typically shared by many keys.
     */
    public SandboxRunner forKey(SandboxRunner runner, String key) {
        return new LimitedRunner(Objects.requireNonNull(runner, "runner"), Objects.requireNonNull(key, "key"));
    }

    /** Permits held now, over all keys. */
    public int inUse() {
        lock.lock();
        try {
            return held;
        } finally {
            lock.unlock();
        }
    }

    /** Permits held now by {@code key}. */
    public int inUse(String key) {
        lock.lock();
        try {
            return heldByKey.getOrDefault(key, 0);
        } finally {
            lock.unlock();
        }
    }

    /** Keys holding at least one permit now: the only keys this limiter keeps in memory. */
    public int activeKeys() {
        lock.lock();
        try {
            return heldByKey.size();
        } finally {
            lock.unlock();
        }
    }

    /** Callers waiting for a permit now. */
    public int waiting() {
        lock.lock();
        try {
            return waiting;
        } finally {
            lock.unlock();
        }
    }

    public int perKey() {
        return perKey;
    }

    /** The global cap; {@link Integer#MAX_VALUE} when there is none. */
    public int global() {
        return global;
    }

    public Duration maxWait() {
        return maxWait;
    }

    @Override
    public String toString() {
        return "ConcurrencyLimiter[perKey=" + perKey + ", global=" + (global == Integer.MAX_VALUE ? "none" : global)
                + ", maxWait=" + maxWait + ", inUse=" + inUse() + "]";
    }

    private Permit acquire(String key, String runner) {
        if (Thread.currentThread().isInterrupted()) {
            throw new SandboxInterruptedException(SandboxException.builder(
                    "interrupted before waiting for a sandbox permit for key '" + key + "'").provider(runner));
        }
        lock.lock();
        try {
            long remaining = waitNanos();
            while (held >= global || heldByKey.getOrDefault(key, 0) >= perKey) {
                if (remaining <= 0) {
                    int ofKey = heldByKey.getOrDefault(key, 0);
                    throw new SandboxCapacityException(SandboxException.builder(
                            "no sandbox permit for key '" + key + "' within " + maxWait.toMillis() + " ms ("
                                    + ofKey + " of " + perKey + " per key in use"
                                    + (global == Integer.MAX_VALUE ? "" : ", " + held + " of " + global + " in all")
                                    + ")")
                            .provider(runner).retriable(true));
                }
                waiting++;
                try {
                    remaining = released.awaitNanos(remaining);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new SandboxInterruptedException(SandboxException.builder(
                            "interrupted while waiting for a sandbox permit for key '" + key + "'").provider(runner));
                } finally {
                    waiting--;
                }
            }
            held++;
            heldByKey.merge(key, 1, Integer::sum);
            return new Permit(key);
        } finally {
            lock.unlock();
        }
    }

    private long waitNanos() {
        try {
            return maxWait.toNanos();
        } catch (ArithmeticException e) {
            return Long.MAX_VALUE;
        }
    }

    /** One held permit; released at most once. */
    private final class Permit {
        private final String key;
        private final AtomicBoolean released = new AtomicBoolean();

        Permit(String key) {
            this.key = key;
        }

        void release() {
            if (!released.compareAndSet(false, true)) {
                return;
            }
            lock.lock();
            try {
                held--;
                heldByKey.computeIfPresent(key, (k, n) -> n == 1 ? null : n - 1);
                // every waiter re-checks: the freed permit may suit a waiter on another key, and a
                // waiter that was interrupted meanwhile must not swallow the only signal
                ConcurrencyLimiter.this.released.signalAll();
            } finally {
                lock.unlock();
            }
        }
    }

    private final class LimitedRunner implements SandboxRunner {
        private final SandboxRunner delegate;
        private final String key;

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
            Permit permit = acquire(key, delegate.name());
            Sandbox sandbox;
            try {
                sandbox = delegate.open(spec);
            } catch (RuntimeException | Error e) {
                permit.release();
                throw e;
            }
            return new LimitedSandbox(sandbox, permit);
        }

        /** Does not close the wrapped runner, which other keys may share. */
        @Override
        public void close() {
        }

        @Override
        public String toString() {
            return "LimitedRunner[" + delegate.name() + ", key " + key + ", " + ConcurrencyLimiter.this + "]";
        }
    }

    private static final class LimitedSandbox extends ForwardingSandbox {
        private final Permit permit;

        LimitedSandbox(Sandbox delegate, Permit permit) {
            super(delegate);
            this.permit = permit;
        }

        @Override
        public RunResult exec(Execution execution) {
            try {
                return delegate().exec(execution);
            } finally {
                // a sandbox torn down after an interrupt holds nothing any more
                if (delegate().isClosed()) {
                    permit.release();
                }
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

    public static final class Builder {
        private int perKey;
        private int global = Integer.MAX_VALUE;
        private Duration maxWait = Duration.ofSeconds(30);

        private Builder() {
        }

        /** Sandboxes open at once per key. Required. */
        public Builder perKey(int max) {
            if (max < 1) {
                throw new IllegalArgumentException("perKey must be at least 1, was " + max);
            }
            this.perKey = max;
            return this;
        }

        /** Sandboxes open at once over all keys. Optional: no global cap by default. */
        public Builder global(int max) {
            if (max < 1) {
                throw new IllegalArgumentException("global must be at least 1, was " + max);
            }
            this.global = max;
            return this;
        }

        /** How long {@code open} waits for a permit before it throws {@link SandboxCapacityException}. Default 30 s; zero fails at once. */
        public Builder maxWait(Duration maxWait) {
            if (maxWait == null || maxWait.isNegative()) {
                throw new IllegalArgumentException("maxWait must be zero or positive, was " + maxWait);
            }
            this.maxWait = maxWait;
            return this;
        }

        /** @throws IllegalStateException when {@link #perKey} was not set */
        public ConcurrencyLimiter build() {
            if (perKey == 0) {
                throw new IllegalStateException("perKey is required");
            }
            return new ConcurrencyLimiter(this);
        }
    }
}
