package dev.sandbox4j.benchmarks.adapters;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The output flood: code that writes a gibibyte to stdout, run by each Java adapter against its
 * emulator (normal mode: the code runs for real in a local sandbox) and by the local runner, each client
 * in its own JVM ({@link FloodClient}, {@code -Xmx64m}), once with the default hard cap (64 MiB) and
 * once with a small one (256 KiB, below every emulator's own cap, so that the client is what stops
 * the stream). Prints the client's peak heap and the bytes past the cap, as decoded output (stdout
 * bytes the result counts beyond the cap) and on the wire (socket bytes less the cap; Modal's from the
 * kernel's TCP counters).
 *
 * The Docker runner runs against the real engine (no emulator), its wire bytes counted by a forwarder in
 * front of the engine's socket.
 *
 * <p>Usage: {@code FloodBench [MiB] [provider ...]} (default 1024 MiB; local, e2b, daytona, vercel, modal, docker).
 */
public final class FloodBench {
    static final long[] CAPS = {64L * 1024 * 1024, 256L * 1024};
    /** Where each emulator's standalone main stops a command's output on its own side (their defaults). */
    static final Map<String, String> EMULATOR_CAPS = Map.of("local", "-", "e2b", "64 MiB", "daytona", "16 MiB",
            "vercel", "16 Mi chars", "modal", "1 M chars", "docker", "-");

    private FloodBench() {
    }

    public static void main(String[] args) throws Exception {
        long mib = 1024;
        List<String> providers = new ArrayList<>();
        for (String a : args) {
            if (a.matches("\\d+")) {
                mib = Long.parseLong(a);
            } else if (!a.isBlank()) {
                providers.addAll(List.of(a.split(",")));
            }
        }
        if (providers.isEmpty()) {
            providers.addAll(List.of("local", "e2b", "daytona", "vercel", "modal", "docker"));
        }
        Path root = AdapterBench.repositoryRoot();
        Path work = root.resolve("benchmarks/target/adapters");
        Files.createDirectories(work);
        PrintStream out = new PrintStream(System.out, true, StandardCharsets.UTF_8);
        out.printf(Locale.ROOT, "output flood: %d MiB to stdout, clients at -Xmx64m, emulators in normal mode%n", mib);
        out.println("load before: " + AdapterBench.load());
        List<String[]> rows = new ArrayList<>();
        rows.add(new String[] {"runner", "hard cap", "emulator's cap", "peak heap MiB", "socket MiB read", "wire past cap MiB", "decoded past cap KiB",
            "read(2) MiB", "status", "stdout bytes", "ms"});
        String cp = System.getProperty("java.class.path");
        for (String name : providers) {
            out.println("== " + name);
            Emulator emu = null;
            try {
                Map<String, String> env = Map.of();
                if (!name.equals("local") && !name.equals("docker")) {
                    Provider p = Provider.named(name, Long.toHexString(System.nanoTime()));
                    emu = Emulator.start(p, false, cp, work.resolve(name + "-flood-emulator.log"));
                    env = p.clientEnv(emu.url);
                }
                for (long cap : CAPS) {
                    rows.add(row(name, cap, client(name, mib, cap, cp, root, env, work)));
                }
            } catch (IOException | RuntimeException e) {
                rows.add(new String[] {name, "not measured: " + e.getMessage(), "", "", "", "", "", "", "", "", ""});
            } finally {
                if (emu != null) {
                    emu.stop().forEach(l -> out.println("   emulator at exit: " + l));
                    emu.close();
                }
            }
        }
        out.println("load after: " + AdapterBench.load());
        out.println();
        out.print(Table.format(rows));
    }

    private static JsonNode client(String name, long mib, long cap, String cp, Path root, Map<String, String> env, Path work)
            throws IOException, InterruptedException {
        Path log = work.resolve(name + "-flood-client.log");
        ProcessBuilder pb = new ProcessBuilder(Emulator.javaBin(), "-Xmx64m", "-cp", cp, FloodClient.class.getName(), name,
                Long.toString(mib), Long.toString(cap)).directory(root.toFile())
                .redirectError(ProcessBuilder.Redirect.appendTo(log.toFile()));
        pb.environment().putAll(env);
        Process p = pb.start();
        String json = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
        if (!p.waitFor(10, TimeUnit.MINUTES) || p.exitValue() != 0 || json.isEmpty()) {
            p.destroyForcibly();
            throw new IOException("the client failed (exit " + (p.isAlive() ? "?" : p.exitValue()) + ", see " + log + ")");
        }
        return new ObjectMapper().readTree(json.substring(json.lastIndexOf('\n') + 1));
    }

    private static String[] row(String name, long cap, JsonNode r) {
        double capMib = cap / 1048576.0;
        long socket = r.get("socketBytes").asLong();
        return new String[] {name, cap >= 1048576 ? (cap >> 20) + " MiB" : (cap >> 10) + " KiB", EMULATOR_CAPS.getOrDefault(name, "?"),
            mib(r.get("peakHeap").asLong()), socket < 0 ? "-" : mib(socket), socket < 0 ? "-" : Table.number(socket / 1048576.0 - capMib),
            Table.number((r.get("stdoutBytes").asLong() - Math.min(cap, r.get("stdoutBytes").asLong())) / 1024.0),
            r.get("rcharBytes").asLong() < 0 ? "-" : mib(r.get("rcharBytes").asLong()), r.get("status").asText(), Long.toString(r.get("stdoutBytes").asLong()),
            Long.toString(r.get("millis").asLong())};
    }

    private static String mib(long bytes) {
        return Table.number(bytes / 1048576.0);
    }
}
