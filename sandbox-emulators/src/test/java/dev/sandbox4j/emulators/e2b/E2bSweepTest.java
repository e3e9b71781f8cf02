package dev.sandbox4j.emulators.e2b;

import dev.sandbox4j.e2b.E2bSandboxRunner;
import dev.sandbox4j.emulators.SweepCheck;
import dev.sandbox4j.local.LocalSandboxRunner;
import org.junit.jupiter.api.Test;

class E2bSweepTest {
    @Test
    void aRestartedReplicaSweepsOnlyItsOwnOrphans() throws Exception {
        try (LocalSandboxRunner local = LocalSandboxRunner.builder().maxAddressSpaceMib(2048).build();
                E2bEmulator emulator = E2bEmulator.builder().apiKey(WireTestSupport.KEY).localRunner(local).build()) {
            SweepCheck.aRestartedReplicaSweepsOnlyItsOwnOrphans(owner -> E2bSandboxRunner.builder()
                    .apiKey(WireTestSupport.KEY).apiUrl(emulator.baseUrl()).sandboxUrl(emulator.baseUrl())
                    .owner(owner).build(), () -> emulator.ledger().liveIds());
        }
    }
}
