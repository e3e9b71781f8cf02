package dev.sandbox4j.spi;

import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.LongSupplier;
import java.util.function.LongUnaryOperator;

/**
 * The one backoff policy of sandbox4j: exponential delays from a base, capped, with jitter, and a
 * provider's Retry-After honoured up to a maximum (a longer one is not waited for). Every retry
 * loop in the library (idempotent HTTP calls, creates that certainly failed, teardowns, lookups of a
 * lost create) takes its delays from here, and its sleeps and clock, so tests can inject both.
 * Immutable and thread-safe.
 *
 * @since 0.1.0
 */
public final class Backoff {
    /**
     * Waits for a delay; {@link #THREAD_SLEEP} outside tests.
     *
     * @since 0.1.0
     */
    @FunctionalInterface
    public interface Sleeper {
        /**
         * Waits for {@code d}; returns at once for a zero or negative delay.
         *
         * @param d the delay
         * @throws InterruptedException when the waiting thread is interrupted
         */
        void sleep(Duration d) throws InterruptedException;
    }

    /**
     * One look of a {@link #poll}: the value once the wait is over, empty to look again. It may throw
     * to end the poll (a state that can never become the awaited one).
     *
     * @param <T> what the poll waits for
     */
    @FunctionalInterface
    public interface Probe<T> {
        /**
         * Looks once: reads the state waited for (a sandbox's status, a policy in force).
         *
         * @param look 1 for the first look, then 2, 3, ...
         * @return the awaited value, or empty to look again after a delay
         * @throws InterruptedException when interrupted while looking
         */
        Optional<T> look(int look) throws InterruptedException;
    }

    /**
     * Sleeps the calling thread ({@link Thread#sleep(long, int)}); zero and negative delays return at once.
     */
    public static final Sleeper THREAD_SLEEP = d -> {
        if (!d.isZero() && !d.isNegative()) {
            Thread.sleep(d.toMillis(), (int) (d.toNanos() % 1_000_000));
        }
    };

    private final Duration base;
    private final Duration max;
    private final double jitter;
    private final Duration maxRetryAfter;
    private final Sleeper sleeper;
    private final LongSupplier nanoClock;
    private final LongUnaryOperator random;

    private Backoff(Builder b) {
        this.base = b.base;
        this.max = b.max;
        this.jitter = b.jitter;
        this.maxRetryAfter = b.maxRetryAfter;
        this.sleeper = b.sleeper;
        this.nanoClock = b.nanoClock;
        this.random = b.random;
    }

    /**
     * {@return a new builder at the defaults: base 500 ms, max 8 s, jitter 0.25, Retry-After up to 20 s, real
     * sleep and clock}
     */
    public static Builder builder() {
        return new Builder();
    }

    /** {@return a copy of this policy's settings, to change one} */
    public Builder toBuilder() {
        Builder b = new Builder();
        b.base = base;
        b.max = max;
        b.jitter = jitter;
        b.maxRetryAfter = maxRetryAfter;
        b.sleeper = sleeper;
        b.nanoClock = nanoClock;
        b.random = random;
        return b;
    }

    /**
     * The delay before try {@code attempt + 1}: {@code base * 2^(attempt-1)}, capped at the maximum, plus up
     * to {@code jitter} of it at random.
     *
     * @param attempt the number of the try that failed, from 1
     * @return the delay, at most the maximum plus its jitter
     * @throws IllegalArgumentException when {@code attempt} is below 1
     */
    public Duration delay(int attempt) {
        if (attempt < 1) {
            throw new IllegalArgumentException("attempt starts at 1");
        }
        long baseNanos = base.toNanos();
        int shift = Math.min(attempt - 1, 30);
        long d = baseNanos > (Long.MAX_VALUE >> shift) ? Long.MAX_VALUE : baseNanos << shift;
        d = Math.min(d, max.toNanos());
        long spread = (long) (d * jitter);
        if (spread > 0) {
            d += random.applyAsLong(spread + 1);
        }
        return Duration.ofNanos(d);
    }

    /**
     * The delay before the next try after {@code attempt} failed: the provider's Retry-After when it
     * sent one (empty when it exceeds the maximum worth waiting for), otherwise {@link #delay(int)}.
     *
     * @param attempt the number of the try that failed, from 1
     * @param retryAfter the provider's Retry-After, if it sent one
     * @return the delay; empty when the provider asked for a longer wait than the maximum
     */
    public Optional<Duration> delay(int attempt, Optional<Duration> retryAfter) {
        if (retryAfter.isPresent()) {
            Duration ra = retryAfter.get();
            return ra.compareTo(maxRetryAfter) > 0 ? Optional.empty() : Optional.of(ra);
        }
        return Optional.of(delay(attempt));
    }

    /**
     * Waits for {@code d} with this policy's sleeper.
     *
     * @param d the delay
     * @throws InterruptedException when the waiting thread is interrupted
     */
    public void sleep(Duration d) throws InterruptedException {
        sleeper.sleep(d);
    }

