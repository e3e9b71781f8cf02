package dev.sandbox4j.emulators.daytona.internal;

import java.time.Duration;
import java.util.Map;

/** Opens the machine behind a new emulated sandbox. */
@FunctionalInterface
public interface MachineFactory {
    /**
     * @param hostNetwork whether commands reach the host's network (else no network at all)
     * @param env the sandbox-wide environment from the create request
     * @param lifetime the machine's own backstop: it is destroyed after this long whatever happens
     */
    Machine open(boolean hostNetwork, Map<String, String> env, Duration lifetime) throws Exception;
}
