package dev.sandbox4j.benchmarks;

import dev.sandbox4j.compose.ConcurrencyLimiter;
import dev.sandbox4j.api.Execution;
import dev.sandbox4j.api.SandboxRunner;
import dev.sandbox4j.api.SandboxSpec;
import dev.sandbox4j.spi.CreateRequest;
import dev.sandbox4j.spi.ExecOutcome;
import dev.sandbox4j.spi.lifecycle.ManagedSandboxRunner;
import dev.sandbox4j.spi.OutputSink;
import dev.sandbox4j.spi.SandboxDriver;
import dev.sandbox4j.spi.SandboxHandle;
import dev.sandbox4j.policy.Capabilities;
import dev.sandbox4j.policy.Language;
import dev.sandbox4j.redis.RedisPermitStore;
import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import redis.clients.jedis.RedisClient;

/**
 * What a {@link RedisPermitStore} adds to opening and closing a sandbox: one acquire and one release,
 * each one Lua script on loopback Redis, against the same open+close with the default in-process store.
 * The sandboxes are in memory (a driver with no processes and no network), so the difference is the
 * permit store alone. Three cases run interleaved (round robin, the order rotating each round):
 * <ul>
 *   <li>in-process: {@code limiter.forKey(runner, key).open(spec).close()} with the default store;</li>
 *   <li>redis: the same with a {@code RedisPermitStore} (acquire script, release script);</li>
 *   <li>redis PING: one bare loopback round trip on another connection, for scale.</li>
 * </ul>
 * Usage: {@code RedisLatency [rounds] [redis://host:port]} (default 1000 rounds after 200 warm-up
 * rounds). Without a URI it starts its own {@code redis-server} (from PATH) on 127.0.0.1 and a free
 * port, without persistence, and stops it at the end.
 */
public final class RedisLatency {
    private RedisLatency() {
    }

    public static void main(String[] args) throws Exception {
        int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 1000;
        int warmup = 200;
        Process server = null;
        String uri;
        if (args.length > 1) {
            uri = args[1];
        } else {
            int port = freePort();
            server = startRedis(port);
            uri = "redis://127.0.0.1:" + port;
        }
        try (RedisPermitStore store = RedisPermitStore.builder().uri(uri).namespace("bench-" + ProcessHandle.current().pid()).build();
             RedisClient ping = RedisClient.create(uri)) {
            SandboxRunner runner = ManagedSandboxRunner.of(new MemoryDriver());
            SandboxRunner inProcess = ConcurrencyLimiter.builder().perKey(1).global(10).build().forKey(runner, "user");
            SandboxRunner onRedis = ConcurrencyLimiter.builder().perKey(1).global(10).store(store).build().forKey(runner, "user");
            SandboxSpec spec = SandboxSpec.defaults();
            List<Case> cases = List.of(
                    new Case("open+close, in-process store", () -> inProcess.open(spec).close()),
                    new Case("open+close, redis store", () -> onRedis.open(spec).close()),
                    new Case("redis PING (one round trip)", ping::ping));
            for (int i = 0; i < warmup; i++) {
                for (Case c : cases) {
                    c.body.run();
                }
            }
            for (int i = 0; i < rounds; i++) {
                for (int j = 0; j < cases.size(); j++) {
                    Case c = cases.get((i + j) % cases.size());
                    long t0 = System.nanoTime();
                    c.body.run();
                    c.micros.add((System.nanoTime() - t0) / 1e3);
                }
            }
            System.out.printf(Locale.ROOT, "%d interleaved rounds after %d warm-up rounds; %d CPUs; load %s; %s%n", rounds,
                    warmup, Runtime.getRuntime().availableProcessors(), loadAverage(), redisVersion(ping));
            System.out.printf(Locale.ROOT, "%-30s %10s %10s %10s %10s%n", "case", "median", "p10", "p90", "min");
            for (Case c : cases) {
                double[] m = c.sorted();
                System.out.printf(Locale.ROOT, "%-30s %7.0f us %7.0f us %7.0f us %7.0f us%n", c.name,
                        percentile(m, 50), percentile(m, 10), percentile(m, 90), m[0]);
            }
            double base = percentile(cases.get(0).sorted(), 50);
            System.out.printf(Locale.ROOT, "added latency of acquire+release on Redis (median - in-process median): %+.0f us%n",
                    percentile(cases.get(1).sorted(), 50) - base);
            if (store.inUse() != 0) {
                throw new IllegalStateException("permits left behind: " + store.inUse());
            }
        } finally {
            if (server != null) {
                server.destroy();
                server.waitFor(30, TimeUnit.SECONDS);
            }
        }
    }

