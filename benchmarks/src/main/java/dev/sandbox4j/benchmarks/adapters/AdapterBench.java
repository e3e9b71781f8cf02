package dev.sandbox4j.benchmarks.adapters;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Each Java adapter beside its provider's official npm SDK, against the same emulator process in its
 * instant mode (every exec answers at once, no code runs), each client in its own process, doing
 * create, one exec ({@code print(1)}), teardown cycles.
 *
 * <p>Per provider: the emulator starts ({@code ...EmulatorMain --instant}), then the SDK's node
 * process ({@code benchmarks/sdk/worker.mjs}, the SDK as {@code conformance/} installed it) and the
 * adapter's JVM ({@link JavaClient}). Both warm up (JIT, node) with the same batches as measured, then
 * each one's idle CPU is measured over two seconds. Then, in rounds whose order alternates (SDK, Java;
 * Java, SDK; ...) so drift on a shared machine hits both alike, each runs a batch at concurrency 1 and
 * one at 16. Around every batch the harness reads the client's user+sys CPU from /proc/&lt;pid&gt;/stat
 * and the emulator's request count ({@code GET /_emulator/requests}); only one client runs at a time.
 *
 * <p>Usage: {@code AdapterBench [runs] [--normal] [--warmup N] [provider ...]}: runs is the number of
 * measured cycles per client at concurrency 1 (default 200, in batches of 20; at 16 concurrent each
 * round runs 128); the warm-up is as many rounds as measured (at least 5), or N cycles at concurrency 1
 * (N / 20 rounds); providers default to e2b, daytona, vercel and modal. The emulators run with
 * {@code -Dsun.net.httpserver.nodelay=true} (see {@code benchmarks/README.md}). {@code --normal} runs against the
 * emulators' normal mode (code runs for real) instead.
 */
public final class AdapterBench {
    static final int BATCH_1 = 20;
    static final int BATCH_16 = 128;

    private AdapterBench() {
    }

    /** The two clients of one provider and what each measured. */
    static final class Result {
        final String provider;
        final Map<String, Tally[]> tallies = new LinkedHashMap<>(); // "SDK" / "Java" -> {c1, c16}
        final Map<String, Double> idleTicksPerSecond = new LinkedHashMap<>();
        final Map<String, String> versions = new LinkedHashMap<>();
        String skipped;
        List<String> emulatorReport = List.of();

        Result(String provider) {
            this.provider = provider;
        }
    }

