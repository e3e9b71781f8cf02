package dev.sandbox4j.emulators.daytona;

import dev.sandbox4j.emulators.SweepCheck;
import org.junit.jupiter.api.Test;

class DaytonaSweepTest {
    @Test
    void aRestartedReplicaSweepsOnlyItsOwnOrphans() throws Exception {
        try (LocalEmulator emu = new LocalEmulator(0)) {
            SweepCheck.aRestartedReplicaSweepsOnlyItsOwnOrphans(owner -> emu.adapter().owner(owner).build(),
                    () -> emu.emulator.ledger().liveIds());
        }
    }
}
