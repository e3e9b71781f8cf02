package dev.sandbox4j.http;

import dev.sandbox4j.api.exception.SandboxAuthenticationException;
import dev.sandbox4j.api.exception.SandboxException;
import dev.sandbox4j.api.exception.SandboxNotFoundException;
import dev.sandbox4j.api.exception.SandboxRateLimitException;

/**
 * HTTP statuses to the {@link SandboxException} family: HTTP detail, so it lives with the HTTP plumbing.
 *
 * @since 0.1.0
 */
public final class HttpErrors {
    private HttpErrors() {
    }

    /**
     * 401/403 authentication, 404 not found, 429 rate limit (retriable), 408/409/5xx retriable,
     * anything else not retriable. {@code b} carries the status.
     *
     * @param b the exception's details with its HTTP status (none, read as 0, is "anything else"); its
     *          retriable flag is set here, over any set before
     * @return the exception, not thrown: a {@link SandboxAuthenticationException}, a
     *         {@link SandboxNotFoundException}, a {@link SandboxRateLimitException} or a plain
     *         {@link SandboxException}
     */
    public static SandboxException forStatus(SandboxException.Builder b) {
        int s = b.httpStatusValue();
        if (s == 401 || s == 403) {
            return new SandboxAuthenticationException(b.retriable(false));
        }
        if (s == 404) {
            return new SandboxNotFoundException(b.retriable(false));
        }
        if (s == 429) {
            return new SandboxRateLimitException(b.retriable(true));
        }
        if (s == 408 || s == 409 || s >= 500) {
            return b.retriable(true).build();
        }
        return b.retriable(false).build();
    }
}
