package dev.sandbox4j.benchmarks.adapters;

import dev.sandbox4j.api.Execution;
import dev.sandbox4j.api.RunRequest;
import dev.sandbox4j.api.RunResult;
import dev.sandbox4j.api.SandboxRunner;
import dev.sandbox4j.api.SandboxSpec;
import dev.sandbox4j.daytona.DaytonaSandboxRunner;
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
 * past rchar's accounting and has no OkHttp, so no byte count is given for it.
 *
 * <p>Usage: {@code FloodClient <local|e2b|daytona|vercel|modal> <MiB> <hardCapBytes>}; the adapters are
 * configured from the same variables as their {@code fromEnv()}.
 */
public final class FloodClient {
    private FloodClient() {
    }

    public static void main(String[] args) throws Exception {
        String provider = args[0];
        long mib = Long.parseLong(args[1]);
        long cap = Long.parseLong(args[2]);
        CountingSocketFactory sockets = new CountingSocketFactory();
        OkHttpClient http = new OkHttpClient.Builder().socketFactory(sockets).build();
        String flood = "import sys\nb = b'x' * (1 << 20)\nw = sys.stdout.buffer.write\nfor _ in range(" + mib + "):\n    w(b)\n";
        try (SandboxRunner runner = runner(provider, http)) {
            RunRequest quiet = request("pass", cap);
            RunRequest loud = request(flood, cap);
            runner.run(quiet); // warm-up: classes loaded, connections pooled
            long s0 = sockets.bytesRead.get();
            long r0 = rchar();
            runner.run(quiet);
            long baseSocket = sockets.bytesRead.get() - s0;
            long baseRchar = rchar() - r0;
            System.gc();
            for (MemoryPoolMXBean p : ManagementFactory.getMemoryPoolMXBeans()) {
                p.resetPeakUsage();
            }
            long s1 = sockets.bytesRead.get();
            long r1 = rchar();
            long t0 = System.nanoTime();
            RunResult r = runner.run(loud);
            long millis = (System.nanoTime() - t0) / 1_000_000;
            long socket = sockets.bytesRead.get() - s1 - baseSocket;
            long read = rchar() - r1 - baseRchar;
            long peak = 0;
            for (MemoryPoolMXBean p : ManagementFactory.getMemoryPoolMXBeans()) {
                if (p.getType() == MemoryType.HEAP) {
                    peak += p.getPeakUsage().getUsed();
                }
            }
            boolean counted = !provider.equals("local") && !provider.equals("modal");
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

    private static SandboxRunner runner(String provider, OkHttpClient http) {
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
            default -> throw new IllegalArgumentException("unknown provider " + provider);
        };
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
