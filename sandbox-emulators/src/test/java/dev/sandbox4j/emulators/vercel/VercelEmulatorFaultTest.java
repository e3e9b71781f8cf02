package dev.sandbox4j.emulators.vercel;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Each fault knob, seen over plain HTTP in Vercel's formats; no sandbox may outlive a test. */
class VercelEmulatorFaultTest {
    private static final String TOKEN = VercelEmulatorWireTest.TOKEN;
    private static final String TEAM = VercelEmulatorWireTest.TEAM;
    private static final String PROJECT = VercelEmulatorWireTest.PROJECT;

    private VercelEmulator emulator;
    private Wire wire;
    private TestMachines machines;

    @BeforeEach
    void start() throws IOException {
        machines = new TestMachines();
        emulator = VercelEmulator.builder().token(TOKEN).teamId(TEAM).projectId(PROJECT)
                .machines(machines).build();
        wire = new Wire(emulator, TOKEN, TEAM);
    }

    @AfterEach
    void stop() {
        int live = emulator.ledger().live();
        int local = machines.openLocalSandboxes();
        emulator.close();
        assertEquals(0, live, "sandboxes left running: " + emulator.ledger());
        assertEquals(0, local, "local sandboxes left open");
    }

    private static String createBody(String name) {
        return "{\"projectId\":\"" + PROJECT + "\",\"name\":\"" + name + "\",\"ports\":[],\"timeout\":60000,"
                + "\"networkPolicy\":{\"mode\":\"deny-all\"}}";
    }

    private void stopSession(String session) throws Exception {
        assertEquals(200, wire.postEmpty("/v2/sandboxes/sessions/" + session + "/stop").status);
    }

    @Test
    void createFailsWith5xxAndNothingIsCreated() throws Exception {
        emulator.faults().failCreate(503, 2);
        for (int i = 0; i < 2; i++) {
            Wire.Response r = wire.post("/v3/sandboxes", createBody("sbx-a"));
            assertEquals(503, r.status);
            assertEquals("service_unavailable", r.json().get("error").get("code").asText());
        }
        assertEquals(0, emulator.ledger().created());
        Wire.Response ok = wire.post("/v3/sandboxes", createBody("sbx-a"));
        assertEquals(200, ok.status, ok.body);
        stopSession(ok.json().get("session").get("id").asText());
    }

    @Test
    void createIsRateLimitedWithRetryAfterInSeconds() throws Exception {
        emulator.faults().rateLimitCreate(1, 3);
        Wire.Response r = wire.post("/v3/sandboxes", createBody("sbx-b"));
        assertEquals(429, r.status);
        assertEquals("3", r.raw.headers().firstValue("retry-after").orElse(null));
        assertEquals("rate_limited", r.json().get("error").get("code").asText());
        assertEquals(0, emulator.ledger().created());
    }

    @Test
    void lostCreateResponseLeavesASandboxFindableByName() throws Exception {
        emulator.faults().loseCreateResponse(1);
        assertThrows(IOException.class, () -> wire.post("/v3/sandboxes", createBody("sbx-lost")));
        assertEquals(1, emulator.ledger().live());
        Wire.Response found = wire.get("/v2/sandboxes/sbx-lost", "projectId=" + PROJECT);
        assertEquals(200, found.status, found.body);
        assertEquals("running", found.json().get("session").get("status").asText());
        stopSession(found.json().get("session").get("id").asText());
    }

