package dev.sandbox4j.spi;

import dev.sandbox4j.api.RunStatus;

/**
 * How a command ended, as an adapter saw it. The output is in the {@link OutputSink}.
 *
 * @since 0.1.0
 */
public final class ExecOutcome {
    private final RunStatus status;
    private final Integer exitCode;

    private ExecOutcome(RunStatus status, Integer exitCode) {
        this.status = status;
        this.exitCode = exitCode;
    }

    public static ExecOutcome exited(int exitCode) {
        return new ExecOutcome(RunStatus.EXITED, exitCode);
    }

    public static ExecOutcome timedOut() {
        return new ExecOutcome(RunStatus.TIMED_OUT, null);
    }

    /** Killed because the sink reported the hard cap. */
    public static ExecOutcome outputLimit() {
        return new ExecOutcome(RunStatus.OUTPUT_LIMIT, null);
    }

    /** Killed by a signal or the provider; {@code exitCode} may be null. */
    public static ExecOutcome killed(Integer exitCode) {
        return new ExecOutcome(RunStatus.KILLED, exitCode);
    }

    public RunStatus status() {
        return status;
    }

    public Integer exitCode() {
        return exitCode;
    }

    @Override
    public String toString() {
        return status + (exitCode == null ? "" : "(" + exitCode + ")");
    }
}
