package dev.sandbox4j.api.exception;

/**
 * The calling thread was interrupted. The sandbox was torn down and the thread's interrupt flag is set again.
 *
 * @since 0.1.0
 */
public class SandboxInterruptedException extends SandboxException {
    /**
     * An exception with the given details; the flags are as the builder holds them.
     *
     * @param b the details
     */
    public SandboxInterruptedException(Builder b) {
        super(b);
    }

    /**
     * An exception with only a message: the code may have run, not retriable.
     *
     * @param message what went wrong; never an API key or token
     */
    public SandboxInterruptedException(String message) {
        super(builder(message).codeMayHaveRun(true));
    }

    @Override
    protected SandboxException copyWith(Builder details) {
        return new SandboxInterruptedException(details);
    }
}
