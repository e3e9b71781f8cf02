package dev.sandbox4j.emulators.daytona.internal;

import dev.sandbox4j.api.Execution;
import dev.sandbox4j.api.RunResult;
import dev.sandbox4j.emulators.LocalBridge;
import dev.sandbox4j.local.LocalSandboxRunner;
import java.io.IOException;
import java.time.Duration;
import java.util.Map;
import java.util.Objects;

/**
 * Machines that are local bubblewrap sandboxes ({@link LocalSandboxRunner#openLocal}): deny-all
 * egress (an empty network namespace) or allow-all (the host's network), chosen at create as Daytona
 * fixes egress at create.
 */
public final class LocalMachines implements MachineFactory, AutoCloseable {
    private final LocalSandboxRunner runner;

    public LocalMachines(LocalSandboxRunner runner) {
        this.runner = Objects.requireNonNull(runner, "runner");
    }

    @Override
    public Machine open(boolean hostNetwork, Map<String, String> env, Duration lifetime) {
        return new LocalMachine(LocalBridge.open(runner, hostNetwork, env, lifetime));
    }

    @Override
    public void close() {
        runner.close();
    }

    private static final class LocalMachine implements Machine {
        private final LocalBridge sandbox;

        LocalMachine(LocalBridge sandbox) {
            this.sandbox = sandbox;
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
        public RunResult exec(Execution execution) {
            return sandbox.exec(execution);
        }

        @Override
        public void close() {
            sandbox.close();
        }

        @Override
        public String toString() {
            return "LocalMachine[" + sandbox + "]";
        }
    }
}
