package dev.sandbox4j.emulators;

import dev.sandbox4j.api.Execution;
import dev.sandbox4j.api.RunResult;
import dev.sandbox4j.api.SandboxFile;
import dev.sandbox4j.api.SandboxSpec;
import dev.sandbox4j.local.LocalSandbox;
import dev.sandbox4j.local.LocalSandboxRunner;
import dev.sandbox4j.policy.Capabilities;
import dev.sandbox4j.policy.EgressPolicy;
import dev.sandbox4j.policy.Limits;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.Objects;

/**
 * Where one emulated sandbox really runs: a local bubblewrap sandbox
 * ({@link LocalSandboxRunner#openLocal}) whose network is the host's or none, decided by the emulator
 * from the egress it received. Each emulator wraps this in its own machine type for what its provider
 * adds (file modes, output files, ...).
 *
 * @since 0.1.0
 */
public final class LocalBridge implements AutoCloseable {
    /** Where the local runner binds the work directory inside the sandbox. */
    public static final String WORK_PATH = "/sandbox";

    private final LocalSandbox sandbox;

    private LocalBridge(LocalSandbox sandbox) {
        this.sandbox = sandbox;
    }

    /**
     * Opens a local sandbox.
     *
     * @param hostNetwork whether commands reach the host's network (else no network at all)
     * @param env the sandbox-wide environment
     * @param lifetime the local sandbox's own backstop: it is destroyed after this long whatever happens
     */
    public static LocalBridge open(LocalSandboxRunner runner, boolean hostNetwork, Map<String, String> env,
            Duration lifetime) {
        return open(runner, hostNetwork, env, lifetime, Limits.defaults());
    }

    /**
     * As {@link #open(LocalSandboxRunner, boolean, Map, Duration)}, with the resource limits the wire
     * asked for, each applied where this machine's local runner enforces it for the whole sandbox
     * (as root): a provider that caps memory is emulated with the cap, not without it.
     */
    public static LocalBridge open(LocalSandboxRunner runner, boolean hostNetwork, Map<String, String> env,
            Duration lifetime, Limits limits) {
        Capabilities caps = Objects.requireNonNull(runner, "runner").capabilities();
        Limits.Builder applied = Limits.builder();
        if (caps.limits().contains(Capabilities.Limit.MEMORY)) {
            limits.memoryMib().ifPresent(applied::memoryMib);
        }
        if (caps.limits().contains(Capabilities.Limit.VCPUS)) {
            limits.vcpus().ifPresent(applied::vcpus);
        }
        SandboxSpec.Builder spec = SandboxSpec.builder().egress(egress(hostNetwork)).defaultLifetime(lifetime)
                .limits(applied.build());
        env.forEach(spec::env);
        return new LocalBridge(Objects.requireNonNull(runner, "runner").openLocal(spec.build()));
    }

    /** The only two policies a local sandbox switches between: the host's network, or none. */
    private static EgressPolicy egress(boolean hostNetwork) {
        return hostNetwork ? EgressPolicy.allowAll() : EgressPolicy.denyAll();
    }

    /**
     * Writes a file relative to the work directory, creating parent directories.
     *
     * @throws IOException for any failure (a bad path, a closed sandbox): the emulators report a failed
     *                     write per file, and its message is all they need
     */
    public void writeFile(String relativePath, byte[] content) throws IOException {
        try {
            sandbox.writeFile(relativePath, content);
        } catch (RuntimeException e) {
            throw new IOException(e.getMessage(), e);
        }
    }

    /**
     * Reads a file relative to the work directory through the local runner, which follows no symbolic
     * link (a link the code planted never makes the emulator read a host file), keeping at most
     * {@code maxBytes}.
     *
     * @throws IOException when the file is missing ({@link java.nio.file.NoSuchFileException}) or refused
     */
    public SandboxFile readFile(String relativePath, long maxBytes) throws IOException {
        try {
            return sandbox.readFile(relativePath, maxBytes);
        } catch (RuntimeException e) {
            String m = String.valueOf(e.getMessage());
            throw m.contains("no such file") ? new java.nio.file.NoSuchFileException(relativePath) : new IOException(m, e);
        }
    }

    /** Lists a directory relative to the work directory through the local runner, following no link. */
    public java.util.List<dev.sandbox4j.api.FileEntry> listFiles(String relativeDirectory) throws IOException {
        try {
            return sandbox.listFiles(relativeDirectory);
        } catch (RuntimeException e) {
            String m = String.valueOf(e.getMessage());
            throw m.contains("no such file") ? new java.nio.file.NoSuchFileException(relativeDirectory) : new IOException(m, e);
        }
    }

    /** Switches the network of the next command. */
    public void hostNetwork(boolean on) {
        sandbox.setEgress(egress(on));
    }

    /**
     * Runs one command to its end, its budget or its output cap. Blocks; interrupting the calling thread
     * kills the command and tears the sandbox down ({@link #killRunning()} keeps it).
     */
    public RunResult exec(Execution execution) {
        return sandbox.exec(execution);
    }

    /** Kills the running command, if any, and keeps the sandbox; false when nothing was killed. */
    public boolean killRunning() {
        return !sandbox.isClosed() && sandbox.killRunning();
    }

    /** The work directory on the host ({@link #WORK_PATH} inside). */
    public Path workDirectory() {
        return sandbox.workDirectory();
    }

    public boolean isClosed() {
        return sandbox.isClosed();
    }

    /** Kills whatever runs and deletes the work directory. Idempotent. */
    @Override
    public void close() {
        sandbox.close();
    }

    @Override
    public String toString() {
        return sandbox.toString();
    }
}
