package dev.sandbox4j.api.exception;

/**
 * The sandbox, template or resource does not exist (HTTP 404).
 *
 * @since 0.1.0
 */
public class SandboxNotFoundException extends SandboxException {
    public SandboxNotFoundException(Builder b) {
        super(b);
    }

    public SandboxNotFoundException(String message) {
        super(builder(message));
    }

    @Override
    protected SandboxException copyWith(Builder details) {
        return new SandboxNotFoundException(details);
    }
}
