package dev.sandbox4j.kubernetes.internal;

import dev.sandbox4j.api.LifecycleListener;
import dev.sandbox4j.api.SandboxRunner;
import dev.sandbox4j.api.SandboxRunnerProvider;
import dev.sandbox4j.kubernetes.KubernetesSandboxRunner;
import java.util.Map;

/** Registers the Kubernetes runner with {@code SandboxRunners} (ServiceLoader) as {@code kubernetes}. */
public final class KubernetesSandboxRunnerProvider implements SandboxRunnerProvider {
    @Override
    public String name() {
        return "kubernetes";
    }

    @Override
    public String artifact() {
        return "dev.sandbox4j:sandbox-kubernetes";
    }

    /** Configured only by its own acknowledgement variable: a kubeconfig alone never selects it. */
    @Override
    public boolean isConfigured(Map<String, String> env) {
        return "true".equalsIgnoreCase(String.valueOf(env.get(KubernetesSandboxRunner.NETWORK_POLICY_ENFORCED_VARIABLE)).trim());
    }

    @Override
    public SandboxRunner fromEnv(Map<String, String> env) {
        return KubernetesSandboxRunner.fromEnv(env);
    }

    @Override
    public SandboxRunner fromEnv(Map<String, String> env, LifecycleListener listener) {
        return KubernetesSandboxRunner.builderFromEnv(env).lifecycleListener(listener).build();
    }
}
