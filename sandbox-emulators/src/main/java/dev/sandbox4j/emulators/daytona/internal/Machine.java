package dev.sandbox4j.emulators.daytona.internal;

import dev.sandbox4j.api.Execution;
import dev.sandbox4j.api.RunResult;
import java.io.IOException;

/**
 * Where one emulated Daytona sandbox really runs its commands: a local sandbox whose network (the
 * host's, or none) was fixed when it was opened. Each {@link #exec} starts in the machine's working
 * directory, which stands for the Daytona user's home ({@code /home/daytona}).
 */
public interface Machine extends AutoCloseable {

    /** Writes a file relative to the working directory, creating parent directories. */
    void writeFile(String relativePath, byte[] content) throws IOException;

    /**
     * Reads a file relative to the working directory, following no symbolic link, keeping at most
     * {@code maxBytes}; a missing file is a {@link java.nio.file.NoSuchFileException}.
     */
    default dev.sandbox4j.api.SandboxFile readFile(String relativePath, long maxBytes) throws IOException {
        throw new IOException("this machine cannot read files back");
    }

    /**
     * Runs one command to its end, its budget or its output cap. Blocks; interrupting the calling
     * thread or {@link #close() closing} the machine kills the command.
     */
    RunResult exec(Execution execution);

    /** Kills whatever runs and deletes the working directory. Idempotent. */
    @Override
    void close();
}
