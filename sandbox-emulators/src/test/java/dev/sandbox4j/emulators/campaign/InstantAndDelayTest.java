package dev.sandbox4j.emulators.campaign;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.sandbox4j.api.Execution;
import dev.sandbox4j.api.RunRequest;
import dev.sandbox4j.api.RunResult;
import dev.sandbox4j.api.RunStatus;
import dev.sandbox4j.api.Sandbox;
import dev.sandbox4j.api.SandboxRunner;
import dev.sandbox4j.api.SandboxSpec;
import dev.sandbox4j.daytona.DaytonaSandboxRunner;
import dev.sandbox4j.e2b.E2bSandboxRunner;
import dev.sandbox4j.vercel.VercelSandboxRunner;
import dev.sandbox4j.emulators.HttpEmulator;
import dev.sandbox4j.emulators.HttpEmulator.Kind;
import dev.sandbox4j.emulators.Ledger;
import dev.sandbox4j.emulators.daytona.DaytonaEmulator;
import dev.sandbox4j.emulators.e2b.E2bEmulator;
import dev.sandbox4j.emulators.vercel.VercelEmulator;
import dev.sandbox4j.local.LocalSandboxRunner;
import dev.sandbox4j.policy.EgressPolicy;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Instant mode, the create delay and the request counts, through each adapter against its emulator.
 * Instant mode must run nothing: code that prints and then spins forever comes back at once as exit 0
 * with no output (run for real it would print, then time out), no local sandbox opens although the
 * emulator was given a working local runner, and a file written at create is not there to read back.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class InstantAndDelayTest {
    /** Prints, then never ends: run for real, it cannot come back as a quiet exit 0. */
    private static final String SPIN = "print('ran for real')\nwhile True:\n    pass\n";
    private LocalSandboxRunner local;

    @BeforeAll
    void start() {
        local = LocalSandboxRunner.builder().maxAddressSpaceMib(2048).build();
    }

    @AfterAll
    void stop() {
        local.close();
    }

    private HttpEmulator emulator(String adapter, boolean instant) throws IOException {
        switch (adapter) {
            case "e2b":
                return E2bEmulator.builder().apiKey(FaultCampaignTest.E2B_KEY).localRunner(local).instant(instant).build();
            case "vercel":
                return VercelEmulator.builder().token(FaultCampaignTest.VERCEL_TOKEN).teamId(FaultCampaignTest.VERCEL_TEAM)
                        .projectId(FaultCampaignTest.VERCEL_PROJECT)
                        .machines(dev.sandbox4j.emulators.LocalMachines.using(local)).instant(instant).build();
            default:
                return DaytonaEmulator.builder(dev.sandbox4j.emulators.LocalMachines.using(local))
                        .apiKey(FaultCampaignTest.DAYTONA_KEY).instant(instant).build();
        }
    }

    /** Each adapter with generous deadlines: a loaded machine must not turn a create delay into a timeout. */
    private static SandboxRunner runner(String adapter, HttpEmulator emulator) {
        Duration deadline = Duration.ofSeconds(30);
        switch (adapter) {
            case "e2b":
                return E2bSandboxRunner.builder().apiKey(FaultCampaignTest.E2B_KEY).apiUrl(emulator.baseUrl())
                        .sandboxUrl(emulator.baseUrl()).requestTimeout(deadline).build();
            case "vercel":
                return VercelSandboxRunner.builder().token(FaultCampaignTest.VERCEL_TOKEN).teamId(FaultCampaignTest.VERCEL_TEAM)
                        .projectId(FaultCampaignTest.VERCEL_PROJECT).baseUrl(emulator.baseUrl() + "/api")
                        .requestTimeout(deadline).build();
            default:
                DaytonaEmulator d = (DaytonaEmulator) emulator;
                return DaytonaSandboxRunner.builder().apiKey(d.apiKey()).apiUrl(d.apiUrl()).target("us")
                        .statusPollInterval(Duration.ofMillis(20)).requestTimeout(deadline).startTimeout(deadline).build();
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"e2b", "vercel", "daytona"})
    void instantModeRunsNothingAndCountsEverything(String adapter) throws Exception {
        try (HttpEmulator emulator = emulator(adapter, true); SandboxRunner runner = runner(adapter, emulator)) {
            assertTrue(emulator.instant());
            SandboxSpec spec = SandboxSpec.builder().egress(EgressPolicy.denyAll())
                    .file("input.txt", "written at create").build();
            try (Sandbox sandbox = runner.open(spec)) {
                assertEquals(0, local.openSandboxes(), "instant mode opened a local sandbox");
                RunResult r = sandbox.exec(Execution.builder(SPIN).budget(Duration.ofSeconds(20)).build());
                assertEquals(RunStatus.EXITED, r.status(), r.toString());
                assertEquals(0, r.exitCode().orElse(-1), r.toString());
                assertEquals("", r.stdout(), "instant mode ran the code");
                assertEquals("", r.stderr());
                assertThrows(RuntimeException.class, () -> sandbox.readFile("input.txt", 1024),
                        "a file written in instant mode was kept");
            }
            Ledger ledger = emulator.ledger();
            assertEquals(1, ledger.created(), ledger.toString());
            assertEquals(0, ledger.live(), ledger.toString());
            Ledger.SandboxRecord record = ledger.sandboxes().get(0);
            assertTrue(record.killedByClient(), record.toString());
            assertTrue(record.execs().stream().anyMatch(e -> e.code().contains("while True")),
                    "the ledger records the code received: " + record.execs());

            Map<Kind, Long> counts = emulator.requestCounts();
            assertEquals(1L, counts.get(Kind.CREATE), counts.toString());
            assertTrue(counts.get(Kind.EXEC) >= 1, counts.toString());
            assertEquals(1L, counts.get(Kind.TEARDOWN), counts.toString());
            assertTrue(counts.get(Kind.OTHER) >= 2, "the file write and read are counted: " + counts);
            long total = emulator.requestCount();
            assertEquals(counts.values().stream().mapToLong(Long::longValue).sum(), total);

            JsonNode served = requests(emulator);
            assertEquals(total, served.get("total").asLong(), served.toString());
            assertEquals(1, served.get("CREATE").asInt(), served.toString());
            assertEquals(total, requests(emulator).get("total").asLong(), "reading the counts counted a request");
            assertTrue(emulator.requestsLine().startsWith("requests: total=" + total + " "), emulator.requestsLine());
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"e2b", "vercel", "daytona"})
    void aCreateDelayHoldsEveryCreate(String adapter) throws Exception {
        Duration delay = Duration.ofMillis(600);
        try (HttpEmulator emulator = emulator(adapter, true); SandboxRunner runner = runner(adapter, emulator)) {
            emulator.faults().createDelay(delay);
            for (int i = 0; i < 2; i++) {
                long t0 = System.nanoTime();
                try (Sandbox sandbox = runner.open(SandboxSpec.builder().egress(EgressPolicy.denyAll()).build())) {
                    // a lower bound only: the sleep guarantees it; nothing here depends on how fast the machine is
                    Duration took = Duration.ofNanos(System.nanoTime() - t0);
                    assertTrue(took.compareTo(delay) >= 0, "create " + i + " answered after " + took.toMillis() + " ms");
                    assertEquals(0, sandbox.exec(Execution.builder("print(1)").build()).exitCode().orElse(-1));
                }
            }
            assertEquals(2, emulator.ledger().created());
            assertEquals(0, emulator.ledger().live());
            emulator.faults().reset();
            assertEquals(Duration.ZERO, emulator.faults().createDelay(), "reset clears the create delay");
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"e2b", "vercel", "daytona"})
    void withoutInstantModeTheSameCodeRuns(String adapter) throws Exception {
        // the control for the first test: the same emulators, not instant, do run what they get
        try (HttpEmulator emulator = emulator(adapter, false); SandboxRunner runner = runner(adapter, emulator)) {
            RunResult r = runner.run(RunRequest.of(SandboxSpec.builder().egress(EgressPolicy.denyAll()).build(),
                    Execution.builder("print('ran for real')").budget(Duration.ofSeconds(20)).build()));
            assertEquals("ran for real", r.stdout().strip(), r.toString());
            assertTrue(emulator.requestCount() >= 3, emulator.requestsLine());
        }
    }

    private static JsonNode requests(HttpEmulator emulator) throws Exception {
        HttpResponse<String> r = HttpClient.newHttpClient().send(
                HttpRequest.newBuilder(URI.create(emulator.baseUrl() + HttpEmulator.REQUESTS_PATH)).GET().build(),
                HttpResponse.BodyHandlers.ofString());
        assertEquals(200, r.statusCode(), r.body());
        return new ObjectMapper().readTree(r.body());
    }
}
