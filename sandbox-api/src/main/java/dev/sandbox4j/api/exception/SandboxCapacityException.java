package dev.sandbox4j.api.exception;

/**
 * A local concurrency cap had no permit free before the deadline. Retriable; no sandbox was created.
 *
 * @since 0.1.0
 */
public class SandboxCapacityException extends SandboxException {
    public SandboxCapacityException(Builder b) {
        super(b);
    }

    public SandboxCapacityException(String message) {
        super(builder(message).retriable(true));
    }

    @Override
    protected SandboxException copyWith(Builder details) {
        return new SandboxCapacityException(details);
    }
}
