package dev.sandbox4j.emulators.e2b;

import dev.sandbox4j.api.Execution;
import dev.sandbox4j.api.RunResult;
import dev.sandbox4j.emulators.LocalBridge;
import dev.sandbox4j.local.LocalSandboxRunner;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;

/** A workspace that is a local bubblewrap sandbox ({@link LocalSandboxRunner#openLocal}). */
final class LocalWorkspace implements Workspace {
    /** Where a local sandbox shows its work directory. */
    static final String SANDBOX_PATH = LocalBridge.WORK_PATH;
    private final LocalBridge sandbox;

    private LocalWorkspace(LocalBridge sandbox) {
        this.sandbox = sandbox;
    }

    /**
     * Opens local sandboxes on {@code runner}. Their own lifetime is {@code lifetime}, the longest an
     * emulated sandbox may live: the emulator's clock (the E2B timeout) kills them earlier.
     */
    static Workspace.Factory factory(LocalSandboxRunner runner, Duration lifetime) {
        return (hostNetwork, env) -> new LocalWorkspace(LocalBridge.open(runner, hostNetwork, env, lifetime));
    }

    @Override
    public void writeFile(String relativePath, byte[] content) throws IOException {
        sandbox.writeFile(relativePath, content);
    }

    @Override
    public dev.sandbox4j.api.SandboxFile readFile(String relativePath, long maxBytes) throws IOException {
        return sandbox.readFile(relativePath, maxBytes);
    }

    @Override
    public java.util.List<dev.sandbox4j.api.FileEntry> listFiles(String relativeDirectory) throws IOException {
        return sandbox.listFiles(relativeDirectory);
    }

    @Override
    public Path workDirectory() {
        return sandbox.workDirectory();
    }

    @Override
    public String sandboxPath() {
        return SANDBOX_PATH;
    }

    @Override
    public void hostNetwork(boolean on) {
        sandbox.hostNetwork(on);
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
    public void close() {
        sandbox.close();
    }

    @Override
    public String toString() {
        return "LocalWorkspace[" + sandbox + "]";
    }
}
