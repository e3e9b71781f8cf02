package dev.sandbox4j.api;

import java.time.Duration;
import java.util.Locale;
import java.util.Objects;
import java.util.Optional;

/**
 * How one create, exec or teardown ended, as told to a {@link LifecycleListener}: the provider, the
 * phase, the outcome and how long it took. Never code, output or credentials.
 *
 * <p>{@link #outcome()} is a short, low-cardinality word fit for a metric tag: {@code success} or
 * {@code error} for a create; the {@link RunStatus} in lower case ({@code exited}, {@code timed_out},
 * {@code output_limit}, {@code killed}) or {@code error} for an exec; the {@link Teardown} in lower case
 * ({@code destroyed}, {@code already_gone}, {@code failed}) for a teardown.
 *
 * @since 0.1.0
 */
public final class LifecycleEvent {
    /**
     * Which part of the lifecycle.
     *
     * @since 0.1.0
     */
    public enum Phase {
        /** A whole {@link SandboxRunner#open open}: create attempts, files, setup, lock-down. */
        CREATE,
        /** One {@link Sandbox#exec exec} (setup commands are part of the create). */
        EXEC,
        /** One teardown, with its retries. */
        TEARDOWN
    }

    private final Phase phase;
    private final String provider;
    private final Duration duration;
    private final RunStatus status;
    private final Teardown teardown;
    private final Throwable error;
    private final int attempts;

    private LifecycleEvent(Builder b) {
        this.phase = Objects.requireNonNull(b.phase, "phase");
        this.provider = Objects.requireNonNull(b.provider, "provider");
        this.duration = b.duration == null ? Duration.ZERO : b.duration;
        this.status = b.status;
        this.teardown = b.teardown;
        this.error = b.error;
        this.attempts = b.attempts;
    }

    /**
     * A builder (for listeners' own tests; the lifecycle builds the events it sends).
     *
     * @param phase    which part of the lifecycle
     * @param provider the provider name
     * @return a builder
     */
    public static Builder builder(Phase phase, String provider) {
        return new Builder(phase, provider);
    }

    /** @return which part of the lifecycle ended */
    public Phase phase() {
        return phase;
    }

    /** @return the runner's provider name */
    public String provider() {
        return provider;
    }

    /** @return how long it took, measured by the lifecycle */
    public Duration duration() {
        return duration;
    }

    /** @return an exec's status, when it produced a result */
    public Optional<RunStatus> status() {
        return Optional.ofNullable(status);
    }

    /** @return a teardown's outcome */
    public Optional<Teardown> teardown() {
        return Optional.ofNullable(teardown);
    }

    /**
     * The exception the operation ended with. Its message is sandbox4j's (no credentials, no code,
     * no output of the untrusted code), but it may quote a provider's error text or a trusted setup
     * command's stderr.
     *
     * @return the exception, when it failed
     */
    public Optional<Throwable> error() {
        return Optional.ofNullable(error);
    }

    /** @return create attempts made (0 for an exec or teardown, or a create refused before any call) */
    public int attempts() {
        return attempts;
    }

    /** @return true when the operation ended without an exception (a teardown that FAILED counts as failed) */
    public boolean succeeded() {
        return error == null && teardown != Teardown.FAILED;
    }

    /** @return the outcome as a low-cardinality word (see the class comment) */
    public String outcome() {
        if (error != null) {
            return "error";
        }
        if (status != null) {
            return status.name().toLowerCase(Locale.ROOT);
        }
        if (teardown != null) {
            return teardown.name().toLowerCase(Locale.ROOT);
        }
        return "success";
    }

    /** @return the exception's simple class name, or {@code none} */
    public String exceptionType() {
        return error == null ? "none" : error.getClass().getSimpleName();
    }

    @Override
    public String toString() {
        return "LifecycleEvent[" + phase + " " + provider + " " + outcome()
                + (error == null ? "" : " " + exceptionType()) + " in " + duration.toMillis() + " ms]";
    }

    /**
     * Builds a {@link LifecycleEvent}.
     *
     * @since 0.1.0
     */
    public static final class Builder {
        private final Phase phase;
        private final String provider;
        private Duration duration;
        private RunStatus status;
        private Teardown teardown;
        private Throwable error;
        private int attempts;

        private Builder(Phase phase, String provider) {
            this.phase = Objects.requireNonNull(phase, "phase");
            this.provider = Objects.requireNonNull(provider, "provider");
        }

        /**
         * Sets how long the phase took. Default unset.
         *
         * @param d the duration, or null
         * @return this builder
         */
        public Builder duration(Duration d) {
            this.duration = d;
            return this;
        }

        /**
         * Sets an exec's status. Default unset.
         *
         * @param s the status, or null
         * @return this builder
         */
        public Builder status(RunStatus s) {
            this.status = s;
            return this;
        }

        /**
         * Sets a teardown's outcome. Default unset.
         *
         * @param t the outcome, or null
         * @return this builder
         */
        public Builder teardown(Teardown t) {
            this.teardown = t;
            return this;
        }

        /**
         * Sets the exception the phase ended with. Default none.
         *
         * @param t the exception, or null
         * @return this builder
         */
        public Builder error(Throwable t) {
            this.error = t;
            return this;
        }

        /**
         * Sets the number of create attempts made. Default 0.
         *
         * @param n zero or more
         * @return this builder
         */
        public Builder attempts(int n) {
            this.attempts = n;
            return this;
        }

        /** {@return the event} */
        public LifecycleEvent build() {
            return new LifecycleEvent(this);
        }
    }
}
