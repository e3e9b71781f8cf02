package dev.sandbox4j.api.exception;

/**
 * The provider refused the credentials (HTTP 401 or 403). Not retriable.
 *
 * @since 0.1.0
 */
public class SandboxAuthenticationException extends SandboxException {
    /**
     * An exception with the given details; the flags are as the builder holds them.
     *
     * @param b the details
     */
    public SandboxAuthenticationException(Builder b) {
        super(b);
    }

    /**
     * An exception with only a message: not retriable, the code did not run.
     *
     * @param message what went wrong; never an API key or token
     */
    public SandboxAuthenticationException(String message) {
        super(builder(message));
    }

    @Override
    protected SandboxException copyWith(Builder details) {
        return new SandboxAuthenticationException(details);
    }
}
