package dev.sandbox4j.daytona.internal;

import dev.sandbox4j.api.LifecycleListener;
import dev.sandbox4j.api.SandboxRunner;
import dev.sandbox4j.api.SandboxRunnerProvider;
import dev.sandbox4j.daytona.DaytonaSandboxRunner;
import java.util.Map;

/** Lets {@code SandboxRunners.byName("daytona", env)} and the CLI find this module. */
public final class DaytonaSandboxRunnerProvider implements SandboxRunnerProvider {
    @Override
    public String name() {
        return "daytona";
    }

    @Override
    public String artifact() {
        return "dev.sandbox4j:sandbox-daytona";
    }

    @Override
    public boolean isConfigured(Map<String, String> env) {
        String key = env.get(DaytonaSandboxRunner.API_KEY_VARIABLE);
        return key != null && !key.isBlank();
    }

    @Override
    public SandboxRunner fromEnv(Map<String, String> env) {
        return DaytonaSandboxRunner.fromEnv(env);
    }

    @Override
    public SandboxRunner fromEnv(Map<String, String> env, LifecycleListener listener) {
        return DaytonaSandboxRunner.builderFromEnv(env).lifecycleListener(listener).build();
    }
}
