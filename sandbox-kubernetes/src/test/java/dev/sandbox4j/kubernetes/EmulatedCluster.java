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
                .readyTimeout(Duration.ofSeconds(30)).requestTimeout(Duration.ofSeconds(20));
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
