package dev.sandbox4j.emulators.daytona;

import dev.sandbox4j.api.Execution;
import dev.sandbox4j.api.RunResult;
import dev.sandbox4j.api.RunStatus;
import dev.sandbox4j.emulators.Machine;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
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
 * Test scaffolding for the wire tests: each command is a host process in its own user and mount namespace with a
 * fresh {@code /tmp} (so uploads linked into {@code /tmp} never touch the host's), and in an empty
 * network namespace unless the emulator granted the host network. It is not a sandbox (it runs as the
 * test JVM's user and sees the host's files) and runs only the tests' own code; the contract suite and
 * the conformance run use the local sandbox.
 */
final class ProcessMachine implements Machine {
    /** Every machine opened, for assertions on what the emulator asked for. */
    static final class Factory implements Machine.Factory {
        final List<ProcessMachine> opened = new CopyOnWriteArrayList<>();

        @Override
        public Machine open(boolean hostNetwork, Map<String, String> env, Duration lifetime) throws IOException {
            ProcessMachine m = new ProcessMachine(hostNetwork, env);
            opened.add(m);
            return m;
        }

        ProcessMachine last() {
            return opened.get(opened.size() - 1);
        }
    }

    final boolean hostNetwork;
    final Map<String, String> env;
    final Path dir;
    private volatile Process running;
    private volatile boolean closed;
    final List<String> scripts = new CopyOnWriteArrayList<>();

    private ProcessMachine(boolean hostNetwork, Map<String, String> env) throws IOException {
        this.hostNetwork = hostNetwork;
        this.env = Map.copyOf(env);
        // not under /tmp: each command mounts its own /tmp over it
        Path root = Path.of("target", "daytonaemu-machines").toAbsolutePath();
        Files.createDirectories(root);
        this.dir = Files.createTempDirectory(root, "m");
    }

    @Override
    public boolean isClosed() {
        return closed;
    }

    @Override
    public void writeFile(String relativePath, byte[] content) throws IOException {
        if (closed) {
            throw new IOException("machine closed");
        }
        Path p = dir.resolve(relativePath).normalize();
        if (!p.startsWith(dir)) {
            throw new IOException("outside the work directory: " + relativePath);
        }
        Files.createDirectories(p.getParent());
        Files.write(p, content);
    }

    @Override
    public RunResult exec(Execution execution) {
        if (closed) {
            throw new IllegalStateException("machine closed");
        }
        scripts.add(execution.code());
        long t0 = System.nanoTime();
        Process p;
        try {
            Path scripts = Path.of("target", "daytonaemu-scripts").toAbsolutePath();
            Files.createDirectories(scripts);
            Path script = Files.createTempFile(scripts, "s", ".sh");
            Files.writeString(script, execution.code(), StandardCharsets.UTF_8);
            script.toFile().deleteOnExit();
            List<String> argv = new java.util.ArrayList<>(List.of("/usr/bin/unshare", "--map-root-user", "--mount", "--propagation", "private"));
            if (!hostNetwork) {
                argv.add("--net");
            }
            // The script and the working directory are opened before the fresh /tmp hides them (the
            // clone may itself live under /tmp); the directory is then bound back at its own path.
            argv.addAll(List.of("--", "/bin/bash", "-c",
                    "exec 3<\"$0\" && exec 4<. && mount -t tmpfs -o size=64m tmpfs /tmp"
                            + " && { case \"$PWD\" in /tmp/*) mkdir -p \"$PWD\""
                            + " && mount --no-canonicalize --bind /proc/self/fd/4 \"$PWD\" && cd \"$PWD\" ;; esac; }"
                            + " && exec 4<&- && exec /bin/bash /dev/fd/3",
                    script.toString()));
            ProcessBuilder pb = new ProcessBuilder(argv).directory(dir.toFile())
                    .redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")));
            pb.environment().clear();
            pb.environment().put("PATH", "/usr/local/bin:/usr/bin:/bin");
            pb.environment().put("HOME", dir.toString());
            pb.environment().putAll(env);
            p = pb.start();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        running = p;
        if (closed) {
            kill(p); // close() ran while the process was starting and could not see it
        }
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        boolean[] capped = new boolean[1];
        dev.sandbox4j.api.OutputListener listener = execution.listener().orElse(null);
        Thread reader = new Thread(() -> pump(p.getInputStream(), out, execution.hardCapBytes(), capped, p,
                listener, dev.sandbox4j.api.OutputListener.Stream.STDOUT));
        Thread errReader = new Thread(() -> pump(p.getErrorStream(), out, execution.hardCapBytes(), capped, p,
                listener, dev.sandbox4j.api.OutputListener.Stream.STDERR));
        reader.start();
        errReader.start();
        RunStatus status;
        Integer exit = null;
        try {
            if (!p.waitFor(execution.budget().toMillis(), TimeUnit.MILLISECONDS)) {
                kill(p);
                status = RunStatus.TIMED_OUT;
            } else if (capped[0]) {
                status = RunStatus.OUTPUT_LIMIT;
            } else if (closed) {
                status = RunStatus.KILLED;
            } else {
                status = RunStatus.EXITED;
                exit = p.exitValue();
            }
            reader.join(5000);
            errReader.join(5000);
        } catch (InterruptedException e) {
            kill(p);
            Thread.currentThread().interrupt();
            status = RunStatus.KILLED;
        } finally {
            running = null;
        }
        String text;
        synchronized (out) {
            text = out.toString(StandardCharsets.UTF_8);
        }
        return RunResult.builder().stdout(text).stdoutBytes(text.length()).exitCode(exit).status(status)
                .duration(Duration.ofNanos(System.nanoTime() - t0)).build();
    }

    /**
     * Reads one stream into the merged output, and hands it to the execution's listener by stream as
     * it arrives (whole characters; what a session command's log is made of).
     */
    private static void pump(InputStream in, ByteArrayOutputStream out, long cap, boolean[] capped, Process p,
            dev.sandbox4j.api.OutputListener listener, dev.sandbox4j.api.OutputListener.Stream stream) {
        byte[] buf = new byte[8192];
        java.nio.charset.CharsetDecoder decoder = StandardCharsets.UTF_8.newDecoder()
                .onMalformedInput(java.nio.charset.CodingErrorAction.REPLACE)
                .onUnmappableCharacter(java.nio.charset.CodingErrorAction.REPLACE);
        java.nio.ByteBuffer pending = java.nio.ByteBuffer.allocate(8192 + 8);
        try (in) {
            int n;
            while ((n = in.read(buf)) > 0) {
                synchronized (out) {
                    if (out.size() + n > cap) {
                        capped[0] = true;
                        kill(p);
                        return;
                    }
                    out.write(buf, 0, n);
                }
                if (listener != null) {
                    pending.put(buf, 0, n).flip();
                    java.nio.CharBuffer chars = java.nio.CharBuffer.allocate(n + 8);
                    decoder.decode(pending, chars, false);
                    pending.compact();
                    chars.flip();
                    if (chars.hasRemaining()) {
                        listener.onOutput(stream, chars.toString());
                    }
                }
            }
        } catch (IOException ignored) {
            // process gone
        }
    }

    private static void kill(Process p) {
        p.descendants().forEach(ProcessHandle::destroyForcibly);
        p.destroyForcibly();
    }

    @Override
    public Path workDirectory() {
        return dir;
    }

    @Override
    public void close() {
        closed = true;
        Process p = running;
        if (p != null) {
            kill(p);
        }
        try (Stream<Path> s = Files.walk(dir)) {
            s.sorted(Comparator.reverseOrder()).forEach(x -> x.toFile().delete());
        } catch (IOException ignored) {
            // best effort
        }
    }
}