    /** Sandboxes that exist only in memory: nothing to measure but the limiter and its store. */
    private static final class MemoryDriver implements SandboxDriver<MemoryDriver.Handle> {
        record Handle(String id) implements SandboxHandle {
        }

        private final AtomicInteger ids = new AtomicInteger();

        @Override
        public String provider() {
            return "memory";
        }

        @Override
        public Capabilities capabilities() {
            return Capabilities.builder("memory").egress(Capabilities.Egress.values())
                    .limits(Capabilities.Limit.values()).features(Capabilities.Feature.values())
                    .languages(Language.values()).build();
        }

        @Override
        public Handle create(CreateRequest request) {
            return new Handle("m-" + ids.incrementAndGet());
        }

        @Override
        public ExecOutcome exec(Handle sandbox, Execution execution, OutputSink sink) {
            return ExecOutcome.exited(0);
        }

        @Override
        public boolean destroy(Handle sandbox) {
            return true;
        }
    }

    private interface Body {
        void run() throws Exception;
    }

    private static final class Case {
        final String name;
        final Body body;
        final List<Double> micros = new ArrayList<>();

        Case(String name, Body body) {
            this.name = name;
            this.body = body;
        }

        double[] sorted() {
            double[] a = micros.stream().mapToDouble(Double::doubleValue).toArray();
            Arrays.sort(a);
            return a;
        }
    }

    private static Process startRedis(int port) throws IOException, InterruptedException {
        String binary = null;
        for (String dir : System.getenv().getOrDefault("PATH", "/usr/bin").split(File.pathSeparator)) {
            if (new File(dir, "redis-server").canExecute()) {
                binary = new File(dir, "redis-server").getPath();
                break;
            }
        }
        if (binary == null) {
            throw new IllegalStateException("no redis-server on PATH (apt-get install -y redis-server), or pass a redis:// URI");
        }
        Process p = new ProcessBuilder(binary, "--port", Integer.toString(port), "--bind", "127.0.0.1", "--save", "",
                "--appendonly", "no").redirectErrorStream(true).start();
        BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
        String line;
        while ((line = r.readLine()) != null && !line.contains("Ready to accept connections")) {
            // the server's start-up log
        }
        if (line == null) {
            throw new IllegalStateException("redis-server exited: " + p.waitFor());
        }
        Thread drain = new Thread(() -> {
            try {
                r.transferTo(java.io.Writer.nullWriter());
            } catch (IOException ignored) {
                // the server stopped
            }
        });
        drain.setDaemon(true);
        drain.start();
        return p;
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }

    private static String redisVersion(RedisClient client) {
        for (String line : client.info("server").split("\r?\n")) {
            if (line.startsWith("redis_version:")) {
                return "redis " + line.substring("redis_version:".length()).trim();
            }
        }
        return "redis ?";
    }

    private static double percentile(double[] sorted, int p) {
        if (p == 50) {
            int n = sorted.length;
            return n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
        }
        return sorted[Math.min(sorted.length - 1, (int) Math.floor(p / 100.0 * sorted.length))];
    }

    private static String loadAverage() {
        try {
            return new String(java.nio.file.Files.readAllBytes(java.nio.file.Path.of("/proc/loadavg"))).trim();
        } catch (IOException e) {
            return "?";
        }
    }
}
