package dev.sandbox4j.api.exception;

import dev.sandbox4j.api.PartialOutput;
import java.util.Objects;

/**
 * The calling thread was interrupted. The sandbox was torn down and the thread's interrupt flag is set again.
 * When the interrupt came during an exec, {@link #output()} holds what the code had printed by then.
 *
 * @since 0.1.0
 */
public class SandboxInterruptedException extends SandboxException {
    /** What the exec had printed when the interrupt came; {@link PartialOutput#none()} outside an exec. */
    private final PartialOutput output;

    /**
     * An exception with the given details and no output; the flags are as the builder holds them.
     *
     * @param b the details
     */
    public SandboxInterruptedException(Builder b) {
        this(b, PartialOutput.none());
    }

    /**
     * An exception with the given details and the output the interrupted exec had received.
     *
     * @param b the details
     * @param output what the code had printed when the interrupt came; not null
     */
    public SandboxInterruptedException(Builder b, PartialOutput output) {
        super(b);
        this.output = Objects.requireNonNull(output, "output");
    }

    /**
     * An exception with only a message: the code may have run, not retriable, no output.
     *
     * @param message what went wrong; never an API key or token
     */
    public SandboxInterruptedException(String message) {
        super(builder(message).codeMayHaveRun(true));
        this.output = PartialOutput.none();
    }

    /**
     * What the code had printed when the interrupt came: the output received so far, under the
     * execution's limits, as untrusted as any output. Empty when the interrupt came outside an exec
     * (while creating, waiting for a permit, reading a file), and on a runner that receives output only
     * with the result (it does not declare {@code Feature.STREAMING}).
     *
     * @return the output; never null
     */
    public PartialOutput output() {
        return output;
    }

    @Override
    protected SandboxException copyWith(Builder details) {
        return new SandboxInterruptedException(details, output);
    }
}
