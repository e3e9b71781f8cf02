package dev.sandbox4j.api;

/**
 * How the code's run ended.
 *
 * @since 0.1.0
 */
public enum RunStatus {
    /** The process exited on its own; see the exit code. */
    EXITED,
    /** The budget ran out and the process was killed; partial output is kept. */
    TIMED_OUT,
    /** A stream reached the hard byte cap; reading stopped and the process was killed. */
    OUTPUT_LIMIT,
    /** The process was killed by something else (a signal, the provider). */
    KILLED
}
