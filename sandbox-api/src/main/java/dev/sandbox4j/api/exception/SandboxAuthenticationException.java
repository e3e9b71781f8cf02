package dev.sandbox4j.api.exception;

/**
 * The provider refused the credentials (HTTP 401 or 403). Not retriable.
 *
 * @since 0.1.0
 */
public class SandboxAuthenticationException extends SandboxException {
    public SandboxAuthenticationException(Builder b) {
        super(b);
    }

    public SandboxAuthenticationException(String message) {
        super(builder(message));
    }

    @Override
    protected SandboxException copyWith(Builder details) {
        return new SandboxAuthenticationException(details);
    }
}
