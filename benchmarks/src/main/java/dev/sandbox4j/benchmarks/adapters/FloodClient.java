package dev.sandbox4j.benchmarks.adapters;

import dev.sandbox4j.api.Execution;
import dev.sandbox4j.api.RunRequest;
import dev.sandbox4j.api.RunResult;
import dev.sandbox4j.api.Sandbox;
import dev.sandbox4j.api.SandboxRunner;
import dev.sandbox4j.api.SandboxSpec;
import dev.sandbox4j.daytona.DaytonaSandboxRunner;
import dev.sandbox4j.docker.DockerSandboxRunner;
import dev.sandbox4j.e2b.E2bSandboxRunner;
import dev.sandbox4j.local.LocalSandboxRunner;
import dev.sandbox4j.modal.ModalSandboxRunner;
import dev.sandbox4j.vercel.VercelSandboxRunner;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryPoolMXBean;
import java.lang.management.MemoryType;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;
import java.util.Map;
import okhttp3.OkHttpClient;

/**
 * One client process of the output flood: a runner (a Java adapter against its emulator in normal mode,
 * or the local runner) runs code that writes {@code MiB} mebibytes to stdout, with a hard cap. Prints one
 * JSON line: the peak heap during the flood run (sum of the heap pools' peaks, reset after a warm-up
 * run), the bytes read from the client's sockets (REST adapters, through a counting socket factory) and
 * the bytes the process read by read(2) (/proc/self/io rchar: sockets and pipes alike), each less what
 * the same run printing nothing read, and the result. Modal's gRPC (Netty's native transport) reads
 * past rchar's accounting and has no OkHttp: its wire bytes are the kernel's own count for this
 * process's TCP sockets ({@code bytes_received} in {@code ss -tinp}), read while the sandbox (and so its
 * router connection) is still open. The Docker runner reaches the real engine through
 * {@link CountingUnixProxy} (in this process: what the engine sent towards the client is the wire figure,
 * and the forwarder's own reads are taken out of rchar).
 *
 * <p>Usage: {@code FloodClient <local|e2b|daytona|vercel|modal|docker> <MiB> <hardCapBytes>}; the adapters are
 * configured from the same variables as their {@code fromEnv()} (Docker: the engine at
 * {@code /var/run/docker.sock}, the image {@code SANDBOX4J_DOCKER_IMAGE}, {@code sandbox4j-test:bookworm-1} by default).
 */
public final class FloodClient {
    private FloodClient() {
    }

    public static void main(String[] args) throws Exception {
        String provider = args[0];
        long mib = Long.parseLong(args[1]);
        long cap = Long.parseLong(args[2]);
        CountingSocketFactory sockets = new CountingSocketFactory();
        // the Docker runner has its own Unix-socket client: its wire bytes are counted by a forwarder in front of the engine
        CountingUnixProxy engine = provider.equals("docker") ? new CountingUnixProxy(
                Files.createTempDirectory("flood-docker-").resolve("engine.sock"), Path.of("/var/run/docker.sock")) : null;
        OkHttpClient http = new OkHttpClient.Builder().socketFactory(sockets).build();
        String flood = "import sys\nb = b'x' * (1 << 20)\nw = sys.stdout.buffer.write\nfor _ in range(" + mib + "):\n    w(b)\n";
        try (SandboxRunner runner = runner(provider, http, engine)) {
            RunRequest quiet = request("pass", cap);
            RunRequest loud = request(flood, cap);
            runner.run(quiet); // warm-up: classes loaded, connections pooled
            long s0 = wire(sockets, engine);
            long r0 = rchar(engine);
            runner.run(quiet);
            long baseSocket = wire(sockets, engine) - s0;
            long baseRchar = rchar(engine) - r0;
            System.gc();
            for (MemoryPoolMXBean p : ManagementFactory.getMemoryPoolMXBeans()) {
                p.resetPeakUsage();
            }
            long s1 = wire(sockets, engine);
            long r1 = rchar(engine);
            long t0 = System.nanoTime();
            RunResult r;
            long socket;
            if (provider.equals("modal")) {
                // the kernel's count, read before the close tears the router connection (and its counter) down
                try (Sandbox sandbox = runner.open(loud.oneShotSpec())) {
                    long k0 = tcpBytesReceived();
                    r = sandbox.exec(loud.execution());
                    socket = tcpBytesReceived() - k0;
                }
            } else {
                r = runner.run(loud);
                socket = wire(sockets, engine) - s1 - baseSocket;
            }
            long millis = (System.nanoTime() - t0) / 1_000_000;
            long read = rchar(engine) - r1 - baseRchar;
            long peak = 0;
            for (MemoryPoolMXBean p : ManagementFactory.getMemoryPoolMXBeans()) {
                if (p.getType() == MemoryType.HEAP) {
                    peak += p.getPeakUsage().getUsed();
                }
            }
            boolean counted = !provider.equals("local");
            System.out.printf(Locale.ROOT, "{\"peakHeap\":%d,\"maxHeap\":%d,\"socketBytes\":%d,\"rcharBytes\":%d,"
                    + "\"status\":\"%s\",\"stdoutBytes\":%d,\"stdoutChars\":%d,\"truncated\":%b,\"millis\":%d}%n",
                    peak, Runtime.getRuntime().maxMemory(), counted ? socket : -1, provider.equals("modal") ? -1 : read, r.status(), r.stdoutBytes(),
                    r.stdout().length(), r.stdoutTruncated(), millis);
        }
        System.exit(0);
    }

