package dev.sandbox4j.api.discovery;

import dev.sandbox4j.api.SandboxRunner;
import dev.sandbox4j.spi.lifecycle.ManagedSandboxRunner;
import dev.sandbox4j.api.SandboxRunnerProvider;
import dev.sandbox4j.spi.lifecycle.ScriptedDriver;
import java.util.Map;

/** Stands in for sandbox-local, so tests can show fromEnv() never picks it unasked. */
public final class StandInLocalProvider implements SandboxRunnerProvider {
    @Override
    public String name() {
        return "local";
    }

    @Override
    public String artifact() {
        return "dev.sandbox4j:sandbox-local";
    }

    @Override
    public boolean isConfigured(Map<String, String> env) {
        return false; // never the local runner, per the SPI contract
    }

    @Override
    public SandboxRunner fromEnv(Map<String, String> env) {
        return ManagedSandboxRunner.of(new ScriptedDriver("local"));
    }
}
