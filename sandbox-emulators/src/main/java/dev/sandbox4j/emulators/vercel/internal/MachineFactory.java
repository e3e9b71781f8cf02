package dev.sandbox4j.emulators.vercel.internal;

import java.time.Duration;
import java.util.Map;

/** Opens the machine for a new session. */
public interface MachineFactory extends AutoCloseable {
    /**
     * @param hostNetwork whether the first command gets the host network
     * @param env the sandbox-level environment from create
     * @param lifetime the session timeout (the machine's own backstop)
     */
    Machine open(boolean hostNetwork, Map<String, String> env, Duration lifetime) throws Exception;

    /** Releases what the factory holds, after the emulator destroyed every machine. */
    @Override
    default void close() {
    }
}