    /**
     * Looks with {@code probe} until it answers, or until {@code timeout} (measured on this policy's
     * clock from the call) would pass before the next look. The first look is immediate; the delay
     * after it is {@code first}, and each next one is 1.5 times the last plus a millisecond, up to
     * {@code max}; the delays go through this policy's sleeper. Status polls (a sandbox starting, a
     * policy in force, a process ending) use this, not a loop of their own, so tests can inject both
     * clock and sleeps.
     *
     * @param <T> what the poll waits for
     * @param timeout how long to go on looking; no look starts after it
     * @param first the delay after the first look (at least 1 ms is used)
     * @param max the longest delay between two looks
     * @param probe one look
     * @return the value the probe answered, or empty when the timeout came first
     * @throws InterruptedException when interrupted while sleeping or looking
     */
    public <T> Optional<T> poll(Duration timeout, Duration first, Duration max, Probe<T> probe) throws InterruptedException {
        Objects.requireNonNull(probe, "probe");
        long deadline = nanoClock.getAsLong() + timeout.toNanos();
        long maxNanos = Math.max(1_000_000L, max.toNanos());
        long delay = Math.min(maxNanos, Math.max(1_000_000L, first.toNanos()));
        for (int look = 1; ; look++) {
            Optional<T> v = probe.look(look);
            if (v.isPresent()) {
                return v;
            }
            if (nanoClock.getAsLong() + delay - deadline > 0) {
                return Optional.empty();
            }
            sleeper.sleep(Duration.ofNanos(delay));
            delay = Math.min(maxNanos, delay + delay / 2 + 1_000_000L);
        }
    }

    /**
     * {@return the clock deadlines are measured on, in nanoseconds ({@link System#nanoTime()} outside tests)}
     */
    public long nanoTime() {
        return nanoClock.getAsLong();
    }

    /** {@return the first delay, doubled per attempt} */
    public Duration base() {
        return base;
    }

    @Override
    public String toString() {
        return "Backoff[base=" + base + ", max=" + max + ", jitter=" + jitter + ", maxRetryAfter=" + maxRetryAfter + "]";
    }

    /**
     * Collects a backoff policy; each setter checks its value at once.
     *
     * @since 0.1.0
     */
    public static final class Builder {
        private Duration base = Duration.ofMillis(500);
        private Duration max = Duration.ofSeconds(8);
        private double jitter = 0.25;
        private Duration maxRetryAfter = Duration.ofSeconds(20);
        private Sleeper sleeper = THREAD_SLEEP;
        private LongSupplier nanoClock = System::nanoTime;
        private LongUnaryOperator random = bound -> ThreadLocalRandom.current().nextLong(bound);

        private Builder() {
        }

        /**
         * Sets the first delay, doubled per attempt. Default 500 ms.
         *
         * @param d positive
         * @return this builder
         * @throws IllegalArgumentException when null, zero or negative
         */
        public Builder base(Duration d) {
            this.base = positive(d, "base");
            return this;
        }

        /**
         * Sets the longest delay before jitter. Default 8 s.
         *
         * @param d positive
         * @return this builder
         * @throws IllegalArgumentException when null, zero or negative
         */
        public Builder max(Duration d) {
            this.max = positive(d, "max");
            return this;
        }

        /**
         * Sets the fraction of a delay that is added at random (0 for none). Default 0.25.
         *
         * @param fraction from 0 to 1
         * @return this builder
         * @throws IllegalArgumentException when outside 0 to 1
         */
        public Builder jitter(double fraction) {
            if (fraction < 0 || fraction > 1) {
                throw new IllegalArgumentException("jitter must be between 0 and 1");
            }
            this.jitter = fraction;
            return this;
        }

        /**
         * Sets the longest Retry-After that is waited for; a longer one is not. Default 20 s.
         *
         * @param d not null
         * @return this builder
         */
        public Builder maxRetryAfter(Duration d) {
            this.maxRetryAfter = Objects.requireNonNull(d, "maxRetryAfter");
            return this;
        }

        /**
         * Sets what waits for a delay. Default {@link Backoff#THREAD_SLEEP}; tests inject a fake.
         *
         * @param s not null
         * @return this builder
         */
        public Builder sleeper(Sleeper s) {
            this.sleeper = Objects.requireNonNull(s, "sleeper");
            return this;
        }

        /**
         * Sets the clock deadlines are measured on, in nanoseconds. Default {@link System#nanoTime()}.
         *
         * @param clock not null
         * @return this builder
         */
        public Builder nanoClock(LongSupplier clock) {
            this.nanoClock = Objects.requireNonNull(clock, "clock");
            return this;
        }

        /**
         * Sets the source of random numbers for the jitter. Default {@link
         * java.util.concurrent.ThreadLocalRandom}.
         *
         * @param random given a bound, returns a number in [0, bound); not null
         * @return this builder
         */
        public Builder random(LongUnaryOperator random) {
            this.random = Objects.requireNonNull(random, "random");
            return this;
        }

        /** {@return the policy} */
        public Backoff build() {
            return new Backoff(this);
        }

        private static Duration positive(Duration d, String what) {
            if (d == null || d.isNegative() || d.isZero()) {
                throw new IllegalArgumentException(what + " must be positive, was " + d);
            }
            return d;
        }
    }
}
