package dev.sandbox4j.benchmarks.adapters;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * A client process (an SDK's node or an adapter's JVM) driven over its stdin and stdout; its CPU is read
 * from /proc around each batch, so start-up and warm-up never count.
 */
final class ClientProcess implements AutoCloseable {
    private static final ObjectMapper JSON = new ObjectMapper();

    final String label;
    private final Process process;
    private final BufferedReader out;
    private final Writer in;

    /** The outcome of one batch, with the process's CPU over it. */
    static final class Batch {
        final long wallNanos;
        final List<Long> latenciesMicros;
        final int errors;
        final String firstError;
        final long cpuTicks;

        Batch(long wallNanos, List<Long> latenciesMicros, int errors, String firstError, long cpuTicks) {
            this.wallNanos = wallNanos;
            this.latenciesMicros = latenciesMicros;
            this.errors = errors;
            this.firstError = firstError;
            this.cpuTicks = cpuTicks;
        }
    }

    private ClientProcess(String label, Process process) {
        this.label = label;
        this.process = process;
        this.out = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
        this.in = new OutputStreamWriter(process.getOutputStream(), StandardCharsets.UTF_8);
    }

    /** Starts {@code command} in {@code dir} with {@code env} added; stderr goes to {@code log}. Waits for "ready". */
    static ClientProcess start(String label, List<String> command, Path dir, Map<String, String> env, Path log)
            throws IOException {
        ProcessBuilder pb = new ProcessBuilder(command).directory(dir.toFile())
                .redirectError(ProcessBuilder.Redirect.to(log.toFile()));
        pb.environment().keySet().removeIf(k -> k.startsWith("E2B_") || k.startsWith("DAYTONA_")
                || k.startsWith("VERCEL_") || k.startsWith("MODAL_"));
        pb.environment().putAll(env);
        ClientProcess c = new ClientProcess(label, pb.start());
        String first = c.out.readLine();
        if (!"ready".equals(first)) {
            c.close();
            throw new IOException(label + " did not start (first line: " + first + "; see " + log + ")");
        }
        return c;
    }

    long pid() {
        return process.pid();
    }

    /** Runs a batch of cycles at a concurrency and answers what it measured. */
    Batch batch(int cycles, int concurrency) throws IOException {
        long before = ProcStat.cpuTicks(process.pid());
        in.write("batch " + cycles + " " + concurrency + "\n");
        in.flush();
        String line = out.readLine();
        long after = ProcStat.cpuTicks(process.pid());
        if (line == null) {
            throw new IOException(label + " exited during a batch");
        }
        JsonNode n = JSON.readTree(line);
        List<Long> lat = new ArrayList<>();
        n.get("lat").forEach(v -> lat.add(v.asLong()));
        JsonNode fe = n.get("firstError");
        return new Batch(n.get("wallNs").asLong(), lat, n.get("errors").asInt(),
                fe == null || fe.isNull() ? null : fe.asText(), after - before);
    }

    /** CPU the process used while left idle for {@code d}, in clock ticks (fractional: read in ns). */
    double idleTicks(Duration d) throws IOException, InterruptedException {
        long before = ProcStat.liveThreadsCpuNanos(process.pid());
        Thread.sleep(d.toMillis());
        long nanos = ProcStat.liveThreadsCpuNanos(process.pid()) - before;
        return nanos * ProcStat.TICKS_PER_SECOND / 1e9;
    }

    @Override
    public void close() throws IOException {
        try {
            in.write("quit\n");
            in.flush();
        } catch (IOException ignored) {
            // already gone
        }
        try {
            if (!process.waitFor(10, TimeUnit.SECONDS)) {
                process.destroyForcibly();
            }
        } catch (InterruptedException e) {
            process.destroyForcibly();
            Thread.currentThread().interrupt();
        }
    }
}
