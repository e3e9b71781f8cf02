package dev.sandbox4j.local.internal;

import dev.sandbox4j.api.LifecycleListener;
import dev.sandbox4j.api.SandboxRunner;
import dev.sandbox4j.local.LocalSandboxRunner;
import dev.sandbox4j.api.SandboxRunnerProvider;
import java.util.Map;

/** Registers the local runner as {@code local} for {@code SandboxRunners.local()} and {@code SANDBOX4J_PROVIDER=local}. */
public final class LocalSandboxRunnerProvider implements SandboxRunnerProvider {
    @Override
    public String name() {
        return "local";
    }

    @Override
    public String artifact() {
        return "dev.sandbox4j:sandbox-local";
    }

    /** Never: the local runner needs no credentials and is only used when asked for by name. */
    @Override
    public boolean isConfigured(Map<String, String> env) {
        return false;
    }

    @Override
    public SandboxRunner fromEnv(Map<String, String> env) {
        return LocalSandboxRunner.create();
    }

    @Override
    public boolean embedded() {
        return true;
    }

    /** The local runner after its smoke run (bubblewrap makes a sandbox here), or the reason it cannot. */
    @Override
    public SandboxRunner usableRunner(Map<String, String> env) {
        LocalSandboxRunner r = LocalSandboxRunner.create();
        try {
            return r.verify();
        } catch (RuntimeException e) {
            r.close();
            throw e;
        }
    }

    @Override
    public SandboxRunner fromEnv(Map<String, String> env, LifecycleListener listener) {
        return LocalSandboxRunner.builder().lifecycleListener(listener).build();
    }
}
