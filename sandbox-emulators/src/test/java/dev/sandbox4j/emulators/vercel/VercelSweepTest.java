package dev.sandbox4j.emulators.vercel;

import dev.sandbox4j.emulators.SweepCheck;
import dev.sandbox4j.emulators.LocalMachines;
import dev.sandbox4j.local.LocalSandboxRunner;
import dev.sandbox4j.vercel.VercelSandboxRunner;
import org.junit.jupiter.api.Test;

class VercelSweepTest {
    @Test
    void aRestartedReplicaSweepsOnlyItsOwnOrphans() throws Exception {
        try (LocalSandboxRunner local = LocalSandboxRunner.builder().maxAddressSpaceMib(2048).build();
                VercelEmulator emulator = VercelEmulator.builder().token("sweep-token-1f2e3d").teamId("team_sweep")
                        .projectId("prj_sweep").machines(LocalMachines.using(local)).build()) {
            SweepCheck.aRestartedReplicaSweepsOnlyItsOwnOrphans(owner -> VercelSandboxRunner.builder()
                    .token("sweep-token-1f2e3d").teamId("team_sweep").projectId("prj_sweep")
                    .baseUrl(emulator.baseUrl() + "/api").owner(owner).build(), () -> emulator.ledger().liveIds());
        }
    }
}
