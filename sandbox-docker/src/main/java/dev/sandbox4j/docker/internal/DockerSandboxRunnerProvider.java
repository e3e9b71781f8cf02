package dev.sandbox4j.docker.internal;

import dev.sandbox4j.api.LifecycleListener;
import dev.sandbox4j.api.SandboxRunner;
import dev.sandbox4j.api.SandboxRunnerProvider;
import dev.sandbox4j.docker.DockerSandboxRunner;
import java.util.Map;

/** Registers the Docker runner with {@code SandboxRunners} (ServiceLoader) as {@code docker}. */
public final class DockerSandboxRunnerProvider implements SandboxRunnerProvider {
    @Override
    public String name() {
        return "docker";
    }

    @Override
    public String artifact() {
        return "dev.sandbox4j:sandbox-docker";
    }

    /** Never: the Docker runner needs no credentials, so it is never "configured" by accident. */
    @Override
    public boolean isConfigured(Map<String, String> env) {
        return false;
    }

    @Override
    public SandboxRunner fromEnv(Map<String, String> env) {
        return DockerSandboxRunner.fromEnv(env);
    }

    @Override
    public SandboxRunner fromEnv(Map<String, String> env, LifecycleListener listener) {
        return DockerSandboxRunner.builderFromEnv(env).lifecycleListener(listener).build();
    }

    @Override
    public boolean embedded() {
        return true;
    }

    /** The Docker runner once its engine answered and holds the image, or the reason it cannot. */
    @Override
    public SandboxRunner usableRunner(Map<String, String> env) {
        DockerSandboxRunner r = DockerSandboxRunner.fromEnv(env);
        try {
            r.verify();
            return r;
        } catch (InterruptedException e) {
            r.close();
            Thread.currentThread().interrupt();
            throw new dev.sandbox4j.api.exception.SandboxInterruptedException("interrupted while reaching the Docker engine");
        } catch (RuntimeException e) {
            r.close();
            throw e;
        }
    }
}
