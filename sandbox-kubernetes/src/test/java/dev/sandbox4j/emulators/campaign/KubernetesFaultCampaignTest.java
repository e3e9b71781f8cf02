package dev.sandbox4j.emulators.campaign;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.sandbox4j.api.SandboxRunner;
import dev.sandbox4j.emulators.Faults;
import dev.sandbox4j.emulators.Faults.Fault;
import dev.sandbox4j.emulators.Ledger;
import dev.sandbox4j.emulators.kubernetes.AgentSandboxEmulator;
import dev.sandbox4j.kubernetes.KubernetesSandboxRunner;
import dev.sandbox4j.local.LocalSandboxRunner;
import io.fabric8.kubernetes.client.Config;
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
import org.slf4j.LoggerFactory;

/**
 * The project's fault campaign ({@link Campaign}, as {@code FaultCampaignTest} runs it for the REST
 * adapters, {@code ModalFaultCampaignTest} for Modal and {@code DockerFaultCampaignTest} for Docker) for
 * the Kubernetes runner against the agent-sandbox emulator, on real local sandboxes (issue 29): every
 * campaign knob (5xx and 429 with {@code Retry-After} on the Sandbox create, lost, late and garbled
 * creates, hung lookups by run-id label, garbled answers, lost exec answers, cut exec streams, failing
 * Sandbox deletes), random interrupts and eight runs at once, with the campaign's counts from the
 * emulator's {@link Ledger} (leaks, double runs, secrets: the kubeconfig's bearer token, weaker egress).
 * After the emulator's close no local sandbox of it is left.
 *
 * <p>The double-run count reads each exec's stdout ({@code AgentSandboxEmulator.printedLedger()}: the
 * campaign's code prints its nonce), not the command received: the JDK's HTTP client re-sends an exec's
 * upgrade (a GET) once when the connection closes before any answer, so a lost exec answer delivers the
 * code twice, and the runner's once-guard runs it in the first start only. How often the pods received
 * a run's code twice is printed beside the summary.
 *
 * <p>The runner has no caller transport client (fabric8's is its own), so both of the campaign's runners
 * are built alike, and it has no live egress update, so the campaign makes no lock-down runs. Default
 * size {@value #RUNS_AT_SCALE_ONE} runs (each run is a NetworkPolicy, a Sandbox and a pod exec over a
 * WebSocket, slower than a REST emulator's); the campaign's properties apply:
 * {@code -Dsandbox4j.campaign.scale=10}, {@code -Dsandbox4j.campaign.runs=N},
 * {@code -Dsandbox4j.campaign.seed=N|random}, {@code -Dsandbox4j.campaign.replay=kubernetes:<run>}.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class KubernetesFaultCampaignTest {
    static final int RUNS_AT_SCALE_ONE = 64;
    static final String TOKEN = "k8s-campaign-bearer-5ecret-4e7a19c3d05b";
    /** Under the campaign's lookup hang (1.5 s), so that a hung lookup outlasts it. */
    static final Duration REQUEST_TIMEOUT = Duration.ofMillis(1000);
    /** A late create is stored within 1.5 s of its request: the window looks for it well past that. */
    static final Duration LOST_CREATE_WINDOW = Duration.ofSeconds(5);

    private Path workRoot;
    private LocalSandboxRunner local;
    private Campaign.LogTap logs;

    @BeforeAll
    void start() throws IOException {
        // the local runner drops to nobody when the JVM is root: its work root must be traversable
        workRoot = Files.createTempDirectory("campaign-k8s-local-");
        Files.setPosixFilePermissions(workRoot, PosixFilePermissions.fromString("rwx--x--x"));
        local = LocalSandboxRunner.builder().workRoot(workRoot).maxAddressSpaceMib(2048).build().verify();
        logs = Campaign.LogTap.install(List.of(TOKEN, Campaign.CANARY_SECRET));
        LoggerFactory.getLogger(KubernetesFaultCampaignTest.class).info("the log scan must see this: {}", Campaign.CANARY_SECRET);
        assertEquals(1, logs.secretLines().size(), "the log tap did not see a line logged through slf4j");
        logs.clear();
        logs.original.println("fault campaign: " + Seeds.describe() + ", " + Campaign.runs(RUNS_AT_SCALE_ONE)
                + " runs (scale " + Campaign.SCALE + ")" + (Campaign.REPLAY.isEmpty() ? "" : ", replaying " + Campaign.REPLAY));
    }

    @AfterAll
    void stop() throws IOException {
        if (logs != null) {
            logs.uninstall();
        }
        if (local != null) {
            WorkRoots.closeAndDelete(local, workRoot);
        }
    }

    /** The runner as a user configures it against a cluster with a bearer token, with the campaign's short deadlines. */
    static SandboxRunner kubernetesRunner(AgentSandboxEmulator emulator) {
        Config config = Config.empty();
        config.setNamespace("sandboxes");
        config.setOauthToken(TOKEN);
        return KubernetesSandboxRunner.builder().config(config).masterUrl(emulator.url()).networkPolicyEnforced(true)
                .requestTimeout(REQUEST_TIMEOUT).readyTimeout(Duration.ofSeconds(5)).readyPoll(Duration.ofMillis(20))
                .teardownTimeout(Duration.ofSeconds(4)).retryBaseDelay(Duration.ofMillis(50))
                .lostCreateWindow(LOST_CREATE_WINDOW).build();
    }

    @Test
    void kubernetes() throws Exception {
        try (AgentSandboxEmulator emulator = AgentSandboxEmulator.start(local)) {
            try {
                Campaign.campaign(logs, "kubernetes", emulated(emulator), TOKEN, callerClient -> kubernetesRunner(emulator),
                        Campaign.runs(RUNS_AT_SCALE_ONE));
            } finally {
                java.util.Map<String, Integer> received = new java.util.TreeMap<>();
                for (Ledger.SandboxRecord s : emulator.ledger().sandboxes()) {
                    for (Ledger.Exec x : s.execs()) {
                        java.util.regex.Matcher m = Campaign.NONCE.matcher(x.code());
                        while (m.find()) {
                            received.merge(m.group(), 1, Integer::sum);
                        }
                    }
                }
                logs.original.println("  the pods received " + received.size() + " runs' code, "
                        + received.values().stream().filter(n -> n > 1).count() + " of them twice or more (each run at most once)");
            }
        }
        // after the emulator's close: no local sandbox (pod) of it is left (the ledger is the emulator's word)
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (local.openSandboxes() > 0 && System.nanoTime() - deadline < 0) {
            LockSupport.parkNanos(Duration.ofMillis(50).toNanos()); // a bounded poll
        }
        assertEquals(0, local.openSandboxes(), "kubernetes campaign, seed " + Seeds.of("kubernetes")
                + ": local sandboxes still open after the emulator's close");
    }

    private static Campaign.Emulated emulated(AgentSandboxEmulator e) {
        Set<Fault> knobs = EnumSet.copyOf(e.knobs());
        knobs.retainAll(Set.of(Campaign.CAMPAIGN_FAULTS));
        return new Campaign.Emulated() {
            public Faults faults() {
                return e.faults();
            }

            /** What the pods printed: the runner's once-guard may receive a run's code twice and run it once. */
            public Ledger ledger() {
                return e.printedLedger();
            }

            public int inFlight() {
                return e.inFlight();
            }

            public List<String> inFlightRequests() {
                return e.inFlightRequests();
            }

            public Set<Fault> knobs() {
                return knobs;
            }
        };
    }
}
