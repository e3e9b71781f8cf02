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

    /**
     * The command exited on its own.
     *
     * @param exitCode its exit code
     * @return the outcome, {@link RunStatus#EXITED}
     */
    public static ExecOutcome exited(int exitCode) {
        return new ExecOutcome(RunStatus.EXITED, exitCode);
    }

    /**
     * The budget ran out and the command was killed; the output read so far is kept.
     *
     * @return the outcome, {@link RunStatus#TIMED_OUT}, without an exit code
     */
    public static ExecOutcome timedOut() {
        return new ExecOutcome(RunStatus.TIMED_OUT, null);
    }

    /**
     * Killed because the sink reported the hard cap.
     *
     * @return the outcome, {@link RunStatus#OUTPUT_LIMIT}, without an exit code
     */
    public static ExecOutcome outputLimit() {
        return new ExecOutcome(RunStatus.OUTPUT_LIMIT, null);
    }

    /**
     * Killed by a signal or the provider.
     *
     * @param exitCode the exit code the provider reported, or null
     * @return the outcome, {@link RunStatus#KILLED}
     */
    public static ExecOutcome killed(Integer exitCode) {
        return new ExecOutcome(RunStatus.KILLED, exitCode);
    }

    /** {@return how the command ended} */
    public RunStatus status() {
        return status;
    }

    /** {@return the exit code; null when the command was killed before exiting and none was reported} */
    public Integer exitCode() {
        return exitCode;
    }

    @Override
    public String toString() {
        return status + (exitCode == null ? "" : "(" + exitCode + ")");
    }
}
