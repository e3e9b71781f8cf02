package dev.sandbox4j.emulators.campaign;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.sandbox4j.api.SandboxRunner;
import dev.sandbox4j.emulators.Faults;
import dev.sandbox4j.emulators.Faults.Fault;
import dev.sandbox4j.emulators.Ledger;
import dev.sandbox4j.emulators.modal.ModalEmulator;
import dev.sandbox4j.local.LocalSandboxRunner;
import dev.sandbox4j.modal.ModalSandboxRunner;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.slf4j.LoggerFactory;

/**
 * The project's fault campaign ({@link Campaign}, as {@code FaultCampaignTest} runs it for the REST
 * adapters) for the Modal adapter against the Modal emulator over gRPC (issue 29), through the knobs
 * that emulator honours: failed and throttled creates, lost create answers, dropped stdio streams and
 * failing terminates (it has no late-create, hung-lookup, garble or lost-exec knob; their share of the
 * runs goes to the others). Same counts, same seed and scale properties; the adapter has no caller
 * transport client, so both runners are the adapter's own.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ModalFaultCampaignTest {
    static final String TOKEN_ID = "ak-campaign";
    static final String TOKEN_SECRET = "as-campaign5ecret0123456789abcdef";
    static final Set<Fault> KNOBS = Set.of(Fault.FAIL_CREATE, Fault.RATE_LIMIT_CREATE, Fault.LOSE_CREATE_RESPONSE,
            Fault.DROP_STREAM, Fault.FAIL_TEARDOWN);

    private Path workRoot;
    private LocalSandboxRunner local;
    private Campaign.LogTap logs;

    @BeforeAll
    void start() throws IOException {
        workRoot = Files.createTempDirectory("campaign-modal-local-");
        Files.setPosixFilePermissions(workRoot, PosixFilePermissions.fromString("rwx--x--x"));
        local = LocalSandboxRunner.builder().workRoot(workRoot).maxAddressSpaceMib(2048).build().verify();
        logs = Campaign.LogTap.install(List.of(TOKEN_SECRET, Campaign.CANARY_SECRET));
        LoggerFactory.getLogger(ModalFaultCampaignTest.class).info("the log scan must see this: {}", Campaign.CANARY_SECRET);
        assertEquals(1, logs.secretLines().size(), "the log tap did not see a line logged through slf4j");
        logs.clear();
        logs.original.println("fault campaign: " + Seeds.describe() + ", " + Campaign.RUNS + " runs (scale "
                + Campaign.SCALE + ")" + (Campaign.REPLAY.isEmpty() ? "" : ", replaying " + Campaign.REPLAY));
    }

    @AfterAll
    void stop() throws IOException {
        logs.uninstall();
        WorkRoots.closeAndDelete(local, workRoot);
    }

    static final Duration REQUEST_TIMEOUT = Duration.ofSeconds(2);

    /** The Modal adapter with the campaign's short deadlines. */
    static SandboxRunner modalRunner(ModalEmulator emulator) {
        return ModalSandboxRunner.builder().serverUrl(emulator.serverUrl()).tokenId(TOKEN_ID).tokenSecret(TOKEN_SECRET)
                .requestTimeout(REQUEST_TIMEOUT).teardownTimeout(Duration.ofSeconds(4))
                .retryBaseDelay(Duration.ofMillis(50)).execGrace(Duration.ofSeconds(2))
                .lostCreateWindow(Duration.ofSeconds(5)).build();
    }

    @Test
    void modal() throws Exception {
        try (ModalEmulator emulator = ModalEmulator.builder().token(TOKEN_ID, TOKEN_SECRET).runner(local).build()) {
            Campaign.campaign(logs, "modal", emulated(emulator), TOKEN_SECRET, callerClient -> modalRunner(emulator));
        }
        // after the emulator's close: no local sandbox of it is left (the ledger is the emulator's word)
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (local.openSandboxes() > 0 && System.nanoTime() - deadline < 0) {
            LockSupport.parkNanos(Duration.ofMillis(50).toNanos()); // a bounded poll
        }
        assertEquals(0, local.openSandboxes(), "modal campaign, seed " + Seeds.of("modal")
                + ": local sandboxes still open after the emulator's close");
    }

    private static Campaign.Emulated emulated(ModalEmulator e) {
        return new Campaign.Emulated() {
            public Faults faults() {
                return e.faults();
            }

            public Ledger ledger() {
                return e.ledger();
            }

            public int inFlight() {
                return 0; // the gRPC emulator does not count calls in hand; it has no late create to wait for
            }

            public List<String> inFlightRequests() {
                return List.of();
            }

            public Set<Fault> knobs() {
                return KNOBS;
            }
        };
    }
}
