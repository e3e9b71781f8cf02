package dev.sandbox4j.emulators.modal;

import dev.sandbox4j.emulators.SweepCheck;
import dev.sandbox4j.local.LocalSandboxRunner;
import dev.sandbox4j.modal.ModalSandboxRunner;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** The orphan sweep through the Modal adapter's real listing (SandboxList by tags) on the emulator. */
class ModalSweepTest {
    @Test
    void aRestartedReplicaSweepsOnlyItsOwnOrphans() throws Exception {
        try (LocalSandboxRunner local = LocalSandboxRunner.builder().maxAddressSpaceMib(2048).build();
                ModalEmulator emulator = ModalEmulator.builder().runner(local).build()) {
            SweepCheck.aRestartedReplicaSweepsOnlyItsOwnOrphans(owner -> ModalSandboxRunner.builder()
                    .serverUrl(emulator.serverUrl()).tokenId(emulator.tokenId()).tokenSecret(emulator.tokenSecret())
                    .retryBaseDelay(Duration.ofMillis(100)).owner(owner).build(), () -> emulator.ledger().liveIds());
        }
    }
}
