package dev.sandbox4j.api.exception;

import java.time.Duration;
import java.util.Optional;
import java.util.OptionalInt;
import dev.sandbox4j.api.RunResult;
import dev.sandbox4j.api.SandboxRunner;

/**
 * What the infrastructure did wrong (as opposed to what the code did, which is a {@link RunResult}).
 * Unchecked. Messages never contain API keys or tokens.
 *
 * <p>Two questions decide what a caller may do next: {@link #isRetriable()} (trying again, or on
 * another provider, may succeed) and {@link #codeMayHaveRun()} (the untrusted code may already have
 * run, so it must not be run again elsewhere).
 *
 * @since 0.1.0
 */
public class SandboxException extends RuntimeException {
    /**
     * The provider that failed, e.g. {@code e2b}; null when not set. Part of the serial form, as are the
     * fields below.
     */
    private final String provider;
    /** The HTTP status; 0 when the failure was not an HTTP answer. */
    private final int httpStatus;
    /** The provider's own error code; null when it sent none. */
    private final String providerCode;
    /** How long the provider asked to wait; null when it did not say. */
    private final Duration retryAfter;
    /** Whether trying again may succeed. */
    private final boolean retriable;
    /** Whether the untrusted code may have started. */
    private final boolean codeMayHaveRun;
    /** Whether the request may have taken effect though no answer arrived. */
    private final boolean requestMayHaveSucceeded;
    /** The run id of the sandbox concerned; null until known. Set by {@link #attachRunId}. */
    private volatile String runId;
    /** Whether a sandbox with {@link #runId} may still exist. Set by {@link #attachRunId}. */
    private volatile boolean sandboxMayExist;
    /** Text appended to the message by {@link #attachRunId}; empty for none. */
    private volatile String note = "";

    /**
     * An exception with the builder's details; for subtypes, which pass their builder on.
     *
     * @param b the details; its message and cause become this exception's
     */
    protected SandboxException(Builder b) {
        super(b.message, b.cause);
        this.provider = b.provider;
        this.httpStatus = b.httpStatus;
        this.providerCode = b.providerCode;
        this.retryAfter = b.retryAfter;
        this.retriable = b.retriable;
        this.codeMayHaveRun = b.codeMayHaveRun;
        this.requestMayHaveSucceeded = b.requestMayHaveSucceeded;
        this.runId = b.runId;
        this.sandboxMayExist = b.sandboxMayExist;
    }

    /**
     * An exception with only a message: not retriable, the code did not run, no provider details.
     *
     * @param message what went wrong; never an API key or token
     */
    public SandboxException(String message) {
        this(builder(message));
    }

    /**
     * An exception with a message and a cause: not retriable, the code did not run, no provider details.
     *
     * @param message what went wrong; never an API key or token
     * @param cause the underlying failure, or null
     */
    public SandboxException(String message, Throwable cause) {
        this(builder(message).cause(cause));
    }

    /**
     * Starts the details of an exception; every flag defaults to false and every value to unset.
     *
     * @param message what went wrong; never an API key or token
     * @return a new builder
     */
    public static Builder builder(String message) {
        return new Builder(message);
    }


    /**
     * {@return the provider that failed, e.g. {@code e2b}, or {@code local}; null when the thrower did not
     * name it}
     */
    public String provider() {
        return provider;
    }

    /** {@return the HTTP status, if the failure was an HTTP answer; empty otherwise} */
    public OptionalInt httpStatus() {
        return httpStatus == 0 ? OptionalInt.empty() : OptionalInt.of(httpStatus);
    }

    /** {@return the provider's own error code, if it sent one} */
    public Optional<String> providerCode() {
        return Optional.ofNullable(providerCode);
    }

    /** {@return how long the provider asked us to wait, if it did} */
    public Optional<Duration> retryAfter() {
        return Optional.ofNullable(retryAfter);
    }

    /** {@return true when trying again (here or on another provider) may succeed} */
    public boolean isRetriable() {
        return retriable;
    }

    /** {@return true when the untrusted code may have started: never run it again elsewhere} */
    public boolean codeMayHaveRun() {
        return codeMayHaveRun;
    }

    /**
     * The request may have taken effect even though no answer arrived (a timeout, a dropped connection, a 5xx
     * on a non-idempotent call). After a create, the lifecycle looks the sandbox up by its run id and tears
     * it down.
     *
     * @return true when the request may have succeeded unseen
     */
    public boolean requestMayHaveSucceeded() {
        return requestMayHaveSucceeded;
    }

    /**
     * The run id of the sandbox this failure concerns, when the lifecycle knows it: the label every sandbox
     * of this library carries, so {@link SandboxRunner#sweep} can name it later.
     *
     * @return the run id; empty when no sandbox was involved or the id is not known
     */
    public Optional<String> runId() {
        return Optional.ofNullable(runId);
    }

    /**
     * A sandbox with {@link #runId()} may still exist on the provider: its create had an unknown outcome and
     * was not resolved before this exception was thrown, or its teardown failed. The runner keeps looking for
     * it in the background ({@link SandboxRunner#lifecycleStats()} counts the outcome); the sandbox's
     * lifetime bounds it in any case.
     *
     * @return true when the sandbox may outlive this failure
     */
    public boolean sandboxMayExist() {
        return sandboxMayExist;
    }

    /**
     * Records on this exception the run id of its sandbox, whether that sandbox may still exist, and a note
     * appended to the message. The lifecycle calls it before the exception reaches the caller (the same
     * instance the adapter threw, so its type and cause stay).
     *
     * @param runId the sandbox's run id
     * @param sandboxMayExist whether the sandbox may still exist on the provider
     * @param note appended as is to {@link #getMessage()}; null or empty for none
     * @return this exception
     */
    public SandboxException attachRunId(String runId, boolean sandboxMayExist, String note) {
        this.runId = runId;
        this.sandboxMayExist = sandboxMayExist;
        this.note = note == null ? "" : note;
        return this;
    }

