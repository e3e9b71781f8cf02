package dev.sandbox4j.emulators;

import dev.sandbox4j.api.Execution;
import dev.sandbox4j.api.FileEntry;
import dev.sandbox4j.api.RunResult;
import dev.sandbox4j.api.SandboxFile;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;

/**
 * Where one emulated sandbox really runs: the seam under every emulator. The emulators speak their
 * provider's wire format on top of it; {@link LocalMachine} is a local bubblewrap sandbox,
 * {@link InstantMachine} runs nothing (instant mode), and tests bring their own. Paths are relative to
 * the machine's working directory, which stands for the provider's home ({@code /home/user},
 * {@code /home/daytona}, {@code /vercel/sandbox}); commands see it at {@link #workPath()}.
 *
 * @since 0.1.0
 */
public interface Machine extends AutoCloseable {

    /**
     * Opens the machine behind each new emulated sandbox.
     *
     * @since 0.1.0
     */
    @FunctionalInterface
    interface Factory extends AutoCloseable {
        /**
         * Opens the machine for one new emulated sandbox, with the host's network or none.
         *
         * @param hostNetwork whether commands reach the host's network (else no network at all)
         * @param env the sandbox-wide environment from the create request
         * @param lifetime the machine's own backstop: it is destroyed after this long whatever happens
         * @return a new machine, open
         * @throws Exception when no machine can be opened (the emulator answers its provider's failure)
         */
        Machine open(boolean hostNetwork, Map<String, String> env, Duration lifetime) throws Exception;

        /**
         * Opens a machine whose egress is {@code egress}: by default the host's network for allow-all and
         * none for anything else (a list gets no network: stricter, never weaker); {@link LocalMachines}
         * enforces a domain list for real, through the local runner's egress proxy.
         *
         * @param egress the egress the emulator made of the policy on the wire
         * @param env the sandbox-wide environment from the create request
         * @param lifetime the machine's own backstop: it is destroyed after this long whatever happens
         * @return a new machine, open
         * @throws Exception when no machine can be opened
         */
        default Machine open(dev.sandbox4j.policy.EgressPolicy egress, Map<String, String> env, Duration lifetime)
                throws Exception {
            return open(egress.isAllowAll(), env, lifetime);
        }

        /** Releases what the factory holds, once the emulator has closed every machine. */
        @Override
        default void close() {
        }
    }

    /** {@return the working directory as commands inside the machine see it (by default {@link LocalMachine#WORK_PATH})} */
    default String workPath() {
        return LocalMachine.WORK_PATH;
    }

    /** {@return the working directory on the host, where output files of a running command are read} */
    Path workDirectory();

    /**
     * Writes a file, creating parent directories; an existing file is replaced.
     *
     * @param relativePath the file's path, relative to the working directory
     * @param content its bytes
     * @throws IOException when it cannot be written (a bad path, a closed machine)
     */
    void writeFile(String relativePath, byte[] content) throws IOException;

    /**
     * Writes a file with the permission bits of {@code mode} (the owner can always read it). By default
     * the mode is ignored: {@link #writeFile(String, byte[])}.
     *
     * @param relativePath the file's path, relative to the working directory
     * @param content its bytes
     * @param mode the permission bits, such as {@code 0644}; bits above {@code 0777} are ignored
     * @throws IOException when it cannot be written or its permissions cannot be set
     */
    default void writeFile(String relativePath, byte[] content, int mode) throws IOException {
        writeFile(relativePath, content);
    }

    /**
     * Creates a directory and its parents.
     *
     * @param relativePath the directory's path, relative to the working directory
     * @throws IOException when it cannot be made; by default always (this machine cannot make directories)
     */
    default void mkdir(String relativePath) throws IOException {
        throw new IOException("this machine cannot make directories");
    }

    /**
     * Reads a file, following no symbolic link, keeping at most {@code maxBytes}.
     *
     * @param relativePath the file's path, relative to the working directory
     * @param maxBytes the most bytes kept; the rest of a larger file is cut and {@link SandboxFile#truncated()} is set
     * @return the file, with the size it has in the machine and the bytes kept
     * @throws java.nio.file.NoSuchFileException when it is missing
     * @throws IOException when it cannot be read (a directory, a link); by default always
     */
    default SandboxFile readFile(String relativePath, long maxBytes) throws IOException {
        throw new IOException("this machine cannot read files back");
    }

    /**
     * Lists a directory, following no symbolic link.
     *
     * @param relativeDirectory the directory's path, relative to the working directory
     * @return its entries
     * @throws java.nio.file.NoSuchFileException when it is missing
     * @throws IOException when it cannot be listed; by default always
     */
    default List<FileEntry> listFiles(String relativeDirectory) throws IOException {
        throw new IOException("this machine cannot list files");
    }

    /**
     * Switches the network of the next command: the host's, or none.
     *
     * @param hostNetwork true for the host's network, false for none
     * @throws UnsupportedOperationException from a machine whose network is fixed when it opens
     */
    default void setNetwork(boolean hostNetwork) {
        throw new UnsupportedOperationException("the network of this machine is fixed when it opens");
    }

    /**
     * Switches the egress of the next command: by default {@link #setNetwork} with the host's network for
     * allow-all and none for anything else; {@link LocalMachine} enforces a domain list for real.
     *
     * @param egress the egress the emulator made of the policy on the wire
     * @throws UnsupportedOperationException from a machine whose network is fixed when it opens
     */
    default void setEgress(dev.sandbox4j.policy.EgressPolicy egress) {
        setNetwork(egress.isAllowAll());
    }

    /**
     * Runs one command to its end, its budget or its output cap, one at a time. Blocks; interrupting
     * the calling thread kills the command and may close the machine (see {@link #isClosed()}); use
     * {@link #killRunning()} to end a command and keep the machine.
     *
     * @param execution the command, its input, environment and limits
     * @return how it ended and what it wrote
     */
    RunResult exec(Execution execution);

    /**
     * Kills the command running now, if any, and keeps the machine. By default nothing is killed.
     *
     * @return false when nothing was killed
     */
    default boolean killRunning() {
        return false;
    }

    /** {@return whether this machine runs nothing at all ({@link InstantMachine}): handlers answer execs at once} */
    default boolean instant() {
        return false;
    }

    /** {@return whether the machine is gone (closed, or torn down by an interrupted command)} */
    boolean isClosed();

    /** Kills whatever runs and deletes the working directory. Idempotent. */
    @Override
    void close();
}
