package dev.sandbox4j.api.exception;

/**
 * The sandbox, template or resource does not exist (HTTP 404).
 *
 * @since 0.1.0
 */
public class SandboxNotFoundException extends SandboxException {
    /**
     * An exception with the given details; the flags are as the builder holds them.
     *
     * @param b the details
     */
    public SandboxNotFoundException(Builder b) {
        super(b);
    }

    /**
     * An exception with only a message: not retriable, the code did not run.
     *
     * @param message what went wrong; never an API key or token
     */
    public SandboxNotFoundException(String message) {
        super(builder(message));
    }

    @Override
    protected SandboxException copyWith(Builder details) {
        return new SandboxNotFoundException(details);
    }
}
