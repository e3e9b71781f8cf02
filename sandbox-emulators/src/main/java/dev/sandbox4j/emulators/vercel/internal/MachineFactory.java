package dev.sandbox4j.emulators.vercel.internal;

import java.time.Duration;
import java.util.Map;

/** Opens the machine for a new session. */
@FunctionalInterface
public interface MachineFactory {
    /**
     * @param hostNetwork whether the first command gets the host network
     * @param env the sandbox-level environment from create
     * @param lifetime the session timeout (the machine's own backstop)
     */
    Machine open(boolean hostNetwork, Map<String, String> env, Duration lifetime) throws Exception;
}
