package dev.sandbox4j.api.exception;

/**
 * The calling thread was interrupted. The sandbox was torn down and the thread's interrupt flag is set again.
 *
 * @since 0.1.0
 */
public class SandboxInterruptedException extends SandboxException {
    public SandboxInterruptedException(Builder b) {
        super(b);
    }

    public SandboxInterruptedException(String message) {
        super(builder(message).codeMayHaveRun(true));
    }

    @Override
    protected SandboxException copyWith(Builder details) {
        return new SandboxInterruptedException(details);
    }
}
