package dev.sandbox4j.api.exception;

/**
 * A local concurrency cap had no permit free before the deadline. Retriable; no sandbox was created.
 *
 * @since 0.1.0
 */
public class SandboxCapacityException extends SandboxException {
    /**
     * An exception with the given details; the flags are as the builder holds them.
     *
     * @param b the details
     */
    public SandboxCapacityException(Builder b) {
        super(b);
    }

    /**
     * An exception with only a message: retriable, the code did not run.
     *
     * @param message what went wrong; never an API key or token
     */
    public SandboxCapacityException(String message) {
        super(builder(message).retriable(true));
    }

    @Override
    protected SandboxException copyWith(Builder details) {
        return new SandboxCapacityException(details);
    }
}
