package dev.sandbox4j.redis;

import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * A real redis-server for one test class, on 127.0.0.1 and a free port, with no persistence (so a
 * restart starts empty, as a crashed cache would). Stopping and starting again keeps the port.
 */
final class RedisServer implements AutoCloseable {
    private static final long READY_SECONDS = 30;
    private final String binary;
    private final int port;
    private final List<String> extra;
    private Process process;

    private RedisServer(String binary, int port, List<String> extra) {
        this.binary = binary;
        this.port = port;
        this.extra = List.copyOf(extra);
    }

    /** The redis-server on PATH (or in /usr/bin, /usr/local/bin), if there is one. */
    static Optional<String> binary() {
        List<String> dirs = new ArrayList<>();
        String path = System.getenv("PATH");
        if (path != null) {
            dirs.addAll(List.of(path.split(File.pathSeparator)));
        }
        dirs.add("/usr/bin");
        dirs.add("/usr/local/bin");
        for (String dir : dirs) {
            File f = new File(dir, "redis-server");
            if (f.canExecute()) {
                return Optional.of(f.getAbsolutePath());
            }
        }
        return Optional.empty();
    }

    static final String SKIP_REASON = "no redis-server binary on PATH: install it (apt-get install -y redis-server; .ci/run does)";

    static RedisServer start(String binary, String... extraArgs) {
        RedisServer s = new RedisServer(binary, freePort(), List.of(extraArgs));
        s.start();
        return s;
    }

    private static int freePort() {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The server's pid, for signals (SIGSTOP) sent by a test. */
    long pid() {
        return process.pid();
    }

    int port() {
        return port;
    }

    String uri() {
        return "redis://127.0.0.1:" + port;
    }

    boolean isRunning() {
        return process != null && process.isAlive();
    }

    /** Starts the server and returns once it accepts connections (it says so in its log). */
    void start() {
        if (isRunning()) {
            throw new IllegalStateException("already running");
        }
        List<String> command = new ArrayList<>(List.of(binary, "--port", Integer.toString(port), "--bind", "127.0.0.1",
                "--save", "", "--appendonly", "no", "--loglevel", "notice", "--daemonize", "no"));
        command.addAll(extra);
        ProcessBuilder pb = new ProcessBuilder(command).redirectErrorStream(true);
        try {
            process = pb.start();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        Process p = process;
        CompletableFuture<String> ready = new CompletableFuture<>();
        Thread reader = new Thread(() -> {
            StringBuilder seen = new StringBuilder();
            try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
                String line;
                while ((line = r.readLine()) != null) {
                    if (!ready.isDone()) {
                        seen.append(line).append('\n');
                        if (line.contains("Ready to accept connections")) {
                            ready.complete(line);
                        }
                    }
                }
            } catch (IOException ignored) {
                // the process ended
            }
            ready.completeExceptionally(new IllegalStateException("redis-server exited before it was ready:\n" + seen));
        }, "redis-server-" + port + "-log");
        reader.setDaemon(true);
        reader.start();
        try {
            ready.get(READY_SECONDS, TimeUnit.SECONDS);
        } catch (Exception e) {
            stop();
            throw new IllegalStateException("redis-server on port " + port + " did not start", e);
        }
    }

    /** Stops the server (SIGTERM; nothing is saved) and waits until it is gone. */
    void stop() {
        Process p = process;
        if (p == null) {
            return;
        }
        p.destroy();
        try {
            if (!p.waitFor(READY_SECONDS, TimeUnit.SECONDS)) {
                p.destroyForcibly().waitFor();
            }
        } catch (InterruptedException e) {
            p.destroyForcibly();
            Thread.currentThread().interrupt();
        }
        process = null;
    }

    @Override
    public void close() {
        stop();
    }
}
