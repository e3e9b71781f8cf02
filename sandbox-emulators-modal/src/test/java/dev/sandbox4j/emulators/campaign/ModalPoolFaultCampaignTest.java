package dev.sandbox4j.emulators.campaign;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.sandbox4j.api.SandboxRunner;
import dev.sandbox4j.emulators.Faults;
import dev.sandbox4j.emulators.Faults.Fault;
import dev.sandbox4j.emulators.Ledger;
import dev.sandbox4j.emulators.modal.ModalEmulator;
import dev.sandbox4j.local.LocalSandboxRunner;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;

/**
 * The pool campaign ({@link PoolCampaign}) on the Modal adapter against the Modal emulator over gRPC,
 * through the knobs that emulator honours (failed, throttled and lost creates; hung creates and lost
 * attach lookups by its create delay and slow answers).
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(600)
class ModalPoolFaultCampaignTest {
    private Path workRoot;
    private LocalSandboxRunner local;

    @BeforeAll
    void start() throws IOException {
        workRoot = Files.createTempDirectory("poolcampaign-modal-local-");
        Files.setPosixFilePermissions(workRoot, PosixFilePermissions.fromString("rwx--x--x"));
        local = LocalSandboxRunner.builder().workRoot(workRoot).maxAddressSpaceMib(2048).build().verify();
    }

    @AfterAll
    void stop() throws IOException {
        WorkRoots.closeAndDelete(local, workRoot);
    }

    @Test
    void modal() throws Exception {
        try (ModalEmulator emulator = ModalEmulator.builder().token(ModalFaultCampaignTest.TOKEN_ID,
                ModalFaultCampaignTest.TOKEN_SECRET).runner(local).build()) {
            PoolCampaign.campaign("modal", new PoolCampaign.Target() {
                public Faults faults() {
                    return emulator.faults();
                }

                public Ledger ledger() {
                    return emulator.ledger();
                }

                public int inFlight() {
                    return 0; // the gRPC emulator does not count calls in hand; the campaign waits on its ledger
                }

                public Set<Fault> knobs() {
                    return ModalFaultCampaignTest.KNOBS;
                }

                public boolean alterLabel(String id, String key, String value) {
                    return emulator.alterLabel(id, key, value);
                }

                public SandboxRunner runner() {
                    return ModalFaultCampaignTest.modalRunner(emulator);
                }

                public Duration requestTimeout() {
                    return ModalFaultCampaignTest.REQUEST_TIMEOUT;
                }
            });
        }
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (local.openSandboxes() > 0 && System.nanoTime() - deadline < 0) {
            LockSupport.parkNanos(Duration.ofMillis(50).toNanos()); // a bounded poll
        }
        assertEquals(0, local.openSandboxes(), "modal pool campaign: local sandboxes still open after the emulator's close");
    }
}
