package dev.sandbox4j.emulators.campaign;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sandbox4j.api.SandboxRunner;
import dev.sandbox4j.spi.CreateRequest;
import dev.sandbox4j.docker.DockerSandboxRunner;
import dev.sandbox4j.docker.EngineFaultProxy;
import dev.sandbox4j.docker.EngineFaultProxy.Effect;
import dev.sandbox4j.docker.EngineFaultProxy.Op;
import dev.sandbox4j.docker.TestEngine;
import dev.sandbox4j.docker.internal.EngineCheck;
import dev.sandbox4j.emulators.Faults;
import dev.sandbox4j.emulators.Faults.Fault;
import dev.sandbox4j.emulators.Ledger;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.locks.LockSupport;
import java.util.regex.Matcher;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.slf4j.LoggerFactory;

/**
 * The project's fault campaign ({@link Campaign}, as {@code FaultCampaignTest} runs it for the REST
 * adapters and {@code ModalFaultCampaignTest} for Modal) for the Docker runner against the real engine,
 * through {@link EngineFaultProxy} on a Unix socket of its own in front of the engine's (issue 29): every
 * campaign knob (5xx and 429 on create, lost, late and garbled creates, hung lookups, garbled answers, lost
 * exec answers, cut streams, failing removals), random interrupts, eight runs at once, and the proxy's own
 * faults on the start, exec create and start, exec inspect, a one-shot's attach and wait (its code is its
 * container's own process: a lost exec answer is then a start whose answer is lost after the engine started
 * it, a cut stream its attach's), lookups and removals (an answer lost after the
 * engine acted, a drop, a hang past the deadline, garbage, a 5xx; every {@value #PERIOD}th call of each in
 * turn; at the default size each operation and each effect fires, at 300 runs and more every pair). The proxy keeps the emulators' {@link Ledger} from what the engine did, so the campaign's counts
 * (leaks, double runs, secrets, weaker egress) hold as for the others; on top of them, from the engine
 * itself:
 * <ul>
 *   <li>no container or volume with this campaign's owner label is left on the engine after
 *       {@code runner.close()} (bounded wait for teardowns still going on);</li>
 *   <li>no code ran twice: each run's code appends its nonce to a file in a host directory the proxy
 *       bind-mounts into every container, and no nonce is there twice (the file must hold runs, or the
 *       check could not fail).</li>
 * </ul>
 * Runs with the campaign's caller client use a runner whose one-shots are execs in a session's container
 * ({@code oneShotAsContainerProcess(false)}); the others run their code as their container's own process.
 * On an engine without a bridge network (CI's: {@code dockerd --bridge=none}) allow-all runs use the
 * host network, where the runner refuses the campaign's lock-down up front, so the campaign makes its
 * lock-down runs allow-all runs ({@code Campaign.lockDownAccepted}, printed).
 * Default size {@value #RUNS_AT_SCALE_ONE} runs (real containers cost more than an emulator's); the
 * campaign's properties apply: {@code -Dsandbox4j.campaign.scale=10}, {@code -Dsandbox4j.campaign.runs=N},
 * {@code -Dsandbox4j.campaign.seed=N|random}, {@code -Dsandbox4j.campaign.replay=docker:<run>}.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class DockerFaultCampaignTest {
    static final int RUNS_AT_SCALE_ONE = 64;
    static final int PERIOD = 16;
    static final int ATTACH_PERIOD = 6;
    static final int WAIT_PERIOD = 4;
    static final Duration REQUEST_TIMEOUT = Duration.ofSeconds(3);
    /** The proxy's hang: past the request deadline. */
    static final Duration HANG = REQUEST_TIMEOUT.plusMillis(500);
    /**
     * A late create reaches the engine within 1.5 s of the client giving up; the engine then creates in about
     * 2 s at worst here (the slowest is printed, and any create slower than half the window by run id).
     */
    static final Duration LOST_CREATE_WINDOW = Duration.ofSeconds(12);
    static final String SECRET = "docker-campaign-5ecret-0b8f3e1a7c";
    static final String MOUNT = "/campaign";
    private static final Set<Effect> ALL = EnumSet.allOf(Effect.class);
    /** The proxy's own faults per operation; an exec start's stream gets the campaign's knobs, plus these two. */
    static final Map<Op, Set<Effect>> OWN = Map.of(Op.START, ALL, Op.EXEC_CREATE, ALL, Op.EXEC_INSPECT, ALL,
            Op.LIST, ALL, Op.REMOVE, ALL, Op.INSPECT, ALL, Op.EXEC_START, EnumSet.of(Effect.STATUS_5XX, Effect.GARBAGE),
            // a one-shot's calls (its code is its container's process): the attach before the start, the wait after
            Op.ATTACH, ALL, Op.WAIT, ALL);

    private Path dir;
    private Campaign.LogTap logs;
    private DockerSandboxRunner direct;

    @BeforeAll
    void start() throws IOException {
        direct = TestEngine.runner(b -> b); // skipped (failed in CI) without an engine and the image
        dir = Files.createTempDirectory("campaign-docker-");
        logs = Campaign.LogTap.install(List.of(SECRET, Campaign.CANARY_SECRET));
        LoggerFactory.getLogger(DockerFaultCampaignTest.class).info("the log scan must see this: {}", Campaign.CANARY_SECRET);
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
        if (direct != null) {
            direct.close();
        }
        if (dir != null) {
            try (Stream<Path> s = Files.walk(dir)) {
                for (Path p : s.sorted(Comparator.reverseOrder()).toList()) {
                    Files.deleteIfExists(p);
                }
            }
        }
    }

    @Test
    void docker() throws Exception {
        long seed = Seeds.of("docker");
        Path shared = Files.createDirectory(dir.resolve("shared"));
        Files.setPosixFilePermissions(shared, PosixFilePermissions.fromString("rwxrwxrwx")); // the code's uid writes here
        Path ran = shared.resolve("ran");
        String owner = "campaign" + Long.toHexString(seed & 0xffffff) + Long.toHexString(System.nanoTime() & 0xffff);
        Faults faults = new Faults();
        Ledger ledger = new Ledger();
        Path engine = Path.of("/var/run/docker.sock");
        try (EngineFaultProxy proxy = new EngineFaultProxy(dir.resolve("engine.sock"), engine, faults, ledger)) {
            // a one-shot's attach comes in the half of the runs whose runner takes that path (and only past their
            // create), its wait only after its code ended with its stream: rarer, so shorter periods
            proxy.bindIntoEveryCreate(shared, MOUNT).ownFaults(OWN, PERIOD, seed, HANG).period(Op.ATTACH, ATTACH_PERIOD)
                    .period(Op.WAIT, WAIT_PERIOD);
            try {
                // the plain runner runs one-shots as their containers' own process; the caller client's runner runs
                // every code as an exec in a session's container, so both paths meet the faults
                Campaign.campaign(logs, "docker", emulated(proxy, faults, ledger), SECRET, callerClient -> TestEngine.builder()
                        .oneShotAsContainerProcess(!callerClient)
                        .dockerHost("unix://" + proxy.socket()).owner(owner).requestTimeout(REQUEST_TIMEOUT)
                        .teardownTimeout(Duration.ofSeconds(8)).killGrace(Duration.ofSeconds(2))
                        .lostCreateWindow(LOST_CREATE_WINDOW).build(), Campaign.runs(RUNS_AT_SCALE_ONE));
            } finally {
                logs.original.println("  the slowest create took " + proxy.slowestCreateMs() + " ms from its arrival at the proxy"
                        + " to the engine's answer (the lost-create window is " + LOST_CREATE_WINDOW.toMillis() + " ms)");
                proxy.createTimes().forEach((runId, ms) -> {
                    if (ms > LOST_CREATE_WINDOW.toMillis() / 2) {
                        logs.original.println("  a slow create: run id " + runId + " answered by the engine " + ms + " ms after it arrived");
                    }
                });
            }
            logs.original.println("  engine calls through the proxy: " + proxy.calls() + "\n  the proxy's own faults fired: "
                    + proxy.ownFired());
            if (Campaign.REPLAY.isEmpty()) {
                // the container inspect is not on a run's path (attach uses it): armed, not required
                Map<String, Integer> fired = proxy.ownFired();
                List<String> missing = new ArrayList<>();
                Set<Effect> effectsSeen = EnumSet.noneOf(Effect.class);
                OWN.forEach((op, effects) -> {
                    boolean opFired = false;
                    for (Effect e : effects) {
                        int n = fired.getOrDefault(op + "/" + e, 0);
                        if (n > 0) {
                            opFired = true;
                            effectsSeen.add(e);
                        } else if (op != Op.INSPECT && Campaign.runs(RUNS_AT_SCALE_ONE) >= 300) {
                            missing.add(op + "/" + e);
                        }
                    }
                    if (!opFired && op != Op.INSPECT) {
                        missing.add(op + " (no fault at all)");
                    }
                });
                EnumSet.complementOf(EnumSet.copyOf(effectsSeen)).forEach(e -> missing.add("effect " + e));
                assertTrue(missing.isEmpty(), "docker campaign, seed " + seed + ": the proxy's own faults never fired: " + missing);
            }
        }

        // the engine's word: nothing of this campaign is left (a teardown still going on gets a bounded wait)
        List<String> left = EngineCheck.labelled(TestEngine.driver(direct), CreateRequest.OWNER_LABEL, owner);
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (!left.isEmpty() && System.nanoTime() - deadline < 0) {
            LockSupport.parkNanos(Duration.ofMillis(200).toNanos()); // a bounded poll
            left = EngineCheck.labelled(TestEngine.driver(direct), CreateRequest.OWNER_LABEL, owner);
        }
        assertEquals(List.of(), left, "docker campaign, seed " + seed + ": containers or volumes of the campaign left on the engine"
                + " (" + Seeds.replay("docker") + ")");

        // the host file's word: no code ran twice, and the file did see the runs' code
        Map<String, Integer> byNonce = new TreeMap<>();
        List<String> lines = Files.exists(ran) ? Files.readAllLines(ran, StandardCharsets.UTF_8) : List.of();
        for (String line : lines) {
            Matcher m = Campaign.NONCE.matcher(line);
            if (m.find()) {
                byNonce.merge(m.group(), 1, Integer::sum);
            }
        }
        List<String> twice = new ArrayList<>();
        byNonce.forEach((n, c) -> {
            if (c > 1) {
                twice.add(n + " x" + c);
            }
        });
        logs.original.println("  code that ran (nonces in the host file): " + byNonce.size() + " runs, " + twice.size() + " twice");
        // most runs end before their code (the campaign's faults are mostly on create): about one in six to
        // one in ten gets there, so the bar is one per 32 runs, and the count is printed
        int atLeast = Campaign.REPLAY.isEmpty() ? Math.max(1, Campaign.runs(RUNS_AT_SCALE_ONE) / 32) : 1;
        assertTrue(byNonce.size() >= atLeast,
                "docker campaign, seed " + seed + ": the host file holds " + byNonce.size() + " runs' code: the double-run check"
                        + " cannot fail on so few");
        assertEquals(List.of(), twice, "docker campaign, seed " + seed + ": code ran more than once (" + Seeds.replay("docker") + ")");
    }

    private static Campaign.Emulated emulated(EngineFaultProxy proxy, Faults faults, Ledger ledger) {
        return new Campaign.Emulated() {
            public Faults faults() {
                return faults;
            }

            public Ledger ledger() {
                return ledger;
            }

            public int inFlight() {
                return proxy.inFlight();
            }

            public List<String> inFlightRequests() {
                return proxy.inFlightRequests();
            }

            public Set<Fault> knobs() {
                return Set.of(Campaign.CAMPAIGN_FAULTS);
            }

            /** Appends the nonce to the bind-mounted host file (the proof it ran once), then prints it. */
            public String code(String nonce) {
                return "n = '" + nonce + "'\nwith open('" + MOUNT + "/ran', 'a') as f:\n    f.write(n + '\\n')\nprint(n)\n";
            }
        };
    }
}
