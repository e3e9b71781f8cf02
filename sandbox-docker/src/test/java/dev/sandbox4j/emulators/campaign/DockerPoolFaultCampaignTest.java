package dev.sandbox4j.emulators.campaign;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.sandbox4j.api.SandboxRunner;
import dev.sandbox4j.docker.DockerSandboxRunner;
import dev.sandbox4j.docker.EngineFaultProxy;
import dev.sandbox4j.docker.TestEngine;
import dev.sandbox4j.docker.internal.EngineCheck;
import dev.sandbox4j.emulators.Faults;
import dev.sandbox4j.emulators.Faults.Fault;
import dev.sandbox4j.emulators.Ledger;
import dev.sandbox4j.spi.CreateRequest;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.Channels;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
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
 * and {@code ModalPoolFaultCampaignTest} for Modal) for the Docker runner under a {@code WarmPoolRunner},
 * against the real engine through {@link EngineFaultProxy} (issue 29), which keeps the emulators'
 * {@link Ledger} from what the engine did and applies the campaign's knobs: refills that meet 5xx and 429
 * creates, lost, late and garbled creates, a lost create whose lookup hangs, and hung creates (the proxy's
 * create delay past the client's deadline); pooled containers removed behind the pool's back; pools closed
 * with slow and hung creates in flight; attach after the container was removed and with its inspect held
 * past the client's deadline (the proxy's answer delay) or garbled. From the ledger: every pooled
 * container got at most one run's code and one exec, no code reached two, none is live after every
 * runner's close; and from the engine itself, no container or volume with this campaign's owner label is
 * left (bounded wait).
 *
 * <p>Not run here, and reported so ({@code NOT RUN} in the printed line, asserted below): attach after the
 * policy label changed. A Docker container's labels are fixed at its create: the engine's only update
 * call ({@code POST /containers/{id}/update}) takes resources and the restart policy. {@link #alterLabel}
 * tries it anyway on the engine and reads the labels back, so the case would run (and this test fail on
 * its not-run assertion) on an engine that did change them.
 *
 * <p>The ledger's execs are those of code ({@code EngineFaultProxy.supervisorExecsApart}): the runner's own
 * execs as its supervisor (after each exec, a check that no process of the code's uid is left; the detached
 * mark) are counted apart, printed, and checked to carry no run's code. Its sandbox ids are container names,
 * as the runner hands them out and attaches by ({@link #byName}).
 *
 * <p>Real containers: the pool campaign's minimum of one round per create fault (7 rounds), with a 1.5 s
 * client deadline ({@link #REQUEST_TIMEOUT}); the seed is {@code Seeds.of("docker")}, printed with the counts,
 * and the pool campaign's properties apply ({@code -Dsandbox4j.poolcampaign.rounds},
 * {@code -Dsandbox4j.campaign.scale}, {@code -Dsandbox4j.campaign.seed=N|random}).
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(600)
class DockerPoolFaultCampaignTest {
    static final Path ENGINE = Path.of("/var/run/docker.sock");
    /**
     * The client's deadline per engine call: shorter than the Docker campaign's 3 s (the pool campaign's holds
     * and hung creates are this plus 400 ms, several per run), still well above a create's answer here (the
     * slowest is printed); a slower one is an ambiguous create, which the runner resolves as any other.
     */
    static final Duration REQUEST_TIMEOUT = Duration.ofMillis(1500);
    /** The proxy's hung lookup: past the deadline. */
    static final Duration HANG = REQUEST_TIMEOUT.plusMillis(500);
    /** A late create reaches the engine within 1.5 s of the client giving up; the engine creates in well under 2 s. */
    static final Duration LOST_CREATE_WINDOW = Duration.ofSeconds(6);
    static final String RELABEL_IMPOSSIBLE = "a Docker container's labels are fixed at its create (the engine's"
            + " POST /containers/{id}/update takes resources and the restart policy only: tried, answered 2xx, labels read back"
            + " unchanged)";
    private static final ObjectMapper JSON = new ObjectMapper();

    private Path dir;
    private DockerSandboxRunner direct;

    @BeforeAll
    void start() throws IOException {
        direct = TestEngine.runner(b -> b); // skipped (failed in CI) without an engine and the image
        dir = Files.createTempDirectory("poolcampaign-docker-");
        System.out.println("pool campaign: " + Seeds.describe());
    }

    @AfterAll
    void stop() throws IOException {
        if (direct != null) {
            direct.close();
        }
        if (dir != null) {
            Files.deleteIfExists(dir.resolve("engine.sock"));
            Files.deleteIfExists(dir);
        }
    }

    @Test
    void docker() throws Exception {
        long seed = Seeds.of("docker");
        String owner = "poolcmp" + Long.toHexString(seed & 0xffffff) + Long.toHexString(System.nanoTime() & 0xffff);
        Faults faults = new Faults();
        Ledger ledger = new Ledger();
        Ledger supervisor = new Ledger();
        List<String> notRun;
        try (EngineFaultProxy proxy = new EngineFaultProxy(dir.resolve("engine.sock"), ENGINE, faults, ledger)) {
            proxy.supervisorExecsApart(supervisor).hang(HANG);
          try {
            notRun = PoolCampaign.campaign("docker", new PoolCampaign.Target() {
                public Faults faults() {
                    return faults;
                }

                /** The execs of code, by container name (the sandbox ids the runner hands out and attaches by). */
                public Ledger ledger() {
                    return byName(ledger);
                }

                public int inFlight() {
                    return proxy.inFlight();
                }

                public Set<Fault> knobs() {
                    return Set.of(Campaign.CAMPAIGN_FAULTS);
                }

                public boolean alterLabel(String id, String key, String value) {
                    return DockerPoolFaultCampaignTest.alterLabel(id, key, value);
                }

                public String relabelImpossible() {
                    return RELABEL_IMPOSSIBLE;
                }

                public SandboxRunner runner() {
                    return TestEngine.builder().dockerHost("unix://" + proxy.socket()).owner(owner)
                            .requestTimeout(REQUEST_TIMEOUT).teardownTimeout(Duration.ofSeconds(8))
                            .killGrace(Duration.ofSeconds(2)).lostCreateWindow(LOST_CREATE_WINDOW).build();
                }

                public Duration requestTimeout() {
                    return REQUEST_TIMEOUT;
                }
            });
          } finally {
            System.out.println("pool campaign docker: the slowest create took " + proxy.slowestCreateMs() + " ms from its"
                    + " arrival at the proxy to the engine's answer, a late create's wait included (the client's deadline is " + REQUEST_TIMEOUT.toMillis() + " ms)");
            // what the engine was asked about a container still live, for a leak's diagnosis
            for (Ledger.SandboxRecord r : ledger.sandboxes()) {
                if (r.live()) {
                    String runId = String.valueOf(r.labels().get(CreateRequest.RUN_ID_LABEL));
                    List<String> about = proxy.requests().stream().filter(q -> q.contains(runId) || q.contains(r.id())).toList();
                    List<String> answered = proxy.answers().stream().filter(q -> q.contains(runId) || q.contains(r.id())).toList();
                    System.out.println("pool campaign docker: live after the campaign: " + r + ", requests naming it: " + about
                            + ", the engine's answers: " + answered);
                }
            }
          }
        }
        // the runner's own execs as its supervisor are apart from the ledger's: none of them carried a run's code
        int supervisorExecs = 0;
        List<String> codeAsSupervisor = new java.util.ArrayList<>();
        for (Ledger.SandboxRecord r : supervisor.sandboxes()) {
            supervisorExecs += r.execs().size();
            for (Ledger.Exec x : r.execs()) {
                if (x.code().contains(PoolCampaign.TAG)) {
                    codeAsSupervisor.add(r.id() + ": " + x.code());
                }
            }
        }
        System.out.println("pool campaign docker: " + supervisorExecs + " execs of the runner's own as its supervisor"
                + " (after-exec checks, detached marks), apart from the ledger's execs of code");
        assertEquals(List.of(), codeAsSupervisor, "docker pool campaign: a run's code was exec'd as the supervisor");
        assertEquals(List.of("attach after the policy label changed: " + RELABEL_IMPOSSIBLE), notRun,
                "docker pool campaign: the one case the engine cannot stage, and only it, is reported not run");

        // the engine's word: nothing of this campaign is left (a teardown still going on gets a bounded wait)
        List<String> left = EngineCheck.labelled(TestEngine.driver(direct), CreateRequest.OWNER_LABEL, owner);
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (!left.isEmpty() && System.nanoTime() - deadline < 0) {
            LockSupport.parkNanos(Duration.ofMillis(200).toNanos()); // a bounded poll
            left = EngineCheck.labelled(TestEngine.driver(direct), CreateRequest.OWNER_LABEL, owner);
        }
        assertEquals(List.of(), left, "docker pool campaign, seed " + seed + ": containers or volumes of the campaign left on"
                + " the engine (" + Seeds.replay("docker") + ")");
    }

    /**
     * A copy of {@code byId} keyed by container name ({@code sandbox4j-<run id>}, from the run-id label) instead
     * of the engine's container id: what the runner's sandbox ids are. A name seen twice (a container removed
     * and one created again under its name) keeps each after the first apart as {@code name@<id prefix>}.
     */
    static Ledger byName(Ledger byId) {
        Ledger out = new Ledger();
        Set<String> seen = new java.util.HashSet<>();
        for (Ledger.SandboxRecord r : byId.sandboxes()) {
            String runId = r.labels().get(CreateRequest.RUN_ID_LABEL);
            String name = runId == null ? r.id() : "sandbox4j-" + runId;
            if (!seen.add(name)) {
                name = name + "@" + r.id().substring(0, Math.min(12, r.id().length()));
            }
            out.created(name, r.labels());
            for (Ledger.Exec x : r.execs()) {
                out.executed(name, x.code(), x.hostNetwork());
            }
            if (r.killedByClient()) {
                out.killedByClient(name);
            }
            if (!r.live()) {
                out.destroyed(name);
            }
        }
        return out;
    }

    /**
     * Tries to change a live container's label on the engine itself (not through the proxy), by the only
     * container update call it has, then reads its labels back: true only when the label now reads
     * {@code value}. The engine answers that call 200 and ignores labels (20.10 here), so this is false for
     * a live container; an engine that refused the call would fail the test, the reason given being wrong.
     */
    static boolean alterLabel(String id, String key, String value) {
        try {
            String body = JSON.writeValueAsString(java.util.Map.of("Labels", java.util.Map.of(key, value)));
            String[] updated = call("POST", "/containers/" + id + "/update", body);
            if (updated[0].equals("404")) {
                return false; // no such container
            }
            if (!updated[0].startsWith("2")) {
                // not what RELABEL_IMPOSSIBLE says (an update the engine takes and ignores the labels of): look again
                throw new AssertionError("the engine answered the container update " + updated[0] + ": " + updated[1]);
            }
            String[] inspected = call("GET", "/containers/" + id + "/json", null);
            if (!inspected[0].equals("200")) {
                return false;
            }
            JsonNode labels = JSON.readTree(inspected[1]).path("Config").path("Labels");
            return value.equals(labels.path(key).asText(null));
        } catch (IOException e) {
            throw new AssertionError("the engine at " + ENGINE + " did not answer: " + e, e);
        }
    }

    /** One HTTP/1.1 call to the engine's socket ({@code Connection: close}): its status and body. */
    private static String[] call(String method, String path, String body) throws IOException {
        byte[] b = body == null ? new byte[0] : body.getBytes(StandardCharsets.UTF_8);
        try (SocketChannel c = SocketChannel.open(StandardProtocolFamily.UNIX)) {
            c.connect(UnixDomainSocketAddress.of(ENGINE));
            OutputStream out = Channels.newOutputStream(c);
            out.write((method + " " + path + " HTTP/1.1\r\nHost: docker\r\nConnection: close\r\n"
                    + (body == null ? "" : "Content-Type: application/json\r\nContent-Length: " + b.length + "\r\n") + "\r\n")
                    .getBytes(StandardCharsets.US_ASCII));
            out.write(b);
            out.flush();
            InputStream in = Channels.newInputStream(c);
            String raw = new String(in.readAllBytes(), StandardCharsets.UTF_8);
            int end = raw.indexOf("\r\n\r\n");
            String head = end < 0 ? raw : raw.substring(0, end);
            String rest = end < 0 ? "" : raw.substring(end + 4);
            if (head.toLowerCase(java.util.Locale.ROOT).contains("transfer-encoding: chunked")) {
                StringBuilder dechunked = new StringBuilder();
                int i = 0;
                while (i < rest.length()) {
                    int eol = rest.indexOf("\r\n", i);
                    int size = Integer.parseInt(rest.substring(i, eol).trim(), 16);
                    if (size == 0) {
                        break;
                    }
                    dechunked.append(rest, eol + 2, eol + 2 + size);
                    i = eol + 2 + size + 2;
                }
                rest = dechunked.toString();
            }
            return new String[] {head.length() >= 12 ? head.substring(9, 12) : "", rest};
        }
    }
}
