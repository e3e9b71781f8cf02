package dev.sandbox4j.api.exception;

/**
 * The provider is rate limiting or at its concurrency limit (HTTP 429). Retriable; see {@link #retryAfter()}.
 *
 * @since 0.1.0
 */
public class SandboxRateLimitException extends SandboxException {
    public SandboxRateLimitException(Builder b) {
        super(b);
    }

    public SandboxRateLimitException(String message) {
        super(builder(message).retriable(true));
    }

    @Override
    protected SandboxException copyWith(Builder details) {
        return new SandboxRateLimitException(details);
    }
}
