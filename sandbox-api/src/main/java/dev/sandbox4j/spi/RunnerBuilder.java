package dev.sandbox4j.spi;

import dev.sandbox4j.api.LifecycleListener;
import dev.sandbox4j.api.exception.SandboxConfigurationException;
import dev.sandbox4j.policy.Language;
import java.time.Duration;
import java.util.EnumSet;
import java.util.Objects;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * The lifecycle settings shared by every adapter's builder (E2B, Vercel, Daytona, Modal, Docker,
 * Kubernetes): one set of setters, checked here, so each runner takes the same names with the same
 * rules; the image's languages ({@link #languages}, {@link #probeLanguages}) are among them, since the
 * lifecycle declares and enforces them. An adapter's builder extends this class with its own type as {@code B} and applies {@link
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
    private Set<Language> languages;
    private boolean probeLanguages;

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

    /**
     * The languages the runner's image has, declared in {@code capabilities()} instead of the adapter's
     * default (the languages of its default image, which each adapter's javadoc names). For an image or
     * template of your own: the lifecycle refuses code in a language not declared before any call, with
     * a {@code SandboxConfigurationException}, and tools and the contract suite offer only declared ones.
     * Not checked against the image; {@link #probeLanguages} checks.
     *
     * @param languages at least one
     * @return this builder
     * @throws IllegalArgumentException when none is given
     */
    public B languages(Language... languages) {
        if (languages.length == 0) {
            throw new IllegalArgumentException("at least one language");
        }
        Set<Language> set = EnumSet.noneOf(Language.class);
        for (Language l : languages) {
            set.add(Objects.requireNonNull(l, "language"));
        }
        this.languages = Set.copyOf(set);
        return self();
    }

    /**
     * Declares the languages the image really has, found once when the runner is built: {@code build()}
     * opens one sandbox (deny-all, a 5-minute lifetime), runs one small program per language in it (the
     * interpreter each language's code runs with, printing a computed marker; an adapter may ask its
     * provider in one call instead), tears it down, and from then on declares the languages whose program
     * printed the marker. {@link #languages} is then not used. The result is kept for the runner's life;
     * another runner probes again. {@code build()} throws (and releases everything) when the probe cannot
     * tell: the sandbox does not open, a program times out or fails to start, or no language is found.
     * Default off. Costs one create, one teardown and up to three execs per runner.
     *
     * @param probe whether to probe the image once at build
     * @return this builder
     */
    public B probeLanguages(boolean probe) {
        this.probeLanguages = probe;
        return self();
    }

    /**
     * Applies an environment variable holding {@code probe} or a comma list of languages ({@code
     * python,javascript,bash}; the aliases of {@link Language#parse}) to {@link #probeLanguages} or
     * {@link #languages}, as the adapters' {@code builderFromEnv} read their {@code *_LANGUAGES} variable.
     *
     * @param variable the variable's name, for the error
     * @param value its value; null or blank leaves the builder as it is
     * @return this builder
     * @throws SandboxConfigurationException naming the variable, for any other value
     */
    public final B languagesSetting(String variable, String value) {
        if (value == null || value.isBlank()) {
            return self();
        }
        if (value.trim().equalsIgnoreCase("probe")) {
            return probeLanguages(true);
        }
        java.util.List<Language> list = new java.util.ArrayList<>();
        for (String name : value.split(",")) {
            try {
                list.add(Language.parse(name));
            } catch (IllegalArgumentException e) {
                throw new SandboxConfigurationException(variable
                        + " must be 'probe' or a comma list of python, javascript and bash");
            }
        }
        return languages(list.toArray(new Language[0]));
    }

    /** {@return the lifecycle settings as set so far, for the adapter's build} */
    protected final LifecycleOptions lifecycleOptions() {
        return new LifecycleOptions(teardownTimeout, retryBaseDelay, maxCreateAttempts, owner, lostCreateWindow,
                lifecycleListener, languages, probeLanguages);
    }

    private static Duration positive(Duration d, String what) {
        if (d == null || d.isNegative() || d.isZero()) {
            throw new IllegalArgumentException(what + " must be positive, was " + d);
        }
        return d;
    }
}
