package dev.sandbox4j.api;

import dev.sandbox4j.api.exception.SandboxAuthenticationException;
import dev.sandbox4j.api.exception.SandboxException;
import dev.sandbox4j.api.exception.SandboxNotFoundException;
import dev.sandbox4j.api.exception.SandboxRateLimitException;

/** Typed exceptions by HTTP status for the API's own tests (the real mapping is sandbox-http's HttpErrors). */
public final class TestErrors {
    private TestErrors() {
    }

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
        return b.retriable(s == 408 || s == 409 || s >= 500).build();
    }
}
