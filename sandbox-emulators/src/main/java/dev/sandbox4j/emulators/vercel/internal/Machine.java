package dev.sandbox4j.emulators.vercel.internal;

import dev.sandbox4j.api.Execution;

/**
 * The machine behind one emulated session: where files land and commands really run. The emulator
 * speaks Vercel's wire format on top of it; the implementation is a local sandbox with the egress the
 * emulator decided.
 */
public interface Machine {

    /** The session's working directory as seen by commands inside the machine (where /vercel/sandbox maps). */
    String workPath();

    /** Writes a file at {@code relativePath} under the working directory, creating parent directories. */
    void writeFile(String relativePath, byte[] content, int mode) throws Exception;

    /** Creates a directory (and its parents) under the working directory. */
    void mkdir(String relativePath) throws Exception;

    /** Reads a file under the working directory; null when it does not exist; refuses files over {@code maxBytes}. */
    byte[] readFile(String relativePath, long maxBytes) throws Exception;

    /** Host network ({@code true}) or none for the next command. */
    void setNetwork(boolean hostNetwork);

    /**
     * Runs one command to its end, pushing its output to {@code output}. Called for one command at a
     * time. Interrupting the calling thread may destroy the machine: use {@link #kill} to end a command.
     */
    Outcome run(Execution execution, Output output) throws InterruptedException;

    /**
     * Kills the command running now, if any, leaving the machine usable: the {@link #run} in progress
     * returns as its process died. False when nothing was running.
     */
    boolean kill();

    /** Destroys the machine; idempotent. */
    void destroy();

    /** Where a command's output goes as it arrives. */
    interface Output {
        void stdout(String text);

        void stderr(String text);
    }

    /** How a command ended. */
    final class Outcome {
        private final int exitCode;
        private final boolean timedOut;

        private Outcome(int exitCode, boolean timedOut) {
            this.exitCode = exitCode;
            this.timedOut = timedOut;
        }

        public static Outcome exited(int exitCode) {
            return new Outcome(exitCode, false);
        }

        /** Killed by the per-command timeout (SIGKILL). */
        public static Outcome timeout() {
            return new Outcome(137, true);
        }

        public int exitCode() {
            return exitCode;
        }

        /** Whether the per-command timeout ended it. */
        public boolean timedOut() {
            return timedOut;
        }
    }
}
