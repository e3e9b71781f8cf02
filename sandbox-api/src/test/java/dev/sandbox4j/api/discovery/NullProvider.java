package dev.sandbox4j.api.discovery;

import dev.sandbox4j.api.SandboxRunner;
import dev.sandbox4j.api.SandboxRunnerProvider;
import java.util.Map;

/** A faulty provider whose fromEnv returns nothing. */
public final class NullProvider implements SandboxRunnerProvider {
    @Override
    public String name() {
        return "nothing";
    }

    @Override
    public String artifact() {
        return "dev.sandbox4j:sandbox-nothing";
    }

    @Override
    public boolean isConfigured(Map<String, String> env) {
        return false;
    }

    @Override
    public SandboxRunner fromEnv(Map<String, String> env) {
        return null;
    }
}
