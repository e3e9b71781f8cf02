package dev.sandbox4j.api.exception;

/**
 * The runner is not usable as configured: a missing API key, a missing bwrap, a provider module not on the classpath. Not retriable.
 *
 * @since 0.1.0
 */
public class SandboxConfigurationException extends SandboxException {
    /**
     * An exception with the given details; the flags are as the builder holds them.
     *
     * @param b the details
     */
    public SandboxConfigurationException(Builder b) {
        super(b);
    }

    /**
     * An exception with only a message: not retriable, the code did not run.
     *
     * @param message what went wrong; never an API key or token
     */
    public SandboxConfigurationException(String message) {
        super(builder(message));
    }

    @Override
    protected SandboxException copyWith(Builder details) {
        return new SandboxConfigurationException(details);
    }
}
