package dev.sandbox4j.e2b.internal;

import dev.sandbox4j.api.LifecycleListener;
import dev.sandbox4j.api.SandboxRunner;
import dev.sandbox4j.api.SandboxRunnerProvider;
import dev.sandbox4j.e2b.E2bSandboxRunner;
import java.util.Map;

/** Registers E2B with {@code SandboxRunners} (ServiceLoader). */
public final class E2bSandboxRunnerProvider implements SandboxRunnerProvider {
    @Override
    public String name() {
        return "e2b";
    }

    @Override
    public String artifact() {
        return "dev.sandbox4j:sandbox-e2b";
    }

    @Override
    public boolean isConfigured(Map<String, String> env) {
        String key = env.get(E2bSandboxRunner.API_KEY_VARIABLE);
        return key != null && !key.isBlank();
    }

    @Override
    public SandboxRunner fromEnv(Map<String, String> env) {
        return E2bSandboxRunner.fromEnv(env);
    }

    @Override
    public SandboxRunner fromEnv(Map<String, String> env, LifecycleListener listener) {
        return E2bSandboxRunner.builderFromEnv(env).lifecycleListener(listener).build();
    }
}
