package dev.sandbox4j.api.discovery;

import dev.sandbox4j.api.exception.SandboxConfigurationException;
import dev.sandbox4j.api.SandboxRunner;
import dev.sandbox4j.spi.lifecycle.ManagedSandboxRunner;
import dev.sandbox4j.api.SandboxRunnerProvider;
import dev.sandbox4j.spi.lifecycle.ScriptedDriver;
import java.util.Map;

/** A provider configured like a cloud one: it needs SCRIPTED_API_KEY. */
public final class ScriptedProvider implements SandboxRunnerProvider {
    public static final String KEY_VARIABLE = "SCRIPTED_API_KEY";

    @Override
    public String name() {
        return "scripted";
    }

    @Override
    public String artifact() {
        return "dev.sandbox4j:sandbox-scripted-test";
    }

    @Override
    public boolean isConfigured(Map<String, String> env) {
        String key = env.get(KEY_VARIABLE);
        return key != null && !key.isBlank();
    }

    @Override
    public SandboxRunner fromEnv(Map<String, String> env) {
        if (!isConfigured(env)) {
            throw new SandboxConfigurationException(KEY_VARIABLE + " is not set: the scripted provider needs an API key");
        }
        return ManagedSandboxRunner.of(new ScriptedDriver("scripted"));
    }
}
