package dev.sandbox4j.emulators.vercel.internal;

import dev.sandbox4j.api.Execution;
import dev.sandbox4j.api.RunResult;
import dev.sandbox4j.api.SandboxInterruptedException;
import dev.sandbox4j.emulators.LocalBridge;
import dev.sandbox4j.local.LocalSandboxRunner;
import java.io.FileNotFoundException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SeekableByteChannel;
import java.nio.file.DirectoryStream;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.SecureDirectoryStream;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.BasicFileAttributeView;
import java.nio.file.attribute.PosixFileAttributeView;
import java.nio.file.attribute.PosixFilePermission;
import java.time.Duration;
import java.util.EnumSet;
import java.util.Map;
import java.util.Set;

/**
 * Sessions as local sandboxes ({@link LocalSandboxRunner#openLocal}): the network the emulator decided
 * (deny-all or allow-all, the latter meaning the host's network), the sandbox-level env, and the work
 * directory ({@code /sandbox} inside) standing in for {@code /vercel/sandbox}.
 *
 * <p>The sandboxed code can plant symlinks in its work directory, so every host-side access below
 * walks the path with {@link SecureDirectoryStream} and never follows a link.
 */
public final class LocalMachines implements MachineFactory {
    /** Where the local runner binds the work directory inside the sandbox. */
    static final String WORK_PATH = LocalBridge.WORK_PATH;
    private static final String MKDIR_MARKER = ".sandbox4j-mkdir";

    private final LocalSandboxRunner runner;
    private final boolean owned;

    private LocalMachines(LocalSandboxRunner runner, boolean owned) {
        this.runner = runner;
        this.owned = owned;
    }

    /** A factory with its own local runner, closed with the emulator. */
    public static LocalMachines create() {
        return new LocalMachines(LocalSandboxRunner.create(), true);
    }

    /** A factory on a runner the caller owns (and closes). */
    public static LocalMachines using(LocalSandboxRunner runner) {
        return new LocalMachines(runner, false);
    }

    @Override
    public void close() {
        if (owned) {
            runner.close();
        }
    }

    /** Local sandboxes open right now (a second leak count, below the emulator's ledger). */
    public int openSandboxes() {
        return runner.openSandboxes();
    }

    @Override
    public Machine open(boolean hostNetwork, Map<String, String> env, Duration lifetime) {
        // The emulator stops the session at its timeout; the local clock is the backstop after it.
        return new LocalMachine(LocalBridge.open(runner, hostNetwork, env, lifetime.plusSeconds(30)));
    }

    static final class LocalMachine implements Machine {
        private final LocalBridge sandbox;

        LocalMachine(LocalBridge sandbox) {
            this.sandbox = sandbox;
        }

        @Override
        public String workPath() {
            return WORK_PATH;
        }

        @Override
        public void writeFile(String relativePath, byte[] content, int mode) throws IOException {
            sandbox.writeFile(relativePath, content);
            Set<PosixFilePermission> perms = EnumSet.noneOf(PosixFilePermission.class);
            PosixFilePermission[] bits = PosixFilePermission.values(); // OWNER_READ .. OTHERS_EXECUTE
            for (int i = 0; i < 9; i++) {
                if ((mode & (0400 >> i)) != 0) {
                    perms.add(bits[i]);
                }
            }
            // Owner read stays on: the sandbox user owns the file and must read what was uploaded.
            perms.add(PosixFilePermission.OWNER_READ);
            try (Parent p = parent(relativePath)) {
                p.dir.getFileAttributeView(p.name, PosixFileAttributeView.class, LinkOption.NOFOLLOW_LINKS)
                        .setPermissions(perms);
            }
        }

        @Override
        public void mkdir(String relativePath) throws IOException {
            // The local runner creates parent directories with the right owner; the marker goes again.
            String marker = relativePath + "/" + MKDIR_MARKER;
            sandbox.writeFile(marker, new byte[0]);
            try (Parent p = parent(marker)) {
                p.dir.deleteFile(p.name);
            }
        }

        @Override
        public byte[] readFile(String relativePath, long maxBytes) throws IOException {
            try (Parent p = parent(relativePath)) {
                BasicFileAttributes a = p.dir.getFileAttributeView(p.name, BasicFileAttributeView.class,
                        LinkOption.NOFOLLOW_LINKS).readAttributes();
                if (!a.isRegularFile()) {
                    return null;
                }
                if (a.size() > maxBytes) {
                    throw new IOException("file larger than " + maxBytes + " bytes");
                }
                Set<java.nio.file.OpenOption> options = Set.of(StandardOpenOption.READ, LinkOption.NOFOLLOW_LINKS);
                try (SeekableByteChannel ch = p.dir.newByteChannel(p.name, options)) {
                    ByteBuffer buf = ByteBuffer.allocate((int) a.size());
                    while (buf.hasRemaining() && ch.read(buf) > 0) {
                        // read to the size seen above; a file growing meanwhile is cut there
                    }
                    buf.flip();
                    byte[] out = new byte[buf.remaining()];
                    buf.get(out);
                    return out;
                }
            } catch (NoSuchFileException | FileNotFoundException e) {
                return null;
            }
        }

        @Override
        public void setNetwork(boolean hostNetwork) {
            sandbox.hostNetwork(hostNetwork);
        }

        @Override
        public Outcome run(Execution execution, Output output) throws InterruptedException {
            RunResult r;
            try {
                r = sandbox.exec(execution);
            } catch (SandboxInterruptedException e) {
                // The local runner tore the sandbox down; the emulator only gets here when stopping.
                throw new InterruptedException("interrupted");
            }
            if (!r.stdout().isEmpty()) {
                output.stdout(r.stdout());
            }
            if (!r.stderr().isEmpty()) {
                output.stderr(r.stderr());
            }
            switch (r.status()) {
                case EXITED:
                    return Outcome.exited(r.exitCode().orElse(137));
                case TIMED_OUT:
                    return Outcome.timeout();
                default:
                    // OUTPUT_LIMIT (the emulator's own output bound) or KILLED: SIGKILL.
                    return Outcome.exited(r.exitCode().orElse(137));
            }
        }

        @Override
        public boolean kill() {
            return sandbox.killRunning();
        }

        @Override
        public void destroy() {
            sandbox.close();
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
