package dev.sandbox4j.benchmarks;

import dev.sandbox4j.api.Execution;
import dev.sandbox4j.api.RunResult;
import dev.sandbox4j.api.Sandbox;
import dev.sandbox4j.api.SandboxRunner;
import dev.sandbox4j.api.SandboxSpec;
import dev.sandbox4j.daytona.DaytonaSandboxRunner;
import dev.sandbox4j.docker.DockerSandboxRunner;
import dev.sandbox4j.e2b.E2bSandboxRunner;
import dev.sandbox4j.emulators.LocalMachines;
import dev.sandbox4j.emulators.daytona.DaytonaEmulator;
import dev.sandbox4j.emulators.e2b.E2bEmulator;
import dev.sandbox4j.emulators.vercel.VercelEmulator;
import dev.sandbox4j.emulators.modal.ModalEmulator;
import dev.sandbox4j.local.LocalSandboxRunner;
import dev.sandbox4j.modal.ModalSandboxRunner;
import dev.sandbox4j.vercel.VercelSandboxRunner;
import java.time.Duration;
import java.time.Instant;
import java.util.Arrays;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Output as it happens, per streaming runner (the local runner, the Docker runner on the engine at
 * {@code DOCKER_HOST} or the usual socket with the image {@code SANDBOX4J_DOCKER_IMAGE}, left out when
 * {@code SANDBOX4J_BENCH_NO_DOCKER} is set, and the cloud adapters on their emulators): the time from the code's first write
 * (the wall clock it prints, {@code time.time_ns()} just before the write) to the listener's first
 * call (the wall clock there), for {@code runs} execs in one open sandbox (default 20). The code keeps
 * running 0.3 s after its write, so a runner that delivers output only at the end shows it. Both
 * clocks are this host's (the emulators run the code in local sandboxes; a container shares the host's
 * clock). Prints the median, minimum
 * and maximum. Usage: {@code StreamingLatency [runs]}.
 */
public final class StreamingLatency {
    private static final String CODE = "import sys, time\n"
            + "t = time.time_ns()\n"
            + "sys.stdout.write('%d\\n' % t); sys.stdout.flush()\n"
            + "time.sleep(0.3)\n";

    private StreamingLatency() {
    }

    public static void main(String[] args) throws Exception {
        int runs = args.length > 0 ? Integer.parseInt(args[0]) : 20;
        try (LocalSandboxRunner local = LocalSandboxRunner.create()) {
            measure("local", local, runs);
            if (System.getenv("SANDBOX4J_BENCH_NO_DOCKER") == null) {
                // the engine from DOCKER_HOST or the usual socket, the image from SANDBOX4J_DOCKER_IMAGE
                try (DockerSandboxRunner docker = DockerSandboxRunner.fromEnv()) {
                    docker.verify();
                    measure("docker", docker, runs);
                }
            }
            try (E2bEmulator emulator = E2bEmulator.builder().apiKey("e2b_bench0123456789abcdef0123456789abcdef")
                    .localRunner(local).build();
                 SandboxRunner e2b = E2bSandboxRunner.builder().apiKey("e2b_bench0123456789abcdef0123456789abcdef")
                         .apiUrl(emulator.baseUrl()).sandboxUrl(emulator.baseUrl()).build()) {
                measure("e2b", e2b, runs);
            }
            try (VercelEmulator emulator = VercelEmulator.builder().token("bench-token-0123456789").teamId("team_bench")
                    .projectId("prj_bench").machines(LocalMachines.using(local)).build();
                 SandboxRunner vercel = VercelSandboxRunner.builder().token("bench-token-0123456789").teamId("team_bench")
                         .projectId("prj_bench").baseUrl(emulator.baseUrl() + "/api").build()) {
                measure("vercel", vercel, runs);
            }
            try (DaytonaEmulator emulator = DaytonaEmulator.builder(LocalMachines.using(local)).build();
                 SandboxRunner daytona = DaytonaSandboxRunner.builder().apiKey(DaytonaEmulator.DEFAULT_API_KEY)
                         .apiUrl(emulator.apiUrl()).build()) {
                measure("daytona", daytona, runs);
            }
            try (ModalEmulator emulator = ModalEmulator.builder().runner(local).build();
                 SandboxRunner modal = ModalSandboxRunner.builder().serverUrl(emulator.serverUrl())
                         .tokenId(emulator.tokenId()).tokenSecret(emulator.tokenSecret()).build()) {
                measure("modal", modal, runs);
            }
        }
    }

    private static void measure(String name, SandboxRunner runner, int runs) {
        long[] micros = new long[runs];
        try (Sandbox sandbox = runner.open(SandboxSpec.defaults())) {
            sandbox.exec(Execution.python("pass")); // warm the path once
            for (int i = 0; i < runs; i++) {
                AtomicReference<Instant> first = new AtomicReference<>();
                RunResult r = sandbox.exec(Execution.builder(CODE).budget(Duration.ofSeconds(30))
                        .listener((stream, text) -> first.compareAndSet(null, Instant.now())).build());
                long written = Long.parseLong(r.stdout().strip());
                Instant seen = first.get();
                if (seen == null) {
                    throw new AssertionError(name + ": the listener was never called: " + r);
                }
                long seenNanos = seen.getEpochSecond() * 1_000_000_000L + seen.getNano();
                micros[i] = (seenNanos - written) / 1000;
            }
        }
        long[] s = micros.clone();
        Arrays.sort(s);
        System.out.printf("%s: first byte written -> listener's first call: median %.1f ms (min %.1f, max %.1f, %d runs)%n",
                name, s[s.length / 2] / 1000.0, s[0] / 1000.0, s[s.length - 1] / 1000.0, runs);
    }
}
