package dev.sandbox4j.compose;

import dev.sandbox4j.api.exception.SandboxCapacityException;
import dev.sandbox4j.api.exception.SandboxException;

/**
 * The store that keeps a {@link ConcurrencyLimiter}'s permits (a shared Redis, say) could not be asked,
 * so no permit was taken and no sandbox was created: caps fail closed. Retriable, like any
 * {@link SandboxCapacityException}; the cause says what the store's client saw.
 *
 * @since 0.1.0
 */
public class PermitStoreException extends SandboxCapacityException {
    /**
     * An exception with the given details; it is retriable whatever the builder says.
     *
     * @param b the details; the cause should say what the store's client saw
     */
    public PermitStoreException(Builder b) {
        super(b.retriable(true));
    }

    /**
     * A retriable exception with a message and the store client's failure.
     *
     * @param message what could not be asked; never a password or token
     * @param cause what the store's client saw
     */
    public PermitStoreException(String message, Throwable cause) {
        this(builder(message).cause(cause));
    }

    @Override
    protected SandboxException copyWith(Builder details) {
        return new PermitStoreException(details);
    }
}
