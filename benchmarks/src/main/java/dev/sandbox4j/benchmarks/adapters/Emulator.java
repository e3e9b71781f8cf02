package dev.sandbox4j.benchmarks.adapters;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.InputStream;
import java.net.HttpURLConnection;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** A standalone emulator main run as its own process, with its output in a log file. */
final class Emulator implements AutoCloseable {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Pattern MODAL_RECORD = Pattern.compile("record at (http://[^/\\s]+)/_emulator/record");

    private final Process process;
    private final Path log;
    final String url;
    private final String controlOrigin;

    private Emulator(Process process, Path log, String url, String controlOrigin) {
        this.process = process;
        this.log = log;
        this.url = url;
        this.controlOrigin = controlOrigin;
    }

    static Emulator start(Provider p, boolean instant, String classpath, Path log) throws IOException, InterruptedException {
        // The JDK's HttpServer leaves Nagle on unless told: a response written as headers then body then
        // waits for the client's delayed ACK (40 ms on Linux), twice per cycle for some clients. A real
        // provider's front end does not, so the emulator here answers without it.
        List<String> cmd = new ArrayList<>(List.of(javaBin(), "-Dsun.net.httpserver.nodelay=true", "-cp", classpath,
                p.emulatorMain));
        cmd.addAll(p.emulatorArgs(instant));
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile());
        pb.environment().putAll(p.emulatorEnv());
        Process proc = pb.start();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (System.nanoTime() < deadline) {
            String url = null;
            String text = Files.readString(log);
            for (String line : text.split("\n")) {
                url = url != null ? url : p.urlFrom(line);
            }
            if (url != null) {
                String control = origin(url);
                Matcher m = MODAL_RECORD.matcher(text);
                if (m.find()) {
                    control = m.group(1); // Modal's controls are on their own HTTP port beside the gRPC one
                }
                return new Emulator(proc, log, url, control);
            }
            if (!proc.isAlive()) {
                throw new IOException(p.name + " emulator exited: " + text);
            }
            Thread.sleep(50); // polling the log for the URL line, not a timing
        }
        proc.destroyForcibly();
        throw new IOException(p.name + " emulator printed no URL in 60 s (see " + log + ")");
    }

    static String javaBin() {
        return Path.of(System.getProperty("java.home"), "bin", "java").toString();
    }

    static String origin(String url) {
        URI u = URI.create(url);
        return u.getScheme() + "://" + u.getAuthority();
    }

    long pid() {
        return process.pid();
    }

    /**
     * Requests the emulator counted so far, from its {@code GET /_emulator/requests}: {@code total} and
     * each kind (the HTTP emulators' top-level counts, Modal's per-method {@code calls}).
     */
    Map<String, Long> requests() throws IOException {
        HttpURLConnection c = (HttpURLConnection) URI.create(controlOrigin + "/_emulator/requests").toURL().openConnection();
        try (InputStream in = c.getInputStream()) {
            return counts(JSON.readTree(new String(in.readAllBytes(), StandardCharsets.UTF_8)));
        } finally {
            c.disconnect();
        }
    }

    static Map<String, Long> counts(JsonNode n) {
        Map<String, Long> m = new TreeMap<>();
        if (n.get("total") == null) {
            throw new IllegalArgumentException("no total in " + n);
        }
        n.fields().forEachRemaining(e -> {
            if (e.getValue().isNumber()) {
                m.put(e.getKey(), e.getValue().asLong());
            } else if (e.getValue().isObject()) {
                e.getValue().fields().forEachRemaining(k -> m.put(k.getKey(), k.getValue().asLong()));
            }
        });
        return m;
    }

    /** Stops it (SIGTERM: it reports its ledger) and answers the log lines that carry the ledger or counts. */
    List<String> stop() throws IOException, InterruptedException {
        process.destroy();
        if (!process.waitFor(30, TimeUnit.SECONDS)) {
            process.destroyForcibly();
        }
        List<String> out = new ArrayList<>();
        for (String line : Files.readAllLines(log)) {
            String l = line.toLowerCase(java.util.Locale.ROOT);
            if ((l.contains("ledger") && !l.startsWith("controls:")) || l.contains("requests: total")) {
                out.add(line.trim());
            }
        }
        return out;
    }

    @Override
    public void close() throws IOException {
        if (process.isAlive()) {
            process.destroyForcibly();
        }
    }
}
