package dev.sandbox4j.emulators.e2b;

import dev.sandbox4j.emulators.Machine;

import dev.sandbox4j.api.Execution;
import dev.sandbox4j.api.RunResult;
import dev.sandbox4j.api.RunStatus;
import dev.sandbox4j.api.exception.SandboxException;
import dev.sandbox4j.api.exception.SandboxInterruptedException;
import dev.sandbox4j.spi.OutputLimiter;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * A workspace for the emulator's wire tests: real processes in a temporary directory, without
 * isolation. It records the network each workspace was given instead of applying it, so the tests
 * can check the emulator's egress translation.
 */
final class ProcessWorkspace implements Machine {
    /** Opens ProcessWorkspaces and remembers them. */
    static final class Factory implements Machine.Factory {
        final List<ProcessWorkspace> opened = new CopyOnWriteArrayList<>();
        /** Tear the workspace down when its exec is interrupted, as a local sandbox does. */
        volatile boolean closeOnInterrupt;

        @Override
        public Machine open(boolean hostNetwork, Map<String, String> env, Duration lifetime) {
            ProcessWorkspace w = new ProcessWorkspace(hostNetwork, env);
            w.closeOnInterrupt = closeOnInterrupt;
            opened.add(w);
            return w;
        }

        ProcessWorkspace last() {
            return opened.get(opened.size() - 1);
        }
    }

    private final Path dir;
    private final Map<String, String> env;
    volatile boolean hostNetwork;
    final List<Boolean> networkPerExec = new CopyOnWriteArrayList<>();
    final List<Execution> executions = new CopyOnWriteArrayList<>();
    private volatile boolean closed;
    volatile boolean closeOnInterrupt;

