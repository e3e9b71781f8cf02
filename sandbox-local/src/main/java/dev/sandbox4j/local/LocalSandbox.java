package dev.sandbox4j.local;

import dev.sandbox4j.api.ForwardingSandbox;
import dev.sandbox4j.api.InputFile;
import dev.sandbox4j.api.Sandbox;
import dev.sandbox4j.local.internal.LocalDriver;
import dev.sandbox4j.local.internal.LocalHandle;
import dev.sandbox4j.policy.EgressPolicy;
import java.nio.file.Path;
import java.util.List;

/**
 * A local sandbox that can take files and an egress change while open, for provider emulators and
 * tests (see {@link LocalSandboxRunner#openLocal}). Everything else behaves as any {@link Sandbox}.
 *
 * @since 0.1.0
 */
public final class LocalSandbox extends ForwardingSandbox {
    private final LocalHandle handle;
    private final LocalDriver driver;

    LocalSandbox(Sandbox sandbox, LocalHandle handle, LocalDriver driver) {
        super(sandbox);
        this.handle = handle;
        this.driver = driver;
    }

    /**
     * Writes {@code content} at {@code relativePath} under the work directory ({@code /sandbox}). Safe
     * while an exec runs: no path component is followed as a symlink (each directory is opened relative
     * to its parent's handle), and the file is made, owned and moded in a directory the sandbox cannot
     * reach before it is renamed into place, so code swapping directories and symlinks can make the
     * write fail but cannot send it outside the sandbox.
     *
     * @param relativePath relative to the work directory, checked like an input file's path
     * @param content the bytes to write
     * @throws IllegalStateException when the sandbox is closed
     */
    public void writeFile(String relativePath, byte[] content) {
        ensureOpen();
        driver.writeFiles(handle, List.of(InputFile.of(relativePath, content)));
    }

    /**
     * Changes the egress of the next exec: deny-all, allow-all, or a list (its egress proxy is replaced;
     * connections of the previous one are closed).
     *
     * @param egress deny-all, allow-all or a list
     * @throws IllegalStateException when the sandbox is closed
     * @throws dev.sandbox4j.policy.UnsupportedPolicyException for any other policy
     */
    public void setEgress(EgressPolicy egress) {
        ensureOpen();
        driver.capabilities().check(egress, dev.sandbox4j.policy.Limits.defaults());
        driver.updateEgress(handle, egress);
    }

    /** {@return the egress the next exec runs under} */
    public EgressPolicy egress() {
        return handle.egress();
    }

    /**
     * Kills the command this sandbox is running, if any, and leaves the sandbox open: the exec in
     * progress returns as its process died (exit code 137). Emulators use it to serve a provider's
     * kill call without losing the session; interrupting the exec instead tears the sandbox down.
     *
     * @return true when a command was running and was killed
     * @throws IllegalStateException when the sandbox is closed
     */
    public boolean killRunning() {
        ensureOpen();
        return driver.killRunning(handle);
    }

    /** {@return the host directory bound at {@code /sandbox}} */
    public Path workDirectory() {
        return handle.work();
    }

    private void ensureOpen() {
        if (isClosed()) {
            throw new IllegalStateException("sandbox " + id() + " is closed");
        }
    }

    @Override
    public String toString() {
        return "LocalSandbox[" + delegate() + "]";
    }
}
