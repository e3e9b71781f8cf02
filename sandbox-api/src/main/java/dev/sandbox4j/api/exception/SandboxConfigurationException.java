package dev.sandbox4j.api.exception;

/**
 * The runner is not usable as configured: a missing API key, a missing bwrap, a provider module not on the classpath. Not retriable.
 *
 * @since 0.1.0
 */
public class SandboxConfigurationException extends SandboxException {
    public SandboxConfigurationException(Builder b) {
        super(b);
    }

    public SandboxConfigurationException(String message) {
        super(builder(message));
    }

    @Override
    protected SandboxException copyWith(Builder details) {
        return new SandboxConfigurationException(details);
    }
}
