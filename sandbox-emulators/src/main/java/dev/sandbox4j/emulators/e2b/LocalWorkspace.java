package dev.sandbox4j.emulators.e2b;

import dev.sandbox4j.api.Execution;
import dev.sandbox4j.api.RunResult;
import dev.sandbox4j.api.SandboxException;
import dev.sandbox4j.api.SandboxSpec;
import dev.sandbox4j.local.LocalSandbox;
import dev.sandbox4j.local.LocalSandboxRunner;
import dev.sandbox4j.policy.EgressPolicy;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;

/** A workspace that is a local bubblewrap sandbox ({@link LocalSandboxRunner#openLocal}). */
final class LocalWorkspace implements Workspace {
    /** Where a local sandbox shows its work directory. */
    static final String SANDBOX_PATH = "/sandbox";
    private final LocalSandbox sandbox;

    private LocalWorkspace(LocalSandbox sandbox) {
        this.sandbox = sandbox;
    }

    /**
     * Opens local sandboxes on {@code runner}. Their own lifetime is {@code lifetime}, the longest an
     * emulated sandbox may live: the emulator's clock (the E2B timeout) kills them earlier.
     */
    static Workspace.Factory factory(LocalSandboxRunner runner, Duration lifetime) {
        return (hostNetwork, env) -> {
            SandboxSpec.Builder spec = SandboxSpec.builder().defaultLifetime(lifetime)
                    .egress(hostNetwork ? EgressPolicy.allowAll() : EgressPolicy.denyAll());
            env.forEach(spec::env);
            return new LocalWorkspace(runner.openLocal(spec.build()));
        };
    }

    @Override
    public void writeFile(String relativePath, byte[] content) throws IOException {
        try {
            sandbox.writeFile(relativePath, content);
        } catch (SandboxException | IllegalArgumentException e) {
            throw new IOException(e.getMessage(), e);
        }
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
        sandbox.setEgress(on ? EgressPolicy.allowAll() : EgressPolicy.denyAll());
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
