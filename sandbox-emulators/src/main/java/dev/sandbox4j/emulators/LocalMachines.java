package dev.sandbox4j.emulators;

import dev.sandbox4j.local.LocalSandboxRunner;
import java.time.Duration;
import java.util.Map;
import java.util.Objects;

/**
 * Opens {@link LocalMachine}s on one local runner: its own ({@link #create()}, closed with the
 * factory) or the caller's ({@link #using}). Each emulator opens a machine with a lifetime a little past
 * its own clock: the emulator ends a sandbox first, the local clock is the backstop.
 *
 * @since 0.1.0
 */
public final class LocalMachines implements Machine.Factory {
    private final LocalSandboxRunner runner;
    private final boolean owned;

    private LocalMachines(LocalSandboxRunner runner, boolean owned) {
        this.runner = Objects.requireNonNull(runner, "runner");
        this.owned = owned;
    }

    /** {@return a factory with its own local runner, closed with the factory} */
    public static LocalMachines create() {
        return new LocalMachines(LocalSandboxRunner.create(), true);
    }

    /**
     * {@return a factory on a runner the caller owns (and closes); closing the factory leaves it open}
     *
     * @param runner the local runner the machines are opened on
     * @throws NullPointerException when {@code runner} is null
     */
    public static LocalMachines using(LocalSandboxRunner runner) {
        return new LocalMachines(runner, false);
    }

    @Override
    public Machine open(boolean hostNetwork, Map<String, String> env, Duration lifetime) {
        return LocalMachine.open(runner, hostNetwork, env, lifetime);
    }

    /** A local sandbox under {@code egress} (see {@link LocalMachine#open(LocalSandboxRunner, dev.sandbox4j.policy.EgressPolicy, Map, Duration, dev.sandbox4j.policy.Limits)}). */
    @Override
    public Machine open(dev.sandbox4j.policy.EgressPolicy egress, Map<String, String> env, Duration lifetime) {
        return LocalMachine.open(runner, egress, env, lifetime, dev.sandbox4j.policy.Limits.defaults());
    }

    /** {@return the local sandboxes open right now (a second leak count, below the emulator's ledger)} */
    public int openSandboxes() {
        return runner.openSandboxes();
    }

    @Override
    public void close() {
        if (owned) {
            runner.close();
        }
    }
}
