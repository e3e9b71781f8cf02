package dev.sandbox4j.emulators.daytona;

import dev.sandbox4j.api.SandboxRunner;
import dev.sandbox4j.tck.ListCanary;
import dev.sandbox4j.tck.SandboxRunnerContract;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.Optional;
import java.util.OptionalLong;
import org.junit.jupiter.api.AfterAll;

/**
 * The contract suite with our Daytona adapter against the emulator (each sandbox a local bubblewrap
 * sandbox). New sandboxes answer {@code starting} once, so every open polls. The canary's control is
 * allow-all (the default); the leak count is the emulator's live sandboxes plus open local ones. The
 * domain list goes on to the local runner's egress proxy, set up for the list canary.
 */
class DaytonaEmulatorContractTest extends SandboxRunnerContract {
    private LocalEmulator env;

    @Override
    protected SandboxRunner createRunner() {
        try {
            env = new LocalEmulator(1, ListCanary.shared());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return env.adapter().build();
    }

    @Override
    public Optional<ListCanary> listCanary() {
        return Optional.of(ListCanary.shared());
    }

    /** A live update from allow-all to a list switches the running local sandbox to its egress proxy. */
    @org.junit.jupiter.api.Test
    void aLockDownToADomainListGoesThroughTheProxy() throws Exception {
        dev.sandbox4j.emulators.ListLockDown.check(ListCanary.shared(), this::run);
    }

    @Override
    public OptionalLong liveResources() {
        return OptionalLong.of(env.live());
    }

    @AfterAll
    void stopEmulator() throws IOException {
        if (env != null) {
            env.close();
        }
    }
}