    @Test
    void aDroppedStreamEndsWithoutTheFinalLineWhileTheCommandRunsOn() throws Exception {
        String session = wire.post("/v3/sandboxes", createBody("sbx-drop")).json().get("session").get("id").asText();
        emulator.faults().dropStream(1);
        HttpResponse<InputStream> r = wire.stream(wire.request("/v2/sandboxes/sessions/" + session + "/cmd", null)
                .POST(HttpRequest.BodyPublishers.ofString("{\"command\":\"bash\",\"args\":[\"-c\","
                        + "\"echo one; sleep 0.2; echo two\"],\"wait\":true,\"logs\":true}")).build());
        List<JsonNode> lines = new ArrayList<>();
        boolean cut = false;
        try (BufferedReader reader = new BufferedReader(new InputStreamReader(r.body(), StandardCharsets.UTF_8))) {
            String line;
            while ((line = reader.readLine()) != null) {
                lines.add(Wire.JSON.readTree(line));
            }
        } catch (IOException e) {
            cut = true;
        }
        assertTrue(cut, "the connection must die, not end cleanly: " + lines);
        assertTrue(lines.get(0).has("command"));
        for (JsonNode l : lines.subList(1, lines.size())) {
            assertFalse(l.has("command"), "no final line after a drop: " + lines);
        }
        String id = lines.get(0).get("command").get("id").asText();
        Wire.Response waited = wire.get("/v2/sandboxes/sessions/" + session + "/cmd/" + id, "wait=true");
        assertEquals(0, waited.json().get("command").get("exitCode").asInt());
        stopSession(session);
    }

    @Test
    void stopFailsNTimesAndTheSessionStaysUp() throws Exception {
        String session = wire.post("/v3/sandboxes", createBody("sbx-stop")).json().get("session").get("id").asText();
        emulator.faults().failTeardown(500, 2);
        for (int i = 0; i < 2; i++) {
            Wire.Response r = wire.postEmpty("/v2/sandboxes/sessions/" + session + "/stop");
            assertEquals(500, r.status);
            assertEquals("internal_server_error", r.json().get("error").get("code").asText());
            assertEquals(1, emulator.ledger().live());
            assertEquals("running", wire.get("/v2/sandboxes/sessions/" + session, null).json()
                    .get("session").get("status").asText());
        }
        stopSession(session);
        assertEquals(0, emulator.ledger().live());
    }

    @Test
    void slowAnswersOutlastAShortClientDeadlineButTheCreateStillHappens() throws Exception {
        emulator.faults().slow(Duration.ofMillis(500));
        HttpClient impatient = HttpClient.newHttpClient();
        HttpRequest create = HttpRequest.newBuilder(URI.create(wire.url("/v3/sandboxes", null)))
                .timeout(Duration.ofMillis(100)).header("authorization", "Bearer " + TOKEN)
                .header("content-type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(createBody("sbx-slow"))).build();
        assertThrows(HttpTimeoutException.class, () -> impatient.send(create, HttpResponse.BodyHandlers.ofString()));
        // Each lookup is itself slowed down, which paces the retries while the create completes.
        Wire.Response found = null;
        for (int i = 0; i < 40 && (found == null || found.status == 404); i++) {
            found = wire.get("/v2/sandboxes/sbx-slow", "projectId=" + PROJECT);
        }
        assertEquals(200, found.status, found.body);
        emulator.faults().reset();
        stopSession(found.json().get("session").get("id").asText());
    }

    @Test
    void hostileFramingStreamsAGigabyteLineLazily() throws Exception {
        String session = wire.post("/v3/sandboxes", createBody("sbx-hostile")).json().get("session").get("id").asText();
        emulator.faults().hostileFraming(true);
        HttpResponse<InputStream> r = wire.stream(wire.request("/v2/sandboxes/sessions/" + session + "/cmd", null)
                .POST(HttpRequest.BodyPublishers.ofString("{\"command\":\"true\",\"wait\":true,\"logs\":true}")).build());
        InputStream in = r.body();
        // The first line is the command; then one line that never ends within what we dare to read.
        int b;
        StringBuilder first = new StringBuilder();
        while ((b = in.read()) != '\n') {
            first.append((char) b);
        }
        assertTrue(Wire.JSON.readTree(first.toString()).has("command"));
        byte[] buf = new byte[64 * 1024];
        long read = 0;
        while (read < (32L << 20)) {
            int n = in.read(buf);
            assertTrue(n > 0);
            for (int i = 0; i < n; i++) {
                assertTrue(buf[i] != '\n', "the hostile line ended after " + (read + i) + " bytes");
            }
            read += n;
        }
        in.close();
        emulator.faults().hostileFraming(false);
        stopSession(session);
    }
}
