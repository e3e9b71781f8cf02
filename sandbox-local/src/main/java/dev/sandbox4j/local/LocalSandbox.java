package dev.sandbox4j.local;

import dev.sandbox4j.api.Attempt;
import dev.sandbox4j.api.Execution;
import dev.sandbox4j.api.InputFile;
import dev.sandbox4j.api.RunResult;
import dev.sandbox4j.api.Sandbox;
import dev.sandbox4j.api.Teardown;
import dev.sandbox4j.local.internal.LocalDriver;
import dev.sandbox4j.local.internal.LocalHandle;
import dev.sandbox4j.policy.EgressPolicy;
import java.nio.file.Path;
import java.util.List;

/**
 * A local sandbox that can take files and an egress change while open, for provider emulators and
 * tests (see {@link LocalSandboxRunner#openLocal}). Everything else behaves as any {@link Sandbox}.
 */
public final class LocalSandbox implements Sandbox {
    private final Sandbox sandbox;
    private final LocalHandle handle;
    private final LocalDriver driver;

    LocalSandbox(Sandbox sandbox, LocalHandle handle, LocalDriver driver) {
        this.sandbox = sandbox;
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
        if (sandbox.isClosed()) {
            throw new IllegalStateException("sandbox " + sandbox.id() + " is closed");
        }
    }

    @Override
    public String id() {
        return sandbox.id();
    }

    @Override
    public String provider() {
        return sandbox.provider();
    }

    @Override
    public String runId() {
        return sandbox.runId();
    }

    @Override
    public List<Attempt> attempts() {
        return sandbox.attempts();
    }

    @Override
    public RunResult exec(Execution execution) {
        return sandbox.exec(execution);
    }

    @Override
    public boolean isClosed() {
        return sandbox.isClosed();
    }

    @Override
    public Teardown teardown() {
        return sandbox.teardown();
    }

    @Override
    public void close() {
        sandbox.close();
    }

    @Override
    public String toString() {
        return "LocalSandbox[" + sandbox + "]";
    }
}
