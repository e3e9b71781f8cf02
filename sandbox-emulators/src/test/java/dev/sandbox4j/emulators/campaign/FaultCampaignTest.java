package dev.sandbox4j.emulators.campaign;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sandbox4j.api.SandboxRunner;
import dev.sandbox4j.daytona.DaytonaSandboxRunner;
import dev.sandbox4j.e2b.E2bSandboxRunner;
import dev.sandbox4j.emulators.Ledger;
import dev.sandbox4j.emulators.daytona.DaytonaEmulator;
import dev.sandbox4j.emulators.e2b.E2bEmulator;
import dev.sandbox4j.emulators.vercel.VercelEmulator;
import dev.sandbox4j.local.LocalSandboxRunner;
import dev.sandbox4j.vercel.VercelSandboxRunner;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.List;
import okhttp3.OkHttpClient;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.parallel.Isolated;
import org.slf4j.LoggerFactory;

/**
 * A seeded randomized fault campaign (issue 13): each REST adapter against its emulator, on real local
 * sandboxes, with random faults from every knob the three lost-sandbox causes need (lost, late and
 * garbled creates, hung lookups, lost exec answers, dropped streams, garbled answers, failing
 * teardowns), random interrupts of the calling thread, short client deadlines, a caller-supplied
 * {@code OkHttpClient} with OkHttp's defaults for half of the runs, and most runs eight at once. From
 * the emulator's {@link Ledger}, after {@code runner.close()}, it counts:
 * <ul>
 *   <li>leaked: a sandbox created, never torn down by the client, and not reported by its run
 *       ({@link Campaign#reportsPossibleLeak});</li>
 *   <li>double runs: a run's nonce seen in two exec requests (in one sandbox or two);</li>
 *   <li>secrets: the API key in any exception (message, toString, causes, suppressed), any result or
 *       any log line (slf4j-simple writes to System.err, resolved per line, so a tee sees every line);</li>
 *   <li>weaker egress: code of a run that asked for no network ran with the host network. The emulators
 *       reduce every wire policy to the host network or none, and grant it only for a policy that lets
 *       loopback through; the campaign asks deny-all or allow-all (or an allow-all setup locked down to
 *       deny-all), so "weaker" is exactly: host network granted to a run whose code egress is not
 *       allow-all.</li>
 * </ul>
 *
 * <p>Properties (surefire passes {@code -D} user properties to the test JVM):
 * {@code sandbox4j.campaign.seed} (a number for every adapter, or {@code random}; a fixed seed per adapter
 * otherwise, see {@link Seeds}), {@code sandbox4j.campaign.scale}
 * (multiplies the run count, e.g. 10), {@code sandbox4j.campaign.runs} (runs per adapter at scale 1),
 * {@code sandbox4j.campaign.replay=<adapter>:<run>} (that one run alone, with its own faults; give the same
 * seed, scale and runs as the campaign that named it).
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Isolated("the campaign's fire counts and run bounds are measured with the machine to itself; it taps System.err")
class FaultCampaignTest {
    static final String RUN_LABEL = Campaign.RUN_LABEL;
    static final Duration BUDGET = Campaign.BUDGET;
    static final String E2B_KEY = "e2b_campaign5ecret0123456789abcdef01234567";
    static final String VERCEL_TOKEN = "vercel-campaign-5ecret-7a31c0d9e4";
    static final String VERCEL_TEAM = "team_campaign";
    static final String VERCEL_PROJECT = "prj_campaign";
    static final String DAYTONA_KEY = "dtn_campaign5ecret0123456789abcdef";

    /** Client deadlines: short, so timeouts and hung lookups happen, yet above a loaded create. */
    static final Duration CLIENT_TIMEOUT = Duration.ofMillis(1000);
    /**
     * How long an ambiguous create is looked up: the emulators' create deadline (a late create lands
     * within 1.5 s of the client giving up) plus a margin, as the providers' 60 s + 30 s is in production.
     */
    static final Duration LOST_CREATE_WINDOW = Duration.ofSeconds(5);
    static final Duration TEARDOWN_TIMEOUT = Duration.ofSeconds(4);


    private Path workRoot;
    private LocalSandboxRunner local;
    private Campaign.LogTap logs;

    @BeforeAll
    void start() throws IOException {
        // the local runner drops to nobody when the JVM is root: its work root must be traversable
        workRoot = Files.createTempDirectory("campaign-local-");
        Files.setPosixFilePermissions(workRoot, PosixFilePermissions.fromString("rwx--x--x"));
        local = LocalSandboxRunner.builder().workRoot(workRoot).maxAddressSpaceMib(2048).build().verify();
        logs = Campaign.LogTap.install(List.of(E2B_KEY, VERCEL_TOKEN, DAYTONA_KEY, Campaign.CANARY_SECRET));
        LoggerFactory.getLogger(FaultCampaignTest.class).info("the log scan must see this: {}", Campaign.CANARY_SECRET);
        assertEquals(1, logs.secretLines().size(), "the log tap did not see a line logged through slf4j");
        logs.clear();
        logs.original.println("fault campaign: " + Seeds.describe() + ", " + Campaign.RUNS + " runs per adapter (scale " + Campaign.SCALE + ")"
                + (Campaign.REPLAY.isEmpty() ? "" : ", replaying " + Campaign.REPLAY));
    }

    @AfterAll
    void stop() throws IOException {
        logs.uninstall();
        WorkRoots.closeAndDelete(local, workRoot);
    }

    // ---------------------------------------------------------------- one factory per adapter

    /** The E2B adapter as a user configures it, with short deadlines; {@code client} may be null. */
    static SandboxRunner e2bRunner(E2bEmulator emulator, OkHttpClient client) {
        return e2bRunner(emulator, client, CLIENT_TIMEOUT, TEARDOWN_TIMEOUT);
    }

    /** As {@link #e2bRunner(E2bEmulator, OkHttpClient)}, with the given request and teardown deadlines. */
    static SandboxRunner e2bRunner(E2bEmulator emulator, OkHttpClient client, Duration request, Duration teardown) {
        E2bSandboxRunner.Builder b = E2bSandboxRunner.builder().apiKey(E2B_KEY)
                .apiUrl(emulator.baseUrl()).sandboxUrl(emulator.baseUrl())
                .requestTimeout(request).teardownTimeout(teardown)
                .retryBaseDelay(Duration.ofMillis(50)).execGrace(Duration.ofSeconds(2))
                .lostCreateWindow(LOST_CREATE_WINDOW);
        if (client != null) {
            b.httpClient(client);
        }
        return b.build();
    }

    /**
     * The Vercel adapter, with the same short client deadline as the others (the transport bounds
     * every call by its own deadline, never by a client's read timeout).
     */
    static SandboxRunner vercelRunner(VercelEmulator emulator, OkHttpClient client) {
        return vercelRunner(emulator, client, CLIENT_TIMEOUT, TEARDOWN_TIMEOUT);
    }

    /** As {@link #vercelRunner(VercelEmulator, OkHttpClient)}, with the given request and teardown deadlines. */
    static SandboxRunner vercelRunner(VercelEmulator emulator, OkHttpClient client, Duration request, Duration teardown) {
        VercelSandboxRunner.Builder b = VercelSandboxRunner.builder().token(VERCEL_TOKEN).teamId(VERCEL_TEAM)
                .projectId(VERCEL_PROJECT).baseUrl(emulator.baseUrl() + "/api")
                .requestTimeout(request).teardownTimeout(teardown).execGrace(Duration.ofSeconds(2))
                .lostCreateWindow(LOST_CREATE_WINDOW);
        if (client != null) {
            b.httpClient(client);
        }
        return b.build();
    }

    /** The Daytona adapter, with short polls, retries and deadlines. */
    static SandboxRunner daytonaRunner(DaytonaEmulator emulator, OkHttpClient client) {
        return daytonaRunner(emulator, client, CLIENT_TIMEOUT, TEARDOWN_TIMEOUT);
    }

    /** As {@link #daytonaRunner(DaytonaEmulator, OkHttpClient)}, with the given request and teardown deadlines. */
    static SandboxRunner daytonaRunner(DaytonaEmulator emulator, OkHttpClient client, Duration request, Duration teardown) {
        DaytonaSandboxRunner.Builder b = DaytonaSandboxRunner.builder().apiKey(emulator.apiKey())
                .apiUrl(emulator.apiUrl()).target("us")
                .statusPollInterval(Duration.ofMillis(20)).retryBaseDelay(Duration.ofMillis(50))
                .requestTimeout(request).startTimeout(request.compareTo(Duration.ofSeconds(5)) > 0 ? request : Duration.ofSeconds(5))
                .teardownTimeout(teardown).lostCreateWindow(LOST_CREATE_WINDOW);
        if (client != null) {
            b.httpClient(client);
        }
        return b.build();
    }

    /**
     * A caller's own client, as {@code new OkHttpClient.Builder()} makes it (retryOnConnectionFailure
     * left at its default, true), with only the read timeout shortened.
     */
    static OkHttpClient callerClient() {
        return new OkHttpClient.Builder().readTimeout(CLIENT_TIMEOUT).build();
    }

    // ---------------------------------------------------------------- the three campaigns

    @Test
    void e2b() throws Exception {
        TrackedMachines machines = TrackedMachines.on(local);
        try (E2bEmulator emulator = E2bEmulator.builder().apiKey(E2B_KEY).machines(machines).build()) {
            Campaign.campaign(logs, "e2b", Campaign.Emulated.of(emulator), E2B_KEY, rest(client -> e2bRunner(emulator, client)));
        }
        nothingLeftOpen("e2b", machines);
    }

    @Test
    void vercel() throws Exception {
        TrackedMachines machines = TrackedMachines.on(local);
        try (VercelEmulator emulator = VercelEmulator.builder().token(VERCEL_TOKEN).teamId(VERCEL_TEAM)
                .projectId(VERCEL_PROJECT).machines(machines).build()) {
            Campaign.campaign(logs, "vercel", Campaign.Emulated.of(emulator), VERCEL_TOKEN, rest(client -> vercelRunner(emulator, client)));
        }
        nothingLeftOpen("vercel", machines);
    }

    @Test
    void daytona() throws Exception {
        TrackedMachines machines = TrackedMachines.on(local);
        try (DaytonaEmulator emulator = DaytonaEmulator.builder(machines)
                .apiKey(DAYTONA_KEY).startingPolls(1).build()) {
            Campaign.campaign(logs, "daytona", Campaign.Emulated.of(emulator), DAYTONA_KEY, rest(client -> daytonaRunner(emulator, client)));
        }
        nothingLeftOpen("daytona", machines);
    }

    /** A REST adapter's factory: the caller's client is one OkHttpClient with OkHttp's defaults, shut down at the end. */
    static Campaign.RunnerFactory rest(java.util.function.Function<OkHttpClient, SandboxRunner> make) {
        OkHttpClient caller = callerClient();
        return new Campaign.RunnerFactory() {
            public SandboxRunner create(boolean callerClient) {
                return make.apply(callerClient ? caller : null);
            }

            public void release() {
                caller.dispatcher().executorService().shutdown();
                caller.connectionPool().evictAll();
            }
        };
    }

    /**
     * After an emulator's close: every machine it opened is closed, and the local runner holds no
     * sandbox (the ledger counts what the emulator recorded; this counts what really runs).
     */
    private void nothingLeftOpen(String adapter, TrackedMachines machines) {
        List<String> open = machines.stillOpen(Duration.ofSeconds(30));
        assertTrue(open.isEmpty(), adapter + " campaign, seed " + Seeds.of(adapter) + ": " + open.size() + " of "
                + machines.count() + " machines still open after the emulator's close:\n" + String.join("\n", open));
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (local.openSandboxes() > 0 && System.nanoTime() - deadline < 0) {
            java.util.concurrent.locks.LockSupport.parkNanos(Duration.ofMillis(50).toNanos()); // a bounded poll
        }
        assertEquals(0, local.openSandboxes(), adapter + " campaign, seed " + Seeds.of(adapter)
                + ": every machine is closed, yet local sandboxes are still open (a local teardown that did not end)");
    }

}
