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
    private final String provider;
    private final int httpStatus;
    private final String providerCode;
    private final Duration retryAfter;
    private final boolean retriable;
    private final boolean codeMayHaveRun;
    private final boolean requestMayHaveSucceeded;
    private volatile String runId;
    private volatile boolean sandboxMayExist;
    private volatile String note = "";

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

    public SandboxException(String message) {
        this(builder(message));
    }

    public SandboxException(String message, Throwable cause) {
        this(builder(message).cause(cause));
    }

    public static Builder builder(String message) {
        return new Builder(message);
    }


    /** The provider that failed, e.g. {@code e2b}, or {@code local}. */
    public String provider() {
        return provider;
    }

    /** The HTTP status, if the failure was an HTTP answer. */
    public OptionalInt httpStatus() {
        return httpStatus == 0 ? OptionalInt.empty() : OptionalInt.of(httpStatus);
    }

    /** The provider's own error code, if it sent one. */
    public Optional<String> providerCode() {
        return Optional.ofNullable(providerCode);
    }

    /** How long the provider asked us to wait, if it did. */
    public Optional<Duration> retryAfter() {
        return Optional.ofNullable(retryAfter);
    }

    /** Trying again (here or on another provider) may succeed. */
    public boolean isRetriable() {
        return retriable;
    }

    /** The untrusted code may have started: never run it again elsewhere. */
    public boolean codeMayHaveRun() {
        return codeMayHaveRun;
    }

    /**
     * The request may have taken effect even though no answer arrived (a timeout, a dropped
     * connection, a 5xx on a non-idempotent call). After a create, the lifecycle looks the sandbox up
     * by its run id and tears it down.
     */
    public boolean requestMayHaveSucceeded() {
        return requestMayHaveSucceeded;
    }

    /**
     * The run id of the sandbox this failure concerns, when the lifecycle knows it: the label every
     * sandbox of this library carries, so {@link SandboxRunner#sweep} can name it later.
     */
    public Optional<String> runId() {
        return Optional.ofNullable(runId);
    }

    /**
     * A sandbox with {@link #runId()} may still exist on the provider: its create had an unknown
     * outcome and was not resolved before this exception was thrown, or its teardown failed. The
     * runner keeps looking for it in the background ({@link SandboxRunner#lifecycleStats()} counts
     * the outcome); the sandbox's lifetime bounds it in any case.
     */
    public boolean sandboxMayExist() {
        return sandboxMayExist;
    }

    /**
     * Records on this exception the run id of its sandbox, whether that sandbox may still exist, and
     * a note appended to the message; returns this exception. The lifecycle calls it before the
     * exception reaches the caller (the same instance the adapter threw, so its type and cause stay).
     */
    public SandboxException attachRunId(String runId, boolean sandboxMayExist, String note) {
        this.runId = runId;
        this.sandboxMayExist = sandboxMayExist;
        this.note = note == null ? "" : note;
        return this;
    }

    /** As {@link #attachRunId(String, boolean, String)} without a note. */
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

    /** Details shared by every subtype. */
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

        public Builder provider(String provider) {
            this.provider = provider;
            return this;
        }

        public Builder httpStatus(int httpStatus) {
            this.httpStatus = httpStatus;
            return this;
        }

        public Builder providerCode(String providerCode) {
            this.providerCode = providerCode;
            return this;
        }

        public Builder retryAfter(Duration retryAfter) {
            this.retryAfter = retryAfter;
            return this;
        }

        public Builder retriable(boolean retriable) {
            this.retriable = retriable;
            return this;
        }

        public Builder codeMayHaveRun(boolean codeMayHaveRun) {
            this.codeMayHaveRun = codeMayHaveRun;
            return this;
        }

        public Builder requestMayHaveSucceeded(boolean requestMayHaveSucceeded) {
            this.requestMayHaveSucceeded = requestMayHaveSucceeded;
            return this;
        }

        public Builder runId(String runId) {
            this.runId = runId;
            return this;
        }

        public Builder sandboxMayExist(boolean sandboxMayExist) {
            this.sandboxMayExist = sandboxMayExist;
            return this;
        }

        public Builder cause(Throwable cause) {
            this.cause = cause;
            return this;
        }

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
