package dev.sandbox4j.api.discovery;

import dev.sandbox4j.api.SandboxRunner;
import dev.sandbox4j.spi.lifecycle.ManagedSandboxRunner;
import dev.sandbox4j.api.SandboxRunnerProvider;
import dev.sandbox4j.spi.lifecycle.ScriptedDriver;
import java.util.Map;

/** One of two modules claiming the same provider name. */
public final class TwinAProvider implements SandboxRunnerProvider {
    @Override
    public String name() {
        return "twin";
    }

    @Override
    public String artifact() {
        return "dev.sandbox4j:sandbox-twin-a";
    }

    @Override
    public boolean isConfigured(Map<String, String> env) {
        return false;
    }

    @Override
    public SandboxRunner fromEnv(Map<String, String> env) {
        return ManagedSandboxRunner.of(new ScriptedDriver("twin"));
    }
}
