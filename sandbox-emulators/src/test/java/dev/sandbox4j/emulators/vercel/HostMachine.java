package dev.sandbox4j.emulators.vercel;

import dev.sandbox4j.api.Execution;
import dev.sandbox4j.emulators.vercel.internal.Machine;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.stream.Stream;

/** Scaffold until sandbox-local lands: runs commands as plain host processes in a temp dir. */
final class HostMachine implements Machine {
    private final Path dir;

    HostMachine() throws IOException {
        dir = Files.createTempDirectory("vercelemu-host");
    }

    @Override
    public String workPath() {
        return dir.toString();
    }

    @Override
    public void writeFile(String relativePath, byte[] content, int mode) throws IOException {
        Path p = dir.resolve(relativePath);
        Files.createDirectories(p.getParent());
        Files.write(p, content);
    }

    @Override
    public void mkdir(String relativePath) throws IOException {
        Files.createDirectories(dir.resolve(relativePath));
    }

    @Override
    public byte[] readFile(String relativePath, long maxBytes) throws IOException {
        Path p = dir.resolve(relativePath);
        return Files.isRegularFile(p) ? Files.readAllBytes(p) : null;
    }

    @Override
    public void setNetwork(boolean hostNetwork) {
    }

    @Override
    public Outcome run(Execution e, Output output) throws InterruptedException {
        List<String> argv;
        switch (e.language()) {
            case PYTHON: argv = List.of("/usr/bin/python3", "-c", e.code()); break;
            case JAVASCRIPT: argv = List.of("/usr/bin/node", "-e", e.code()); break;
            default: argv = List.of("/bin/bash", "-c", e.code());
        }
        Process p;
        try {
            p = new ProcessBuilder(argv).directory(dir.toFile()).start();
        } catch (IOException ex) {
            throw new IllegalStateException(ex);
        }
        Thread out = pump(p.getInputStream(), output::stdout);
        Thread err = pump(p.getErrorStream(), output::stderr);
        try {
            if (!p.waitFor(e.budget().toMillis(), TimeUnit.MILLISECONDS)) {
                p.descendants().forEach(ProcessHandle::destroyForcibly);
                p.destroyForcibly();
                p.waitFor();
                out.join();
                err.join();
                return Outcome.timeout();
            }
            out.join();
            err.join();
            return Outcome.exited(p.exitValue());
        } catch (InterruptedException ex) {
            p.descendants().forEach(ProcessHandle::destroyForcibly);
            p.destroyForcibly();
            throw ex;
        }
    }

    private static Thread pump(InputStream in, Consumer<String> sink) {
        Thread t = new Thread(() -> {
            try (Reader r = new InputStreamReader(in, StandardCharsets.UTF_8)) {
                char[] buf = new char[8192];
                int n;
                while ((n = r.read(buf)) > 0) {
                    sink.accept(new String(buf, 0, n));
                }
            } catch (IOException ignored) {
                // process gone
            }
        });
        t.setDaemon(true);
        t.start();
        return t;
    }

    @Override
    public void destroy() {
        try (Stream<Path> s = Files.walk(dir)) {
            s.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (IOException ignored) {
            // best effort
        }
    }
}
