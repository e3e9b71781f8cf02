package dev.sandbox4j.spi;

import dev.sandbox4j.api.LifecycleListener;
import dev.sandbox4j.policy.Language;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;

/**
 * The lifecycle settings every adapter's builder takes through {@link RunnerBuilder}: how long teardown
 * retries, how creates that certainly failed are retried, the owner label, how long an ambiguous create
 * is looked up, who hears the lifecycle's events, and which languages the runner declares (configured
 * for its image, or found in it once). Immutable; made by {@link
 * RunnerBuilder#lifecycleOptions()} and applied to the lifecycle by the adapter.
 *
 * @since 0.1.0
 */
public final class LifecycleOptions {
    /** The teardown retry budget when none is set. */
    public static final Duration DEFAULT_TEARDOWN_TIMEOUT = Duration.ofSeconds(30);
    /** The tries per create when none is set. */
    public static final int DEFAULT_MAX_CREATE_ATTEMPTS = 3;

    private final Duration teardownTimeout;
    private final Duration retryBaseDelay;
    private final int maxCreateAttempts;
    private final String owner;
    private final Duration lostCreateWindow;
    private final LifecycleListener lifecycleListener;
    private final Set<Language> languages;
    private final boolean probeLanguages;

    LifecycleOptions(Duration teardownTimeout, Duration retryBaseDelay, int maxCreateAttempts, String owner,
            Duration lostCreateWindow, LifecycleListener lifecycleListener, Set<Language> languages,
            boolean probeLanguages) {
        this.teardownTimeout = Objects.requireNonNull(teardownTimeout, "teardownTimeout");
        this.retryBaseDelay = retryBaseDelay;
        this.maxCreateAttempts = maxCreateAttempts;
        this.owner = owner;
        this.lostCreateWindow = lostCreateWindow;
        this.lifecycleListener = Objects.requireNonNull(lifecycleListener, "lifecycleListener");
        this.languages = languages == null ? null : Set.copyOf(languages);
        this.probeLanguages = probeLanguages;
    }

    /** {@return how long teardown keeps retrying before it reports a failed teardown; positive} */
    public Duration teardownTimeout() {
        return teardownTimeout;
    }

    /** {@return the first backoff delay of retries if one was set; empty means the adapter's default} */
    public Optional<Duration> retryBaseDelay() {
        return Optional.ofNullable(retryBaseDelay);
    }

    /** {@return the tries per create for failures that certainly created nothing; at least 1} */
    public int maxCreateAttempts() {
        return maxCreateAttempts;
    }

    /** {@return the owner label put on every sandbox with its expiry, if one was set} */
    public Optional<String> owner() {
        return Optional.ofNullable(owner);
    }

    /**
     * {@return how long an ambiguous create is looked up by run id, if set; empty means the driver's
     * create deadline plus the lifecycle's margin}
     */
    public Optional<Duration> lostCreateWindow() {
        return Optional.ofNullable(lostCreateWindow);
    }

    /** {@return who hears every create, exec, teardown and suspected leak; {@link LifecycleListener#NONE} for none} */
    public LifecycleListener lifecycleListener() {
        return lifecycleListener;
    }

    /**
     * {@return the languages the runner declares for its image, if set; empty means the driver's own
     * declaration (its default image's languages)}
     */
    public Optional<Set<Language>> languages() {
        return Optional.ofNullable(languages);
    }

    /**
     * {@return whether the lifecycle finds the image's languages once, when the runner is built, and
     * declares those (winning over {@link #languages()})}
     */
    public boolean probeLanguages() {
        return probeLanguages;
    }

    @Override
    public String toString() {
        return "LifecycleOptions[teardownTimeout=" + teardownTimeout
                + ", retryBaseDelay=" + (retryBaseDelay == null ? "default" : retryBaseDelay)
                + ", maxCreateAttempts=" + maxCreateAttempts
                + ", owner=" + (owner == null ? "none" : owner)
                + ", lostCreateWindow=" + (lostCreateWindow == null ? "default" : lostCreateWindow)
                + (languages == null ? "" : ", languages=" + languages)
                + (probeLanguages ? ", probeLanguages" : "")
                + (lifecycleListener == LifecycleListener.NONE ? "" : ", listener") + "]";
    }
}
