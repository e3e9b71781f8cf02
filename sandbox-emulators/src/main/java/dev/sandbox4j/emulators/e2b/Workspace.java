package dev.sandbox4j.emulators.e2b;

import dev.sandbox4j.api.Execution;
import dev.sandbox4j.api.RunResult;
import java.io.IOException;
import java.nio.file.Path;
import java.util.Map;

/**
 * Where an emulated sandbox really runs its commands: a local sandbox with a working directory (the
 * emulated {@code /home/user}) and a network that is either the host's or none.
 */
interface Workspace extends AutoCloseable {

    /** Opens workspaces; one per emulated sandbox. */
    @FunctionalInterface
    interface Factory {
        /**
         * @param hostNetwork whether commands reach the host network (else no network at all)
         * @param env the sandbox-wide environment from the create request
         */
        Workspace open(boolean hostNetwork, Map<String, String> env);
    }

    /** Writes a file relative to the working directory, creating parent directories. */
    void writeFile(String relativePath, byte[] content) throws IOException;

    /** The working directory on the host, for reading files back. */
    Path workDirectory();

    /**
     * Reads a file relative to the working directory, following no symbolic link, keeping at most
     * {@code maxBytes}; a missing file is a {@link java.nio.file.NoSuchFileException}.
     */
    dev.sandbox4j.api.SandboxFile readFile(String relativePath, long maxBytes) throws IOException;

    /** Lists a directory relative to the working directory, following no symbolic link. */
    java.util.List<dev.sandbox4j.api.FileEntry> listFiles(String relativeDirectory) throws IOException;

    /** The working directory as commands in the sandbox see it (e.g. {@code /sandbox}). */
    String sandboxPath();

    /** Switches the network for the next command. */
    void hostNetwork(boolean on);

    /**
     * Runs one command to its end, its budget or its output cap. Blocks; an interrupt of the calling
     * thread kills the command (and may tear the workspace down: see {@link #isClosed()}).
     */
    RunResult exec(Execution execution);

    boolean isClosed();

    /** Kills whatever runs and deletes the working directory. Idempotent. */
    @Override
    void close();
}
