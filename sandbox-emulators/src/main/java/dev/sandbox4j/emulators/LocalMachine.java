package dev.sandbox4j.emulators;

import dev.sandbox4j.api.Execution;
import dev.sandbox4j.api.FileEntry;
import dev.sandbox4j.api.RunResult;
import dev.sandbox4j.api.SandboxFile;
import dev.sandbox4j.api.SandboxSpec;
import dev.sandbox4j.local.LocalSandbox;
import dev.sandbox4j.local.LocalSandboxRunner;
import dev.sandbox4j.policy.Capabilities;
import dev.sandbox4j.policy.EgressPolicy;
import dev.sandbox4j.policy.Limits;
import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.SecureDirectoryStream;
import java.nio.file.attribute.PosixFileAttributeView;
import java.nio.file.attribute.PosixFilePermission;
import java.time.Duration;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * A machine that is a local bubblewrap sandbox ({@link LocalSandboxRunner#openLocal}) whose network is
 * the host's, none, or a domain list enforced by the local runner's egress proxy, decided by the
 * emulator from the egress it received. Reads and listings go
 * through the local runner, which follows no symbolic link (a link the code planted never makes the
 * emulator read a host file); host-side writes walk the path without following links either.
 *
 * @since 0.1.0
 */
public final class LocalMachine implements Machine {
    /** Where the local runner binds the work directory inside the sandbox. */
    public static final String WORK_PATH = "/sandbox";
    private static final String MKDIR_MARKER = ".sandbox4j-mkdir";

    private final LocalSandbox sandbox;
    private final Capabilities capabilities;

    private LocalMachine(LocalSandbox sandbox, Capabilities capabilities) {
        this.sandbox = sandbox;
        this.capabilities = capabilities;
    }

    /**
     * Opens a local sandbox.
     *
     * @param runner the local runner it runs on
     * @param hostNetwork whether commands reach the host's network (else no network at all)
     * @param env the sandbox-wide environment
     * @param lifetime the local sandbox's own backstop: it is destroyed after this long whatever happens
     * @return the open machine
     */
    public static LocalMachine open(LocalSandboxRunner runner, boolean hostNetwork, Map<String, String> env,
            Duration lifetime) {
        return open(runner, hostNetwork, env, lifetime, Limits.defaults());
    }

    /**
     * As {@link #open(LocalSandboxRunner, boolean, Map, Duration)}, with the resource limits the wire
     * asked for, each applied where this machine's local runner enforces it for the whole sandbox
     * (as root): a provider that caps memory is emulated with the cap, not without it.
     *
     * @param runner the local runner it runs on
     * @param hostNetwork whether commands reach the host's network
     * @param env the sandbox-wide environment
     * @param lifetime the local sandbox's own backstop
     * @param limits the limits the wire asked for
     * @return the open machine
     */
    public static LocalMachine open(LocalSandboxRunner runner, boolean hostNetwork, Map<String, String> env,
            Duration lifetime, Limits limits) {
        return open(runner, egress(hostNetwork), env, lifetime, limits);
    }

    /**
     * As {@link #open(LocalSandboxRunner, boolean, Map, Duration, Limits)}, under the egress the wire asked
     * for when the local runner enforces it (a domain list goes through its egress proxy), else with no
     * network at all (stricter than asked, never weaker).
     *
     * @param runner the local runner it runs on
     * @param egress the egress the emulator made of the wire's policy
     * @param env the sandbox-wide environment
     * @param lifetime the local sandbox's own backstop
     * @param limits the limits the wire asked for
     * @return the open machine
     */
    public static LocalMachine open(LocalSandboxRunner runner, EgressPolicy egress, Map<String, String> env,
            Duration lifetime, Limits limits) {
        Capabilities caps = Objects.requireNonNull(runner, "runner").capabilities();
        Limits.Builder applied = Limits.builder();
        if (caps.limits().contains(Capabilities.Limit.MEMORY)) {
            limits.memoryMib().ifPresent(applied::memoryMib);
        }
        if (caps.limits().contains(Capabilities.Limit.VCPUS)) {
            limits.vcpus().ifPresent(applied::vcpus);
        }
        SandboxSpec.Builder spec = SandboxSpec.builder().egress(enforceable(caps, egress)).defaultLifetime(lifetime)
                .limits(applied.build());
        env.forEach(spec::env);
        return new LocalMachine(runner.openLocal(spec.build()), caps);
    }

    /** The host's network, or none. */
    private static EgressPolicy egress(boolean hostNetwork) {
        return hostNetwork ? EgressPolicy.allowAll() : EgressPolicy.denyAll();
    }

    /** {@code egress} where the local runner enforces it exactly, else deny-all (fail closed). */
    private static EgressPolicy enforceable(Capabilities caps, EgressPolicy egress) {
        return caps.violations(egress, Limits.defaults()).isEmpty() ? egress : EgressPolicy.denyAll();
    }

    /**
     * {@inheritDoc}
     *
     * @throws IOException for any failure (a bad path, a closed sandbox): the emulators report a failed
     *                     write per file, and its message is all they need
     */
    @Override
    public void writeFile(String relativePath, byte[] content) throws IOException {
        try {
            sandbox.writeFile(relativePath, content);
        } catch (RuntimeException e) {
            throw new IOException(e.getMessage(), e);
        }
    }

    @Override
    public void writeFile(String relativePath, byte[] content, int mode) throws IOException {
        writeFile(relativePath, content);
        Set<PosixFilePermission> perms = EnumSet.noneOf(PosixFilePermission.class);
        PosixFilePermission[] bits = PosixFilePermission.values(); // OWNER_READ .. OTHERS_EXECUTE
        for (int i = 0; i < 9; i++) {
            if ((mode & (0400 >> i)) != 0) {
                perms.add(bits[i]);
            }
        }
        // owner read stays on: the sandbox user owns the file and must read what was uploaded
        perms.add(PosixFilePermission.OWNER_READ);
        try (Parent p = parent(relativePath)) {
            p.dir.getFileAttributeView(p.name, PosixFileAttributeView.class, LinkOption.NOFOLLOW_LINKS)
                    .setPermissions(perms);
        }
    }

    @Override
    public void mkdir(String relativePath) throws IOException {
        // the local runner creates parent directories with the right owner; the marker goes again
        String marker = relativePath + "/" + MKDIR_MARKER;
        writeFile(marker, new byte[0]);
        try (Parent p = parent(marker)) {
            p.dir.deleteFile(p.name);
        }
    }

    @Override
    public SandboxFile readFile(String relativePath, long maxBytes) throws IOException {
        try {
            return sandbox.readFile(relativePath, maxBytes);
        } catch (RuntimeException e) {
            throw fileProblem(e, relativePath);
        }
    }

    @Override
    public List<FileEntry> listFiles(String relativeDirectory) throws IOException {
        try {
            return sandbox.listFiles(relativeDirectory);
        } catch (RuntimeException e) {
            throw fileProblem(e, relativeDirectory);
        }
    }

    private static IOException fileProblem(RuntimeException e, String path) {
        String m = String.valueOf(e.getMessage());
        return m.contains("no such file") ? new NoSuchFileException(path) : new IOException(m, e);
    }

    @Override
    public void setNetwork(boolean hostNetwork) {
        sandbox.setEgress(egress(hostNetwork));
    }

    /** The egress of the next command, where the local runner enforces it; else no network. */
    @Override
    public void setEgress(EgressPolicy egress) {
        sandbox.setEgress(enforceable(capabilities, egress));
    }

    @Override
    public RunResult exec(Execution execution) {
        return sandbox.exec(execution);
    }

    @Override
    public boolean killRunning() {
        return !sandbox.isClosed() && sandbox.killRunning();
    }

    @Override
    public Path workDirectory() {
        return sandbox.workDirectory();
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
        return "LocalMachine[" + sandbox + "]";
    }

    /** The directory holding {@code relativePath}, opened without following any link, and the last name. */
    private Parent parent(String relativePath) throws IOException {
        String[] parts = relativePath.split("/");
        for (String part : parts) {
            if (part.isEmpty() || part.equals(".") || part.equals("..")) {
                throw new IOException("not a plain relative path: " + relativePath);
            }
        }
        DirectoryStream<Path> ds = java.nio.file.Files.newDirectoryStream(sandbox.workDirectory());
        if (!(ds instanceof SecureDirectoryStream)) {
            ds.close();
            throw new IOException("no SecureDirectoryStream on this platform");
        }
        SecureDirectoryStream<Path> dir = (SecureDirectoryStream<Path>) ds;
        try {
            for (int i = 0; i < parts.length - 1; i++) {
                SecureDirectoryStream<Path> next = dir.newDirectoryStream(Path.of(parts[i]), LinkOption.NOFOLLOW_LINKS);
                dir.close();
                dir = next;
            }
        } catch (IOException | RuntimeException e) {
            dir.close();
            throw e;
        }
        return new Parent(dir, Path.of(parts[parts.length - 1]));
    }

    private static final class Parent implements AutoCloseable {
        final SecureDirectoryStream<Path> dir;
        final Path name;

        Parent(SecureDirectoryStream<Path> dir, Path name) {
            this.dir = dir;
            this.name = name;
        }

        @Override
        public void close() throws IOException {
            dir.close();
        }
    }
}
