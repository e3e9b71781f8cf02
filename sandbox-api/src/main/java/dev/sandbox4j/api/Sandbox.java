package dev.sandbox4j.api;

import java.util.List;
import dev.sandbox4j.api.exception.SandboxException;
import dev.sandbox4j.api.exception.SandboxInterruptedException;

/**
 * One live sandbox, serving one agent task that may span several tool calls. Files written by one
 * {@link #exec} are there for the next. Calls to {@code exec} run one at a time.
 *
 * <p>Always close it (try-with-resources): {@link #close()} destroys the sandbox, is idempotent and
 * never throws. If the calling thread is interrupted while its code runs, the sandbox is torn down at
 * once and {@link SandboxInterruptedException} is thrown (a thread interrupted while still waiting for
 * another thread's {@code exec} gets the exception, and the sandbox stays open). When {@code exec}
 * throws a {@link SandboxException} (a dropped stream, a provider error), the sandbox stays open too:
 * closing it is the caller's job, as always.
 *
 * @since 0.1.0
 */
public interface Sandbox extends AutoCloseable {
    /** {@return the provider's id for this sandbox} */
    String id();

    /** {@return the provider, e.g. {@code local} or {@code e2b}} */
    String provider();

    /** {@return the client-chosen run id attached to the sandbox as a label} */
    String runId();

    /** {@return the attempts it took to open this sandbox, the successful one last} */
    List<Attempt> attempts();

    /**
     * Runs untrusted code, blocking until it ends, times out or hits the output cap.
     *
     * @param execution the code, its budget and output limits
     * @return what the code did: exit code or status, and the output kept
     * @throws SandboxException when the infrastructure fails; what the code did is always a result
     * @throws IllegalStateException when the sandbox is closed
     */
    RunResult exec(Execution execution);

    /**
     * Reads a file the code wrote, keeping at most {@code maxBytes} of it (the size it has in the sandbox
     * is reported whatever is kept). The path is relative to the working directory and checked by
     * {@link SandboxPaths#normalize}; a runner whose files sit on this host follows no symbolic link.
     * Waits for a running {@code exec} to end first.
     *
     * @param path relative to the working directory
     * @param maxBytes the most bytes kept; the rest of a larger file is cut and {@link
     *     SandboxFile#truncated()} is set
     * @return the file, its size in the sandbox and the bytes kept
     * @throws IllegalArgumentException when the path is absolute or climbs out
     * @throws SandboxException when the file does not exist, is not a regular file, or is reached through a
     *         symbolic link out of the working directory
     * @throws UnsupportedOperationException when the runner cannot read files ({@code Feature.READ_FILES})
     */
    default SandboxFile readFile(String path, long maxBytes) {
        throw new UnsupportedOperationException(provider() + " cannot read files back");
    }

    /**
     * {@link #readFile(String, long)} with {@link Execution#DEFAULT_COLLECT_FILE_BYTES}.
     *
     * @param path relative to the working directory
     * @return the file, its size in the sandbox and the bytes kept (at most 10 MiB)
     * @throws IllegalArgumentException when the path is absolute or climbs out
     * @throws SandboxException when the file does not exist or is not a regular file
     * @throws UnsupportedOperationException when the runner cannot read files ({@code Feature.READ_FILES})
     */
    default SandboxFile readFile(String path) {
        return readFile(path, Execution.DEFAULT_COLLECT_FILE_BYTES);
    }

    /**
     * Lists one directory (not recursively), sorted by name; {@code ""} or {@code "."} is the working directory.
     * Symbolic links are listed as such and never followed.
     *
     * @param directory relative to the working directory, checked like a path
     * @return the entries, sorted by name
     * @throws UnsupportedOperationException when the runner cannot list ({@code Feature.LIST_FILES})
     */
    default List<FileEntry> listFiles(String directory) {
        throw new UnsupportedOperationException(provider() + " cannot list files");
    }

    /** {@return true once {@link #close()} was called or the sandbox was torn down after an interrupt} */
    boolean isClosed();

    /** {@return the teardown outcome: {@link Teardown#OPEN} until closed} */
    Teardown teardown();

    /**
     * Releases the sandbox without destroying it, to hand the session on: another request (or replica)
     * attaches to it with {@link SandboxRunner#attach} and the same spec. Afterwards this object is
     * closed ({@link Teardown#DETACHED}) and the sandbox runs on until someone closes it or its lifetime
     * ends. Waits for a running {@code exec} to end first. Idempotent with {@link #close()}: whichever
     * comes first decides.
     *
     * @throws UnsupportedOperationException when the runner cannot attach, so a detached sandbox could
     *         never be reached again
     */
    default void detach() {
        throw new UnsupportedOperationException(provider() + " cannot attach by id, so it cannot detach either");
    }

    /** Destroys the sandbox (retrying on its own deadline). Idempotent; never throws. */
    @Override
    void close();
}
