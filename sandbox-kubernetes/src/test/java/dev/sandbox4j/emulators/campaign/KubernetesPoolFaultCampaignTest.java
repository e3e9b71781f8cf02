package dev.sandbox4j.emulators.campaign;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.sandbox4j.api.SandboxRunner;
import dev.sandbox4j.emulators.Faults;
import dev.sandbox4j.emulators.Faults.Fault;
import dev.sandbox4j.emulators.Ledger;
import dev.sandbox4j.emulators.kubernetes.AgentSandboxEmulator;
import dev.sandbox4j.local.LocalSandboxRunner;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;

/**
 * The pool campaign ({@link PoolCampaign}, as {@code PoolFaultCampaignTest} runs it for the REST adapters
 * and {@code ModalPoolFaultCampaignTest} for Modal) for the Kubernetes runner under a {@code WarmPoolRunner},
 * against the agent-sandbox emulator on real local sandboxes (issue 29), with the runner as
 * {@link KubernetesFaultCampaignTest} builds it (its short client deadlines): refills that meet every create
 * knob the emulator honours (5xx, 429 with {@code Retry-After}, lost, late and garbled Sandbox creates, a
 * lost create whose lookup by run-id label hangs) and hung creates (the emulator's create delay past the
 * client's deadline), pooled sandboxes deleted behind the pool's back, pools closed with slow and hung
 * creates in flight, and attach after the Sandbox was deleted, after its policy label was changed on the
 * Sandbox object ({@code AgentSandboxEmulator.alterLabel}), and with its lookup held past the client's
 * deadline (the emulator's answer delay) or garbled. The counts are from the emulator's {@link Ledger} of
 * the commands the pods received: every pooled Sandbox got at most one run's code and one exec, no code
 * reached two, none is live after every runner's close; and after the emulator's close no local sandbox
 * (pod) of it is left. The seed is {@code Seeds.of("kubernetes")}, printed with the counts; the pool
 * campaign's properties apply ({@code -Dsandbox4j.poolcampaign.rounds}, {@code -Dsandbox4j.campaign.scale},
 * {@code -Dsandbox4j.campaign.seed=N|random}).
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(600)
class KubernetesPoolFaultCampaignTest {
    private Path workRoot;
    private LocalSandboxRunner local;

    @BeforeAll
    void start() throws IOException {
        // the local runner drops to nobody when the JVM is root: its work root must be traversable
        workRoot = Files.createTempDirectory("poolcampaign-k8s-local-");
        Files.setPosixFilePermissions(workRoot, PosixFilePermissions.fromString("rwx--x--x"));
        local = LocalSandboxRunner.builder().workRoot(workRoot).maxAddressSpaceMib(2048).build().verify();
        System.out.println("pool campaign: " + Seeds.describe());
    }

    @AfterAll
    void stop() throws IOException {
        if (local != null) {
            WorkRoots.closeAndDelete(local, workRoot);
        }
    }

    @Test
    void kubernetes() throws Exception {
        try (AgentSandboxEmulator emulator = AgentSandboxEmulator.start(local)) {
            Set<Fault> knobs = EnumSet.copyOf(emulator.knobs());
            knobs.retainAll(Set.of(Campaign.CAMPAIGN_FAULTS));
            List<String> notRun = PoolCampaign.campaign("kubernetes", new PoolCampaign.Target() {
                public Faults faults() {
                    return emulator.faults();
                }

                /** The commands the pods received (a run's code is an argument of its exec: the nonce is there). */
                public Ledger ledger() {
                    return emulator.ledger();
                }

                public int inFlight() {
                    return emulator.inFlight();
                }

                public Set<Fault> knobs() {
                    return knobs;
                }

                public boolean alterLabel(String id, String key, String value) {
                    return emulator.alterLabel(id, key, value);
                }

                public SandboxRunner runner() {
                    return KubernetesFaultCampaignTest.kubernetesRunner(emulator);
                }

                public Duration requestTimeout() {
                    return KubernetesFaultCampaignTest.REQUEST_TIMEOUT;
                }
            });
            assertEquals(List.of(), notRun, "kubernetes pool campaign: every case runs on the emulator");
        }
        // after the emulator's close: no local sandbox (pod) of it is left (the ledger is the emulator's word)
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (local.openSandboxes() > 0 && System.nanoTime() - deadline < 0) {
            LockSupport.parkNanos(Duration.ofMillis(50).toNanos()); // a bounded poll
        }
        assertEquals(0, local.openSandboxes(), "kubernetes pool campaign, seed " + Seeds.of("kubernetes")
                + ": local sandboxes still open after the emulator's close");
    }
}
