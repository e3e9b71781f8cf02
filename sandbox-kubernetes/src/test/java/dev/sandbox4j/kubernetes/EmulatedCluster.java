package dev.sandbox4j.kubernetes;

import dev.sandbox4j.emulators.kubernetes.AgentSandboxEmulator;
import dev.sandbox4j.local.LocalSandboxRunner;
import io.fabric8.kubernetes.client.Config;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;

/** The agent-sandbox emulator on real local sandboxes, and runners pointed at it (no kubeconfig read). */
final class EmulatedCluster implements AutoCloseable {
    final LocalSandboxRunner local;
    final AgentSandboxEmulator emulator;

    EmulatedCluster() {
        // 2 GiB of address space is enough for node and keeps the memory-hog case quick
        local = LocalSandboxRunner.builder().maxAddressSpaceMib(2048).build();
        try {
            emulator = AgentSandboxEmulator.start(local);
        } catch (IOException e) {
            local.close();
            throw new UncheckedIOException(e);
        }
    }

    KubernetesSandboxRunner.Builder runner() {
        Config config = Config.empty();
        config.setNamespace("sandboxes");
        return KubernetesSandboxRunner.builder().config(config).masterUrl(emulator.url()).networkPolicyEnforced(true)
                .readyTimeout(Duration.ofSeconds(30)).requestTimeout(Duration.ofSeconds(20))
                .readyPoll(Duration.ofMillis(20)); // a local sandbox starts in tens of milliseconds, not a pod's seconds
    }

    /**
     * The claim path: a template for deny-all and one for allow-all (as the runner renders them), a warm
     * pool of each with these replicas, and the runner's builder with both pools. Returns once the pools
     * are full (bounded).
     */
    KubernetesSandboxRunner.Builder claimRunner(int denyReplicas, int allowReplicas) {
        try (KubernetesSandboxRunner renderer = runner().build()) {
            apply("sandboxtemplates", renderer.sandboxTemplate("deny", dev.sandbox4j.api.SandboxSpec.defaults()));
            apply("sandboxtemplates", renderer.sandboxTemplate("allow", dev.sandbox4j.api.SandboxSpec.builder()
                    .egress(dev.sandbox4j.policy.EgressPolicy.allowAll()).build()));
        }
        apply("sandboxwarmpools", pool("deny-pool", "deny", denyReplicas));
        apply("sandboxwarmpools", pool("allow-pool", "allow", allowReplicas));
        awaitWarm("deny-pool", denyReplicas);
        awaitWarm("allow-pool", allowReplicas);
        return runner().warmPool(dev.sandbox4j.policy.EgressPolicy.denyAll(), "deny-pool")
                .warmPool(dev.sandbox4j.policy.EgressPolicy.allowAll(), "allow-pool");
    }

    static String pool(String name, String template, int replicas) {
        return "{\"apiVersion\":\"extensions.agents.x-k8s.io/v1beta1\",\"kind\":\"SandboxWarmPool\",\"metadata\":{\"name\":\""
                + name + "\"},\"spec\":{\"replicas\":" + replicas + ",\"sandboxTemplateRef\":{\"name\":\"" + template + "\"}}}";
    }

    /** Waits (bounded, 60 s) until the pool reports this many Ready Sandboxes. */
    void awaitWarm(String pool, int ready) {
        long until = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        while (emulator.readyWarm("sandboxes", pool) < ready) {
            if (System.nanoTime() > until) {
                throw new AssertionError("pool " + pool + " has " + emulator.readyWarm("sandboxes", pool) + " ready, not " + ready);
            }
            try {
                Thread.sleep(10);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError(e);
            }
        }
    }

    private static final java.net.http.HttpClient HTTP = java.net.http.HttpClient.newBuilder()
            .version(java.net.http.HttpClient.Version.HTTP_1_1).build();

    /** POSTs an object to the emulator as a client would (status 201 expected). */
    void apply(String resource, String json) {
        send("POST", resource, "", json, 201);
    }

    /** DELETEs an object (status 200 expected). */
    void delete(String resource, String name) {
        send("DELETE", resource, "/" + name, null, 200);
    }

    private void send(String method, String resource, String suffix, String body, int expected) {
        String group = resource.equals("networkpolicies") ? "networking.k8s.io/v1" : resource.equals("sandboxes")
                ? "agents.x-k8s.io/v1beta1" : "extensions.agents.x-k8s.io/v1beta1";
        java.net.URI uri = java.net.URI.create(emulator.url() + "/apis/" + group + "/namespaces/sandboxes/" + resource + suffix);
        try {
            java.net.http.HttpResponse<String> r = HTTP.send(java.net.http.HttpRequest.newBuilder(uri)
                    .method(method, body == null ? java.net.http.HttpRequest.BodyPublishers.noBody()
                            : java.net.http.HttpRequest.BodyPublishers.ofString(body)).build(),
                    java.net.http.HttpResponse.BodyHandlers.ofString());
            if (r.statusCode() != expected) {
                throw new AssertionError(method + " " + uri + ": " + r.statusCode() + " " + r.body());
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }

    /** On the claim path: what clients left, pools and templates aside. */
    long claimLeaks() {
        return emulator.leaksOutsidePools();
    }

    /** Pods running, objects stored, local sandboxes open: zero when nothing leaked. */
    long leaks() {
        return emulator.runningPods() + emulator.objects() + local.openSandboxes();
    }

    @Override
    public void close() {
        emulator.close();
        local.close();
    }
}