    public static void main(String[] args) throws Exception {
        int runs = 200;
        int warmup = -1;
        boolean instant = true;
        List<String> providers = new ArrayList<>();
        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            if (a.equals("--normal")) {
                instant = false;
            } else if (a.equals("--warmup")) {
                warmup = Integer.parseInt(args[++i]);
            } else if (a.matches("\\d+")) {
                runs = Integer.parseInt(a);
            } else if (!a.isBlank()) {
                providers.addAll(List.of(a.split(",")));
            }
        }
        if (providers.isEmpty()) {
            providers.addAll(Provider.names());
        }
        int rounds = Math.max(1, runs / BATCH_1);
        // the JVM client needs some 500 cycles before its JIT settles (median 67 ms over the first 100
        // cycles, 11 ms after 400, on the loaded machine here); node settles sooner
        int warmRounds = warmup >= 0 ? Math.max(0, warmup / BATCH_1) : Math.max(5, rounds);
        Path root = repositoryRoot();
        Path work = root.resolve("benchmarks/target/adapters");
        Files.createDirectories(work);
        PrintStream out = new PrintStream(System.out, true, StandardCharsets.UTF_8);
        out.printf(Locale.ROOT, "adapter benchmark: %s mode, %d rounds of %d cycles at 1 and %d at 16 concurrent per client"
                + " after %d warm-up rounds; logs in %s%n", instant ? "instant" : "normal", rounds, BATCH_1, BATCH_16,
                warmRounds, root.relativize(work));
        out.println("load before: " + load());
        List<Result> results = new ArrayList<>();
        for (String name : providers) {
            Result r = new Result(name);
            results.add(r);
            try {
                runProvider(Provider.named(name, Long.toHexString(System.nanoTime())), instant, rounds, warmRounds, root, work, r, out);
            } catch (IOException | RuntimeException e) {
                r.skipped = e.getClass().getSimpleName() + ": " + e.getMessage();
                out.println("  " + name + ": not measured: " + r.skipped);
            }
        }
        out.println("load after: " + load());
        out.println();
        out.print(Table.render(results));
    }

    private static void runProvider(Provider p, boolean instant, int rounds, int warmRounds, Path root, Path work,
            Result r, PrintStream out) throws IOException, InterruptedException {
        Path scratch = root.resolve("conformance/.scratch").resolve(p.name);
        Path pkg = scratch.resolve("node_modules").resolve(p.sdkPackage).resolve("package.json");
        if (!Files.isRegularFile(pkg)) {
            throw new IOException("the SDK is not installed in " + root.relativize(scratch)
                    + " (run conformance/run.sh " + p.name + " once)");
        }
        r.versions.put("SDK", p.sdkPackage + " " + version(pkg));
        r.versions.put("Java", "sandbox-" + p.name + " (this build)");
        // the worker runs beside the SDK install, so that the SDK resolves as it does for conformance/
        Files.copy(root.resolve("benchmarks/sdk/worker.mjs"), scratch.resolve("bench-worker.mjs"),
                StandardCopyOption.REPLACE_EXISTING);
        String cp = System.getProperty("java.class.path");
        out.println("== " + p.name + ": starting the emulator" + (instant ? " (--instant)" : ""));
        try (Emulator emu = Emulator.start(p, instant, cp, work.resolve(p.name + "-emulator.log"))) {
            Map<String, String> env = p.clientEnv(emu.url);
            Map<String, ClientProcess> clients = new LinkedHashMap<>();
            try {
                clients.put("SDK", ClientProcess.start(p.name + " SDK", List.of("node", "bench-worker.mjs", p.name), scratch,
                        env, work.resolve(p.name + "-sdk.log")));
                clients.put("Java", ClientProcess.start(p.name + " Java", List.of(Emulator.javaBin(), "-cp", cp,
                        JavaClient.class.getName(), p.name), root, env, work.resolve(p.name + "-java.log")));
                for (String side : clients.keySet()) {
                    r.tallies.put(side, new Tally[] {new Tally(), new Tally()});
                }
                out.println("   warming up (" + warmRounds + " rounds)");
                for (int i = 0; i < warmRounds; i++) {
                    for (ClientProcess c : ordered(clients, i).values()) {
                        check(c, c.batch(BATCH_1, 1));
                        check(c, c.batch(BATCH_16, 16));
                    }
                }
                for (Map.Entry<String, ClientProcess> e : clients.entrySet()) {
                    r.idleTicksPerSecond.put(e.getKey(), e.getValue().idleTicks(Duration.ofSeconds(2)) / 2.0);
                }
                out.println("   measuring (" + rounds + " rounds)");
                for (int i = 0; i < rounds; i++) {
                    for (Map.Entry<String, ClientProcess> e : ordered(clients, i).entrySet()) {
                        Tally[] t = r.tallies.get(e.getKey());
                        measure(emu, e.getValue(), t[0], BATCH_1, 1);
                        measure(emu, e.getValue(), t[1], BATCH_16, 16);
                    }
                }
            } finally {
                for (ClientProcess c : clients.values()) {
                    c.close();
                }
                r.emulatorReport = emu.stop();
            }
        }
    }

    private static void measure(Emulator emu, ClientProcess c, Tally t, int cycles, int concurrency) throws IOException {
        Map<String, Long> before = requests(emu);
        ClientProcess.Batch b = c.batch(cycles, concurrency);
        t.add(b, cycles, before, requests(emu));
    }

    private static Map<String, Long> requests(Emulator emu) {
        try {
            return emu.requests();
        } catch (IOException | RuntimeException e) {
            return null; // an emulator without the counter: requests per cycle shows as unknown
        }
    }

    private static void check(ClientProcess c, ClientProcess.Batch b) throws IOException {
        if (b.errors > 0) {
            throw new IOException(c.label + ": " + b.errors + " failed cycles in warm-up, first: " + b.firstError);
        }
    }

    /** The clients in this round's order: SDK first in even rounds, Java first in odd ones. */
    static <V> Map<String, V> ordered(Map<String, V> clients, int round) {
        List<String> keys = new ArrayList<>(clients.keySet());
        if (round % 2 == 1) {
            java.util.Collections.reverse(keys);
        }
        Map<String, V> m = new LinkedHashMap<>();
        keys.forEach(k -> m.put(k, clients.get(k)));
        return m;
    }

    private static String version(Path packageJson) throws IOException {
        var m = java.util.regex.Pattern.compile("\"version\"\\s*:\\s*\"([^\"]+)\"").matcher(Files.readString(packageJson));
        return m.find() ? m.group(1) : "?";
    }

    static String load() {
        try {
            String[] f = Files.readString(Path.of("/proc/loadavg")).trim().split("\\s+");
            return f[0] + " " + f[1] + " " + f[2] + " (1, 5, 15 min), " + Runtime.getRuntime().availableProcessors() + " cores";
        } catch (IOException e) {
            return "unknown";
        }
    }

    /** The repository: the first folder up from the working directory that holds conformance/lib.sh. */
    static Path repositoryRoot() throws IOException {
        for (Path p = Path.of("").toAbsolutePath(); p != null; p = p.getParent()) {
            if (Files.isRegularFile(p.resolve("conformance/lib.sh"))) {
                return p;
            }
        }
        throw new IOException("run from inside the sandbox4j repository (no conformance/lib.sh above " + Path.of("").toAbsolutePath() + ")");
    }
}
