package dev.sandbox4j.spi;

import dev.sandbox4j.api.LifecycleListener;
import java.time.Duration;
import java.util.Objects;
import java.util.regex.Pattern;

/**
 * The lifecycle settings shared by every adapter's builder (E2B, Vercel, Daytona, Modal, Docker,
 * Kubernetes): one set of setters, checked here, so each runner takes the same names with the same
 * rules. An adapter's builder extends this class with its own type as {@code B} and applies {@link
 * #lifecycleOptions()} to its lifecycle when it builds. Every setter checks its value at once and throws
 * {@link IllegalArgumentException} for a bad one. Not thread-safe, like every builder. The local runner's
 * builder does not extend it: its creates are never ambiguous or retried and it sweeps what a dead JVM
 * left by itself, so it takes only a teardown timeout and a listener.
 *
 * @param <B> the adapter's builder, returned by every setter
 * @since 0.1.0
 */
public abstract class RunnerBuilder<B extends RunnerBuilder<B>> {
    private static final Pattern OWNER = Pattern.compile("[A-Za-z0-9._-]{1,63}");

    private Duration teardownTimeout = LifecycleOptions.DEFAULT_TEARDOWN_TIMEOUT;
    private Duration retryBaseDelay;
    private int maxCreateAttempts = LifecycleOptions.DEFAULT_MAX_CREATE_ATTEMPTS;
    private String owner;
    private Duration lostCreateWindow;
    private LifecycleListener lifecycleListener = LifecycleListener.NONE;

    /** For the adapters' builders. */
    protected RunnerBuilder() {
    }

    /** {@return this builder, as its own type} */
    protected abstract B self();

    /**
     * How long teardown keeps retrying before it reports a failed teardown. Default 30 s.
     *
     * @param timeout positive
     * @return this builder
     * @throws IllegalArgumentException when null, zero or negative
     */
    public B teardownTimeout(Duration timeout) {
        this.teardownTimeout = positive(timeout, "teardownTimeout");
        return self();
    }

    /**
     * The first backoff delay of retries (creates that certainly failed, teardowns, the adapter's
     * idempotent calls); later delays grow from it, with jitter. Default: the adapter's (500 ms; Modal's
     * 100 ms).
     *
     * @param delay positive
     * @return this builder
     * @throws IllegalArgumentException when null, zero or negative
     */
    public B retryBaseDelay(Duration delay) {
        this.retryBaseDelay = positive(delay, "retryBaseDelay");
        return self();
    }

    /**
     * Tries per create for failures that certainly created nothing (a 429, a refused connection). An
     * ambiguous create (its answer lost) is never sent again: it is looked up instead. Default 3.
     *
     * @param n at least 1
     * @return this builder
     * @throws IllegalArgumentException when below 1
     */
    public B maxCreateAttempts(int n) {
        if (n < 1) {
            throw new IllegalArgumentException("maxCreateAttempts must be at least 1, was " + n);
        }
        this.maxCreateAttempts = n;
        return self();
    }

    /**
     * A stable name for this process (a pod or host name), sent as the {@value CreateRequest#OWNER_LABEL}
     * label with the sandbox's expiry, so {@code sweep(...)} finds this owner's orphans and no sibling's.
     * Default none (no owner or expiry label is sent, and only run ids can be swept).
     *
     * @param owner 1 to 63 of {@code [A-Za-z0-9._-]}; null for none
     * @return this builder
     * @throws IllegalArgumentException when malformed
     */
    public B owner(String owner) {
        if (owner != null && !OWNER.matcher(owner).matches()) {
            throw new IllegalArgumentException("owner '" + owner + "' must be 1 to 63 of [A-Za-z0-9._-]");
        }
        this.owner = owner;
        return self();
    }

    /**
     * How long an ambiguous create (its answer lost, a timeout, a 5xx, an interrupt) is looked up by run
     * id before it counts as having created nothing. Default: the adapter's create deadline plus 30 s;
     * never past the lifetime the create asked for.
     *
     * @param window positive; null for the default
     * @return this builder
     * @throws IllegalArgumentException when zero or negative
     */
    public B lostCreateWindow(Duration window) {
        this.lostCreateWindow = window == null ? null : positive(window, "lostCreateWindow");
        return self();
    }

    /**
     * Hears every create, exec, teardown and suspected leak of the runner, for metrics and traces (e.g.
     * {@code dev.sandbox4j:sandbox4j-micrometer}). Default none.
     *
     * @param listener not null; {@link LifecycleListener#NONE} for none
     * @return this builder
     * @throws NullPointerException when null
     */
    public B lifecycleListener(LifecycleListener listener) {
        this.lifecycleListener = Objects.requireNonNull(listener, "listener");
        return self();
    }

    /** {@return the lifecycle settings as set so far, for the adapter's build} */
    protected final LifecycleOptions lifecycleOptions() {
        return new LifecycleOptions(teardownTimeout, retryBaseDelay, maxCreateAttempts, owner, lostCreateWindow,
                lifecycleListener);
    }

    private static Duration positive(Duration d, String what) {
        if (d == null || d.isNegative() || d.isZero()) {
            throw new IllegalArgumentException(what + " must be positive, was " + d);
        }
        return d;
    }
}
