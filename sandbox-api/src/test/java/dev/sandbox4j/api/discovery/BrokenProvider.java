package dev.sandbox4j.api.discovery;

import dev.sandbox4j.api.SandboxRunner;
import dev.sandbox4j.api.SandboxRunnerProvider;
import java.util.Map;

/** A provider module that cannot even be instantiated (a missing dependency, say). */
public final class BrokenProvider implements SandboxRunnerProvider {
    public BrokenProvider() {
        throw new IllegalStateException("broken provider: secret-in-cause-xyz");
    }

    @Override
    public String name() {
        return "broken";
    }

    @Override
    public String artifact() {
        return "dev.sandbox4j:sandbox-broken";
    }

    @Override
    public boolean isConfigured(Map<String, String> env) {
        return true;
    }

    @Override
    public SandboxRunner fromEnv(Map<String, String> env) {
        throw new AssertionError("never instantiated");
    }
}
