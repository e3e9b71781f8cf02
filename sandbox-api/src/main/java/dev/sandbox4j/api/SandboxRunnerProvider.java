package dev.sandbox4j.api;

import dev.sandbox4j.api.LifecycleListener;
import dev.sandbox4j.api.exception.SandboxConfigurationException;
import dev.sandbox4j.api.SandboxRunner;
import java.util.Map;

/**
 * Lets {@code SandboxRunners} and the CLI find a provider module on the classpath through
 * {@link java.util.ServiceLoader}. Each provider module lists its implementation in
 * {@code META-INF/services/dev.sandbox4j.api.SandboxRunnerProvider}.
 *
 * @since 0.1.0
 */
public interface SandboxRunnerProvider {
    /** {@return the provider's short name, e.g. {@code e2b}, as {@code SANDBOX4J_PROVIDER} takes it} */
    String name();

    /** {@return the Maven artifact that brings this provider, e.g. {@code dev.sandbox4j:sandbox-e2b}} */
    String artifact();

    /**
     * {@return true when the environment holds this provider's credentials (never for the local runner)}
     *
     * @param env the environment to read
     */
    boolean isConfigured(Map<String, String> env);

    /**
     * Builds a runner from the provider's own environment variable names.
     *
     * @param env the environment to read, as the provider's documented variables
     * @return the runner
     * @throws dev.sandbox4j.api.exception.SandboxConfigurationException naming the variable that is missing
     */
    SandboxRunner fromEnv(Map<String, String> env);

    /**
     * Whether this runner runs code on this machine and needs no account (the local and Docker runners),
     * so {@code SandboxRunners.auto()} may choose it. Default false.
     *
     * @return true for an embedded runner
     * @since 0.1.0
     */
    default boolean embedded() {
        return false;
    }

    /**
     * For an {@link #embedded()} runner: builds it from {@code env} and checks that it can run code here
     * now (bubblewrap works, the engine answers and holds the image).
     *
     * @param env the environment to read
     * @return a runner that can run code here
     * @throws dev.sandbox4j.api.exception.SandboxConfigurationException saying what to install or start when it cannot
     * @throws UnsupportedOperationException for a runner that is not embedded
     * @since 0.1.0
     */
    default SandboxRunner usableRunner(Map<String, String> env) {
        throw new UnsupportedOperationException(name() + " is not an embedded runner");
    }

    /**
     * As {@link #fromEnv(Map)}, with a listener hearing the runner's lifecycle (metrics, traces).
     * Provider modules of this project implement it; the default accepts only
     * {@link LifecycleListener#NONE}, so a listener is never dropped without a word.
     *
     * @param env      the environment to read the provider's own variables from
     * @param listener hears every create, exec, teardown and suspected leak
     * @return the runner
     * @throws dev.sandbox4j.api.exception.SandboxConfigurationException naming the variable that is missing, or
     *         saying this provider takes no listener
     */
    default SandboxRunner fromEnv(Map<String, String> env, LifecycleListener listener) {
        if (listener == LifecycleListener.NONE) {
            return fromEnv(env);
        }
        throw new SandboxConfigurationException("provider '" + name() + "' (" + getClass().getName()
                + ") does not take a lifecycle listener; build its runner with its builder instead");
    }
}
