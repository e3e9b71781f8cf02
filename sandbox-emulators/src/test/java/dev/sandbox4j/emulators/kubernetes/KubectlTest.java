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
 * The emulator's REST surface checked with a real client: kubectl applies, gets and deletes a Sandbox.
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
}
