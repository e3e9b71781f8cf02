package dev.sandbox4j.api.exception;

/**
 * The provider is rate limiting or at its concurrency limit (HTTP 429). Retriable; see {@link #retryAfter()}.
 *
 * @since 0.1.0
 */
public class SandboxRateLimitException extends SandboxException {
    /**
     * An exception with the given details; the flags are as the builder holds them.
     *
     * @param b the details
     */
    public SandboxRateLimitException(Builder b) {
        super(b);
    }

    /**
     * An exception with only a message: retriable, no retry-after, the code did not run.
     *
     * @param message what went wrong; never an API key or token
     */
    public SandboxRateLimitException(String message) {
        super(builder(message).retriable(true));
    }

    @Override
    protected SandboxException copyWith(Builder details) {
        return new SandboxRateLimitException(details);
    }
}