    /**
     * As {@link #attachRunId(String, boolean, String)} without a note.
     *
     * @param runId the sandbox's run id
     * @param sandboxMayExist whether the sandbox may still exist on the provider
     * @return this exception
     */
    public SandboxException attachRunId(String runId, boolean sandboxMayExist) {
        return attachRunId(runId, sandboxMayExist, "");
    }

    @Override
    public String getMessage() {
        String m = super.getMessage();
        return note.isEmpty() ? m : m + note;
    }

    /**
     * A copy of this exception's details, to rethrow with a changed flag: its {@link Builder#build()}
     * makes an exception of this one's type (a {@link SandboxAuthenticationException} stays one), with
     * the flags as the builder holds them.
     *
     * @return a builder holding this exception's details and type
     */
    public Builder toBuilder() {
        Builder b = new Builder(getMessage()).provider(provider).httpStatus(httpStatus).providerCode(providerCode)
                .retryAfter(retryAfter).retriable(retriable).codeMayHaveRun(codeMayHaveRun)
                .requestMayHaveSucceeded(requestMayHaveSucceeded).runId(runId).sandboxMayExist(sandboxMayExist)
                .cause(getCause());
        b.type = this;
        return b;
    }

    /**
     * An exception of this one's type with the given details, for {@link #toBuilder()}'s build. Every
     * subtype overrides it to return its own type; one that does not is copied as a plain
     * {@code SandboxException}.
     *
     * @param details the details of the copy
     * @return the copy
     */
    protected SandboxException copyWith(Builder details) {
        return new SandboxException(details);
    }

    /**
     * Details shared by every subtype.
     *
     * @since 0.1.0
     */
    public static final class Builder {
        private String message;
        private String provider;
        private int httpStatus;
        private String providerCode;
        private Duration retryAfter;
        private boolean retriable;
        private boolean codeMayHaveRun;
        private boolean requestMayHaveSucceeded;
        private String runId;
        private boolean sandboxMayExist;
        private Throwable cause;
        private SandboxException type;

        private Builder(String message) {
            this.message = message;
        }

        /**
         * Sets the provider that failed. Default unset (null).
         *
         * @param provider e.g. {@code e2b} or {@code local}
         * @return this builder
         */
        public Builder provider(String provider) {
            this.provider = provider;
            return this;
        }

        /**
         * Sets the HTTP status of the provider's answer. Default 0, no HTTP answer.
         *
         * @param httpStatus the status code; 0 for none
         * @return this builder
         */
        public Builder httpStatus(int httpStatus) {
            this.httpStatus = httpStatus;
            return this;
        }

        /**
         * Sets the provider's own error code. Default unset.
         *
         * @param providerCode the code as the provider sent it, or null
         * @return this builder
         */
        public Builder providerCode(String providerCode) {
            this.providerCode = providerCode;
            return this;
        }

        /**
         * Sets how long the provider asked to wait before trying again. Default unset.
         *
         * @param retryAfter the wait, or null
         * @return this builder
         */
        public Builder retryAfter(Duration retryAfter) {
            this.retryAfter = retryAfter;
            return this;
        }

        /**
         * Sets whether trying again (here or on another provider) may succeed. Default false.
         *
         * @param retriable true when a retry may succeed
         * @return this builder
         */
        public Builder retriable(boolean retriable) {
            this.retriable = retriable;
            return this;
        }

        /**
         * Sets whether the untrusted code may have started. Default false.
         *
         * @param codeMayHaveRun true when the code may have run, so it must not be run again elsewhere
         * @return this builder
         */
        public Builder codeMayHaveRun(boolean codeMayHaveRun) {
            this.codeMayHaveRun = codeMayHaveRun;
            return this;
        }

        /**
         * Sets whether the request may have taken effect though no answer arrived. Default false.
         *
         * @param requestMayHaveSucceeded true after a timeout, a dropped connection or a 5xx on a
         *     non-idempotent call
         * @return this builder
         */
        public Builder requestMayHaveSucceeded(boolean requestMayHaveSucceeded) {
            this.requestMayHaveSucceeded = requestMayHaveSucceeded;
            return this;
        }

        /**
         * Sets the run id of the sandbox concerned. Default unset.
         *
         * @param runId the run id, or null
         * @return this builder
         */
        public Builder runId(String runId) {
            this.runId = runId;
            return this;
        }

        /**
         * Sets whether a sandbox with the run id may still exist on the provider. Default false.
         *
         * @param sandboxMayExist true when the sandbox may outlive the failure
         * @return this builder
         */
        public Builder sandboxMayExist(boolean sandboxMayExist) {
            this.sandboxMayExist = sandboxMayExist;
            return this;
        }

        /**
         * Sets the underlying failure. Default none.
         *
         * @param cause the cause, or null
         * @return this builder
         */
        public Builder cause(Throwable cause) {
            this.cause = cause;
            return this;
        }

        /**
         * {@return the HTTP status set so far; 0 when none, unlike {@link SandboxException#httpStatus()}'s
         * empty}
         */
        public int httpStatusValue() {
            return httpStatus;
        }

        /**
         * An exception with these details: of the copied exception's type for a builder from {@link
         * SandboxException#toBuilder()}, else a plain {@link SandboxException}.
         *
         * @return the exception
         */
        public SandboxException build() {
            return type == null ? new SandboxException(this) : type.copyWith(this);
        }
    }
}