    private static RunRequest request(String code, long cap) {
        return RunRequest.of(SandboxSpec.defaults(), Execution.builder(code).hardCapBytes(cap).build());
    }

    /** Wire bytes towards the client so far: the REST adapters' socket reads, or what the engine sent through the forwarder. */
    private static long wire(CountingSocketFactory sockets, CountingUnixProxy engine) {
        return engine != null ? engine.toClient.get() : sockets.bytesRead.get();
    }

    /** This process's read(2) bytes, less the forwarder's own reads (the client's alone). */
    private static long rchar(CountingUnixProxy engine) throws IOException {
        return rchar() - (engine == null ? 0 : engine.read.get());
    }

    private static SandboxRunner runner(String provider, OkHttpClient http, CountingUnixProxy engine) {
        Map<String, String> env = System.getenv();
        return switch (provider) {
            case "local" -> LocalSandboxRunner.create().verify();
            case "e2b" -> E2bSandboxRunner.builder().apiKey(env.get("E2B_API_KEY")).apiUrl(env.get("E2B_API_URL"))
                    .sandboxUrl(env.get("E2B_SANDBOX_URL")).httpClient(http).build();
            case "daytona" -> DaytonaSandboxRunner.builder().apiKey(env.get("DAYTONA_API_KEY"))
                    .apiUrl(env.get("DAYTONA_API_URL")).target(env.get("DAYTONA_TARGET")).httpClient(http).build();
            case "vercel" -> VercelSandboxRunner.builder().token(env.get("VERCEL_TOKEN")).teamId(env.get("VERCEL_TEAM_ID"))
                    .projectId(env.get("VERCEL_PROJECT_ID")).baseUrl(env.get("VERCEL_API_URL")).httpClient(http).build();
            case "modal" -> ModalSandboxRunner.fromEnv(); // gRPC: no OkHttp, so bytes come from rchar only
            case "docker" -> DockerSandboxRunner.builder().dockerHost("unix://" + engine.socket())
                    .image(env.getOrDefault("SANDBOX4J_DOCKER_IMAGE", "sandbox4j-test:bookworm-1")).build();
            default -> throw new IllegalArgumentException("unknown provider " + provider);
        };
    }

    /**
     * Bytes the kernel received on this process's open TCP sockets ({@code bytes_received} of
     * {@code ss -tinpH}, summed over the sockets whose owner is this pid): what a transport read, whatever
     * system call it used.
     */
    static long tcpBytesReceived() throws IOException, InterruptedException {
        Process ss = new ProcessBuilder("ss", "-tinpH").redirectErrorStream(true).start();
        String out = new String(ss.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
        if (!ss.waitFor(30, java.util.concurrent.TimeUnit.SECONDS) || ss.exitValue() != 0) {
            throw new IOException("ss failed: " + out);
        }
        String self = "pid=" + ProcessHandle.current().pid() + ",";
        long total = 0;
        boolean mine = false;
        for (String line : out.split("\n")) {
            if (!line.startsWith("\t") && !line.startsWith(" ")) {
                mine = line.contains(self); // a socket's line; its details follow on the next line
                continue;
            }
            java.util.regex.Matcher m = java.util.regex.Pattern.compile("bytes_received:(\\d+)").matcher(line);
            if (mine && m.find()) {
                total += Long.parseLong(m.group(1));
            }
        }
        return total;
    }

    /** Bytes this process has read with read(2) and friends (sockets, pipes, files). */
    static long rchar() throws IOException {
        for (String line : Files.readAllLines(Path.of("/proc/self/io"))) {
            if (line.startsWith("rchar:")) {
                return Long.parseLong(line.substring(6).trim());
            }
        }
        throw new IOException("no rchar in /proc/self/io");
    }
}
