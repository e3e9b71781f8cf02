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
 */
public final class LocalSandbox extends ForwardingSandbox {
    private final LocalHandle handle;
    private final LocalDriver driver;

    LocalSandbox(Sandbox sandbox, LocalHandle handle, LocalDriver driver) {
        super(sandbox);
        this.handle = handle;
        this.driver = driver;
    }

    /** Writes {@code content} at {@code relativePath} under the work directory ({@code /sandbox}). */
    public void writeFile(String relativePath, byte[] content) {
        ensureOpen();
        driver.writeFiles(handle, List.of(InputFile.of(relativePath, content)));
    }

    /**
     * Changes the egress of the next exec: deny-all or allow-all only.
     *
     * @throws dev.sandbox4j.policy.UnsupportedPolicyException for any other policy
     */
    public void setEgress(EgressPolicy egress) {
        ensureOpen();
        driver.capabilities().check(egress, dev.sandbox4j.policy.Limits.defaults());
        driver.updateEgress(handle, egress);
    }

    /** The egress the next exec runs under. */
    public EgressPolicy egress() {
        return handle.egress();
    }

    /** The host directory bound at {@code /sandbox}. */
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
