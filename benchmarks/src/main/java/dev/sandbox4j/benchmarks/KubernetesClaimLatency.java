package dev.sandbox4j.benchmarks;

import static dev.sandbox4j.benchmarks.Interleaved.check;

import dev.sandbox4j.api.RunRequest;
import dev.sandbox4j.api.SandboxSpec;
import dev.sandbox4j.benchmarks.Interleaved.Case;
import dev.sandbox4j.emulators.kubernetes.AgentSandboxEmulator;
import dev.sandbox4j.kubernetes.KubernetesSandboxRunner;
import dev.sandbox4j.local.LocalSandboxRunner;
import dev.sandbox4j.policy.EgressPolicy;
import io.fabric8.kubernetes.client.Config;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;

/**
 * Time to first result on the claim path against the agent-sandbox emulator: a claim that adopts a warm
 * Sandbox of a SandboxWarmPool against a claim on a pool of 0 replicas (cold: the controller makes the
 * Sandbox and its pod starts), and the Sandbox path (a NetworkPolicy and a Sandbox per run) beside them.
 * Each round waits, untimed, until the warm pool is full again, then times the three in a rotating order.
 * Pods are local bubblewrap sandboxes, so a cold start here is a bubblewrap start, not a cluster's
 * scheduling and image pull: the ratio is a floor of what a warm pool saves. Also counts the API calls of
 * one run on each path. Usage: {@code KubernetesClaimLatency [rounds]} (default 20), after 3 warm-up rounds.
 */
public final class KubernetesClaimLatency {
    private static final HttpClient HTTP = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

    private KubernetesClaimLatency() {
    }

    public static void main(String[] args) throws Exception {
        int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 20;
        try (LocalSandboxRunner local = LocalSandboxRunner.create().verify();
             AgentSandboxEmulator emulator = AgentSandboxEmulator.start(local)) {
            Config config = Config.empty();
            config.setNamespace("bench");
            KubernetesSandboxRunner.Builder base = KubernetesSandboxRunner.builder().config(config).masterUrl(emulator.url())
                    .networkPolicyEnforced(true);
            try (KubernetesSandboxRunner sandboxes = base.build()) {
                post(emulator, "sandboxtemplates", sandboxes.sandboxTemplate("deny", SandboxSpec.defaults()));
            }
            post(emulator, "sandboxwarmpools", pool("warm", 2));
            post(emulator, "sandboxwarmpools", pool("cold", 0));
            try (KubernetesSandboxRunner sandboxes = base.build();
                 KubernetesSandboxRunner warm = KubernetesSandboxRunner.builder().config(config).masterUrl(emulator.url())
                         .networkPolicyEnforced(true).warmPool(EgressPolicy.denyAll(), "warm").build();
                 KubernetesSandboxRunner cold = KubernetesSandboxRunner.builder().config(config).masterUrl(emulator.url())
                         .networkPolicyEnforced(true).warmPool(EgressPolicy.denyAll(), "cold").build()) {
                List<Case> cases = List.of(
                        new Case("claim, warm pool", () -> check(warm.run(RunRequest.python("print(1)")))),
                        new Case("claim, cold (0 replicas)", () -> check(cold.run(RunRequest.python("print(1)")))),
                        new Case("Sandbox + NetworkPolicy", () -> check(sandboxes.run(RunRequest.python("print(1)")))));
                int[] calls = new int[cases.size()];
                for (int i = 0; i < cases.size(); i++) {
                    awaitWarm(emulator);
                    emulator.clearCalls();
                    cases.get(i).body.run();
                    calls[i] = emulator.calls().size();
                }
                for (int i = 0; i < 3; i++) {
                    for (Case c : cases) {
                        awaitWarm(emulator);
                        c.body.run();
                    }
                }
                for (int i = 0; i < rounds; i++) {
                    for (int j = 0; j < cases.size(); j++) {
                        awaitWarm(emulator);
                        Case c = cases.get((i + j) % cases.size());
                        long t0 = System.nanoTime();
                        c.body.run();
                        c.millis.add((System.nanoTime() - t0) / 1e6);
                    }
                }
                System.out.printf(Locale.ROOT, "%d rotating rounds after 3 warm-up rounds; %d CPUs; load %s%n", rounds,
                        Runtime.getRuntime().availableProcessors(), Files.readString(Path.of("/proc/loadavg")).trim());
                System.out.printf(Locale.ROOT, "%-26s %9s %9s %9s %9s %6s%n", "case", "median", "p10", "p90", "min", "calls");
                for (int i = 0; i < cases.size(); i++) {
                    double[] m = cases.get(i).sorted();
                    System.out.printf(Locale.ROOT, "%-26s %7.1f ms %6.1f ms %6.1f ms %6.1f ms %6d%n", cases.get(i).name,
                            Interleaved.percentile(m, 50), Interleaved.percentile(m, 10), Interleaved.percentile(m, 90), m[0],
                            calls[i]);
                }
                System.out.printf(Locale.ROOT, "cold claim / warm claim (medians): %.2f%n", cases.get(1).median() / cases.get(0).median());
            }
        }
    }

    private static String pool(String name, int replicas) {
        return "{\"apiVersion\":\"extensions.agents.x-k8s.io/v1beta1\",\"kind\":\"SandboxWarmPool\",\"metadata\":{\"name\":\""
                + name + "\"},\"spec\":{\"replicas\":" + replicas + ",\"sandboxTemplateRef\":{\"name\":\"deny\"}}}";
    }

    private static void post(AgentSandboxEmulator emulator, String resource, String json) throws Exception {
        HttpResponse<String> r = HTTP.send(HttpRequest.newBuilder(URI.create(emulator.url()
                + "/apis/extensions.agents.x-k8s.io/v1beta1/namespaces/bench/" + resource))
                .POST(HttpRequest.BodyPublishers.ofString(json)).build(), HttpResponse.BodyHandlers.ofString());
        if (r.statusCode() != 201) {
            throw new IllegalStateException(resource + ": " + r.statusCode() + " " + r.body());
        }
    }

    /** Until the warm pool holds 2 Ready Sandboxes again (bounded: 60 s). */
    private static void awaitWarm(AgentSandboxEmulator emulator) throws InterruptedException {
        long until = System.nanoTime() + 60_000_000_000L;
        while (emulator.readyWarm("bench", "warm") < 2) {
            if (System.nanoTime() > until) {
                throw new IllegalStateException("the warm pool did not refill in 60 s");
            }
            Thread.sleep(5);
        }
        // the template's NetworkPolicy is made on the controller's first pass; the pool's readiness follows it
    }
}
