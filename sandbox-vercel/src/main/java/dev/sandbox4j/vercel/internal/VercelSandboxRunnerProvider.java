package dev.sandbox4j.vercel.internal;

import dev.sandbox4j.api.LifecycleListener;
import dev.sandbox4j.api.SandboxRunner;
import dev.sandbox4j.api.SandboxRunnerProvider;
import dev.sandbox4j.vercel.VercelSandboxRunner;
import java.util.Map;

/** Lets {@code SandboxRunners.byName("vercel", env)} and the CLI find this module. */
public final class VercelSandboxRunnerProvider implements SandboxRunnerProvider {
    @Override
    public String name() {
        return VercelDriver.PROVIDER;
    }

    @Override
    public String artifact() {
        return "dev.sandbox4j:sandbox-vercel";
    }

    @Override
    public boolean isConfigured(Map<String, String> env) {
        return present(env.get(VercelCredentials.TOKEN)) || present(env.get(VercelCredentials.OIDC_TOKEN));
    }

    @Override
    public SandboxRunner fromEnv(Map<String, String> env) {
        return VercelSandboxRunner.fromEnv(env);
    }

    private static boolean present(String s) {
        return s != null && !s.isBlank();
    }

    @Override
    public SandboxRunner fromEnv(Map<String, String> env, LifecycleListener listener) {
        return VercelSandboxRunner.builderFromEnv(env).lifecycleListener(listener).build();
    }
}