    ProcessWorkspace(boolean hostNetwork, Map<String, String> env) {
        this.hostNetwork = hostNetwork;
        this.env = Map.copyOf(env);
        try {
            this.dir = Files.createTempDirectory("e2bemu-ws");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Override
    public void writeFile(String relativePath, byte[] content) throws IOException {
        Path p = dir.resolve(relativePath).normalize();
        if (!p.startsWith(dir)) {
            throw new IOException("outside the workspace: " + relativePath);
        }
        Files.createDirectories(p.getParent());
        Files.write(p, content);
    }

    @Override
    public dev.sandbox4j.api.SandboxFile readFile(String relativePath, long maxBytes) throws IOException {
        // plain processes on the host, for tests only: refuse any link on the way
        Path p = workDirectory();
        for (String part : relativePath.split("/")) {
            p = p.resolve(part);
            if (Files.isSymbolicLink(p)) {
                throw new IOException(relativePath + ": a symbolic link");
            }
        }
        if (!Files.exists(p, java.nio.file.LinkOption.NOFOLLOW_LINKS)) {
            throw new java.nio.file.NoSuchFileException(relativePath);
        }
        byte[] all = Files.readAllBytes(p);
        byte[] kept = java.util.Arrays.copyOf(all, (int) Math.min(all.length, maxBytes));
        return dev.sandbox4j.api.SandboxFile.builder(relativePath).content(kept).size(all.length).build();
    }

    @Override
    public java.util.List<dev.sandbox4j.api.FileEntry> listFiles(String relativeDirectory) throws IOException {
        Path d = relativeDirectory.isEmpty() ? workDirectory() : workDirectory().resolve(relativeDirectory);
        if (!Files.isDirectory(d, java.nio.file.LinkOption.NOFOLLOW_LINKS)) {
            throw new java.nio.file.NoSuchFileException(relativeDirectory);
        }
        java.util.List<dev.sandbox4j.api.FileEntry> out = new java.util.ArrayList<>();
        try (Stream<Path> s = Files.list(d)) {
            for (Path p : s.sorted().toList()) {
                String rel = relativeDirectory.isEmpty() ? p.getFileName().toString() : relativeDirectory + "/" + p.getFileName();
                dev.sandbox4j.api.FileEntry.Type t = Files.isSymbolicLink(p) ? dev.sandbox4j.api.FileEntry.Type.SYMLINK
                        : Files.isDirectory(p) ? dev.sandbox4j.api.FileEntry.Type.DIRECTORY : dev.sandbox4j.api.FileEntry.Type.FILE;
                out.add(dev.sandbox4j.api.FileEntry.of(rel, t, t == dev.sandbox4j.api.FileEntry.Type.FILE ? Files.size(p) : 0));
            }
        }
        return out;
    }

    @Override
    public Path workDirectory() {
        return dir;
    }

    @Override
    public String workPath() {
        return dir.toString();
    }

    @Override
    public void setNetwork(boolean on) {
        this.hostNetwork = on;
    }

    @Override
    public RunResult exec(Execution execution) {
        if (closed) {
            throw new IllegalStateException("closed");
        }
        executions.add(execution);
        networkPerExec.add(hostNetwork);
        List<String> cmd;
        switch (execution.language()) {
            case PYTHON:
                cmd = List.of("/usr/bin/python3", "-c", execution.code());
                break;
            case JAVASCRIPT:
                cmd = List.of("/usr/bin/node", "-e", execution.code());
                break;
            default:
                cmd = List.of("/bin/bash", "-c", execution.code());
        }
        ProcessBuilder pb = new ProcessBuilder(cmd).directory(dir.toFile());
        pb.environment().clear();
        pb.environment().put("PATH", "/usr/bin:/bin");
        pb.environment().put("HOME", dir.toString());
        pb.environment().put("LANG", "C.UTF-8");
        pb.environment().putAll(env);
        long t0 = System.nanoTime();
        Process p;
        try {
            p = pb.start();
        } catch (IOException e) {
            throw new SandboxException("cannot start: " + e.getMessage(), e);
        }
        OutputLimiter out = new OutputLimiter(execution.outputLimit(), execution.hardCapBytes());
        OutputLimiter err = new OutputLimiter(execution.outputLimit(), execution.hardCapBytes());
        Thread t1 = pump(p.getInputStream(), out, p);
        Thread t2 = pump(p.getErrorStream(), err, p);
        RunStatus status;
        Integer code = null;
        try {
            if (p.waitFor(execution.budget().toMillis(), TimeUnit.MILLISECONDS)) {
                t1.join();
                t2.join();
                status = out.capped() || err.capped() ? RunStatus.OUTPUT_LIMIT : RunStatus.EXITED;
                code = status == RunStatus.EXITED ? p.exitValue() : null;
            } else {
                kill(p);
                status = RunStatus.TIMED_OUT;
                t1.join();
                t2.join();
            }
        } catch (InterruptedException e) {
            kill(p);
            if (closeOnInterrupt) {
                close();
            }
            Thread.currentThread().interrupt();
            throw new SandboxInterruptedException(SandboxException.builder("interrupted").provider("test"));
        }
        return RunResult.builder().stdout(out.text()).stderr(err.text()).status(status).exitCode(code)
                .stdoutBytes(out.totalBytes()).stderrBytes(err.totalBytes())
                .duration(Duration.ofNanos(System.nanoTime() - t0)).build();
    }

    private static Thread pump(InputStream in, OutputLimiter limiter, Process p) {
        Thread t = new Thread(() -> {
            byte[] buf = new byte[8192];
            try (in) {
                int n;
                while ((n = in.read(buf)) > 0) {
                    boolean more;
                    synchronized (limiter) {
                        more = limiter.accept(buf, 0, n);
                    }
                    if (!more) {
                        kill(p);
                        return;
                    }
                }
            } catch (IOException ignored) {
                // the process was killed
            }
        });
        t.setDaemon(true);
        t.start();
        return t;
    }

    private static void kill(Process p) {
        p.descendants().forEach(ProcessHandle::destroyForcibly);
        p.destroyForcibly();
    }

    @Override
    public boolean isClosed() {
        return closed;
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        try (Stream<Path> s = Files.walk(dir)) {
            s.sorted(Comparator.reverseOrder()).forEach(f -> f.toFile().delete());
        } catch (IOException ignored) {
            // best effort
        }
    }
}
