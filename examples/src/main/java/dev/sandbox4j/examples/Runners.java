package dev.sandbox4j.examples;

import dev.sandbox4j.api.SandboxRunner;
import dev.sandbox4j.api.SandboxRunners;

/** How the examples pick a runner: the local one unless {@code SANDBOX4J_PROVIDER} names another. */
public final class Runners {
    private Runners() {
    }

    /**
     * The runner named by {@code SANDBOX4J_PROVIDER} (configured from that provider's own variables),
     * or the local bubblewrap runner when it is unset. The choice of local is the application's, made
     * here on purpose: {@link SandboxRunners#fromEnv()} itself never falls back to it.
     */
    public static SandboxRunner fromEnvOrLocal() {
        String provider = System.getenv(SandboxRunners.PROVIDER_VARIABLE);
        return provider == null || provider.isBlank() ? SandboxRunners.local() : SandboxRunners.fromEnv();
    }
}
