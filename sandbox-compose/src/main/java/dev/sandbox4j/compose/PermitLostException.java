package dev.sandbox4j.compose;

import dev.sandbox4j.api.exception.SandboxException;

/**
 * The sandbox's concurrency permit was lost while it was open ({@link PermitLoss} says why), so the
 * {@link ConcurrencyLimiter} closed the sandbox rather than let it run over the cap. Thrown by
 * {@code exec} (a running exec's sandbox was destroyed under it, so its code may have run in part) and
 * by every later {@code exec}. Retriable: open a new sandbox, which waits for a permit.
 *
 * @since 0.1.0
 */
public class PermitLostException extends SandboxException {
    private final transient PermitLoss loss;

    /**
     * An exception for {@code loss}; it is retriable whatever the builder says.
     *
     * @param b the details (message, provider, whether the code may have run)
     * @param loss what was lost and why; not serialized
     */
    public PermitLostException(Builder b, PermitLoss loss) {
        super(b.retriable(true));
        this.loss = loss;
    }

    /** {@return what was lost and why; null after deserialization, as it is transient} */
    public PermitLoss loss() {
        return loss;
    }

    @Override
    protected SandboxException copyWith(Builder details) {
        return new PermitLostException(details, loss);
    }
}
