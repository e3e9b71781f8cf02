package dev.sandbox4j.emulators.kubernetes;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sandbox4j.emulators.InstantMachine;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The emulator's REST surface checked with a real client: kubectl applies, gets and deletes a Sandbox,
 * and a SandboxTemplate, SandboxWarmPool and SandboxClaim (the claim adopting the pool's warm Sandbox).
 * Skipped, saying so, where no kubectl is on the PATH (Debian: {@code apt-get install kubernetes-client}).
 */
class KubectlTest {
    static String kubeconfig(String url) {
        return "apiVersion: v1\nkind: Config\nclusters:\n- name: emulator\n  cluster:\n    server: " + url + "\n"
                + "contexts:\n- name: emulator\n  context:\n    cluster: emulator\n    namespace: sandboxes\n    user: nobody\n"
                + "current-context: emulator\nusers:\n- name: nobody\n  user: {}\n";
    }

    private static String kubectl(Path config, String... args) throws IOException, InterruptedException {
        List<String> argv = new ArrayList<>(List.of("kubectl", "--kubeconfig", config.toString(), "--request-timeout=20s"));
        argv.addAll(List.of(args));
        ProcessBuilder pb = new ProcessBuilder(argv).redirectErrorStream(true);
        pb.environment().remove("KUBECONFIG");
        Process p = pb.start();
        if (!p.waitFor(60, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new AssertionError("kubectl " + String.join(" ", args) + " did not finish in 60 s");
        }
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertEquals(0, p.exitValue(), "kubectl " + String.join(" ", args) + ":\n" + out);
        return out;
    }

    private static boolean onPath() {
        for (String dir : System.getenv().getOrDefault("PATH", "").split(":")) {
            if (!dir.isEmpty() && Files.isExecutable(Path.of(dir, "kubectl"))) {
                return true;
            }
        }
        return false;
    }

    @Test
    void kubectlAppliesGetsAndDeletesASandbox(@TempDir Path dir) throws Exception {
        Assumptions.assumeTrue(onPath(), "no kubectl on the PATH (Debian: apt-get install kubernetes-client)");
        Path sandbox = dir.resolve("sandbox.yaml");
        try (var in = KubectlTest.class.getResourceAsStream("/kubernetes/sandbox.yaml")) {
            Files.write(sandbox, in.readAllBytes());
        }
        try (AgentSandboxEmulator e = AgentSandboxEmulator.start(InstantMachine.FACTORY)) {
            Path config = dir.resolve("kubeconfig");
            Files.writeString(config, kubeconfig(e.url()));
            String applied = kubectl(config, "apply", "--validate=false", "-f", sandbox.toString());
            assertTrue(applied.contains("sandbox.agents.x-k8s.io/hello created"), applied);
            String got = kubectl(config, "get", "sandboxes", "-l", "app=kubectl-check", "-o", "name");
            assertEquals("sandbox.agents.x-k8s.io/hello", got.strip());
            String json = kubectl(config, "get", "sandbox", "hello", "-o", "jsonpath={.spec.podTemplate.spec.containers[0].name}");
            assertEquals("main", json.strip());
            String deleted = kubectl(config, "delete", "-f", sandbox.toString());
            assertTrue(deleted.contains("\"hello\" deleted"), deleted);
            assertEquals(0, e.objects("sandboxes"));
        }
    }

    @Test
    void kubectlAppliesGetsAndDeletesTemplatesWarmPoolsAndClaims(@TempDir Path dir) throws Exception {
        Assumptions.assumeTrue(onPath(), "no kubectl on the PATH (Debian: apt-get install kubernetes-client)");
        Path pool = dir.resolve("claim.yaml");
        Path claim = dir.resolve("claim-only.yaml");
        for (Path p : new Path[] {pool, claim}) {
            try (var in = KubectlTest.class.getResourceAsStream("/kubernetes/" + p.getFileName())) {
                Files.write(p, in.readAllBytes());
            }
        }
        try (AgentSandboxEmulator e = AgentSandboxEmulator.start(InstantMachine.FACTORY)) {
            Path config = dir.resolve("kubeconfig");
            Files.writeString(config, kubeconfig(e.url()));
            String applied = kubectl(config, "apply", "--validate=false", "-f", pool.toString());
            assertTrue(applied.contains("sandboxtemplate.extensions.agents.x-k8s.io/hello-template created"), applied);
            assertTrue(applied.contains("sandboxwarmpool.extensions.agents.x-k8s.io/hello-pool created"), applied);
            await(config, "sandboxwarmpool", "hello-pool", "{.status.readyReplicas}", "1");
            String policy = kubectl(config, "get", "networkpolicy", "hello-template-network-policy", "-o",
                    "jsonpath={.spec.policyTypes}");
            assertTrue(policy.contains("Egress"), policy);
            String warm = kubectl(config, "get", "sandboxes", "-l", "agents.x-k8s.io/warm-pool-sandbox", "-o", "name").strip();
            assertTrue(warm.startsWith("sandbox.agents.x-k8s.io/hello-pool-"), warm);
            String claimed = kubectl(config, "apply", "--validate=false", "-f", claim.toString());
            assertTrue(claimed.contains("sandboxclaim.extensions.agents.x-k8s.io/hello-claim created"), claimed);
            await(config, "sandboxclaim", "hello-claim", "{.status.conditions[?(@.type==\"Ready\")].status}", "True");
            // the claim adopted the warm Sandbox: same name, now out of the pool
            String bound = kubectl(config, "get", "sandboxclaim", "hello-claim", "-o", "jsonpath={.status.sandbox.name}").strip();
            assertEquals(warm.substring("sandbox.agents.x-k8s.io/".length()), bound);
            String owner = kubectl(config, "get", "sandbox", bound, "-o", "jsonpath={.metadata.ownerReferences[0].kind}");
            assertEquals("SandboxClaim", owner.strip());
            String got = kubectl(config, "get", "sandboxclaims,sandboxtemplates,swp", "-o", "name");
            assertTrue(got.contains("sandboxclaim.extensions.agents.x-k8s.io/hello-claim"), got);
            String deleted = kubectl(config, "delete", "-f", claim.toString());
            assertTrue(deleted.contains("\"hello-claim\" deleted"), deleted);
            assertEquals(null, e.object("sandboxes", "sandboxes", bound), "the claim's Sandbox went with it");
            kubectl(config, "delete", "-f", pool.toString());
            assertEquals(0, e.objects(), "pool, its Sandboxes, template and its NetworkPolicy all deleted");
        }
    }

    /** Polls with kubectl get (bounded, 60 s) until the jsonpath reads {@code expected}. */
    private static void await(Path config, String kind, String name, String jsonpath, String expected) throws Exception {
        long until = System.nanoTime() + java.time.Duration.ofSeconds(60).toNanos();
        String last;
        do {
            last = kubectl(config, "get", kind, name, "-o", "jsonpath=" + jsonpath).strip();
            if (last.equals(expected)) {
                return;
            }
            Thread.sleep(50);
        } while (System.nanoTime() < until);
        throw new AssertionError(kind + " " + name + " " + jsonpath + " is '" + last + "', not '" + expected + "'");
    }
}
