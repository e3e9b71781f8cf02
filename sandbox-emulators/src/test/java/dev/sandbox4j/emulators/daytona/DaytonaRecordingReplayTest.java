package dev.sandbox4j.emulators.daytona;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpRequest;
import java.nio.charset.StandardCharsets;
import java.util.Iterator;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Replays what the official SDK sent in each recording (headers, paths, bodies, the multipart bytes)
 * against the emulator, and checks the answers against the reference: statuses, the fields of the
 * {@code Sandbox} schema, the states the recorder answered (the emulator is told to poll as often),
 * exact exec results (the code really runs), the daemon's upload answer and the API's 400 body.
 */
class DaytonaRecordingReplayTest {
    /** Request headers that belong to the transport, not to the SDK. */
    private static final Set<String> TRANSPORT = Set.of("host", "content-length", "connection", "accept-encoding",
            "transfer-encoding", "upgrade", "sec-websocket-version", "sec-websocket-key", "sec-websocket-extensions");

    private final ProcessMachine.Factory machines = new ProcessMachine.Factory();
    private DaytonaEmulator emulator;
    private Wire wire;

    @BeforeEach
    void start() throws Exception {
        emulator = DaytonaEmulator.builder(machines).build();
        wire = new Wire(emulator);
    }

    @AfterEach
    void stop() {
        emulator.close();
        assertEquals(0, emulator.ledger().live(), "sandboxes left after close");
    }

    @ParameterizedTest
    @CsvSource({
        "daytona-a-blockall-coderun.json, 1",
        "daytona-a-polling-only.json, 3",
        "daytona-b-allowlist-upload-exec.json, 0",
        "daytona-g-create-400.json, 0",
    })
    void theSdksRecordedRequestsGetTheDocumentedAnswers(String file, int startingPolls) throws Exception {
        emulator.startingPolls(startingPolls);
        JsonNode recording;
        try (InputStream in = getClass().getResourceAsStream("/daytona-recordings/" + file)) {
            recording = Wire.JSON.readTree(in);
        }
        String id = null;
        int sent = 0;
        for (JsonNode entry : recording) {
            String path = entry.get("path").asText();
            if (id != null) {
                path = path.replace("sbx-fake-1", id);
            }
            String url = emulator.baseUrl() + path + query(entry.get("query"));
            HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(url));
            for (Iterator<Map.Entry<String, JsonNode>> it = entry.get("headers").properties().iterator(); it.hasNext(); ) {
                Map.Entry<String, JsonNode> h = it.next();
                if (!TRANSPORT.contains(h.getKey())) {
                    String value = h.getKey().equals("authorization") ? "Bearer " + emulator.apiKey() : h.getValue().asText();
                    b.header(h.getKey(), value);
                }
            }
            JsonNode body = entry.get("body");
            String method = entry.get("method").asText();
            if (body == null || body.isNull()) {
                b.method(method, HttpRequest.BodyPublishers.noBody());
            } else if (body.has("rawBody")) {
                b.method(method, HttpRequest.BodyPublishers.ofString(body.get("rawBody").asText(), StandardCharsets.UTF_8));
            } else {
                b.method(method, HttpRequest.BodyPublishers.ofString(body.toString()));
            }
            Wire.Answer a = wire.send(b.build());
            sent++;
            JsonNode fake = entry.get("fakeResponse");
            int wantStatus = fake.get("status").asInt();
            assertEquals(wantStatus, a.status, file + " " + method + " " + path + ": " + a);
            JsonNode want = fake.get("body");
            String server = entry.get("server").asText();
            if (server.equals("api-websocket-upgrade")) {
                continue;
            }
            if (path.endsWith("/api/sandbox") && method.equals("POST") && wantStatus == 200) {
                id = a.json.get("id").asText();
                assertSandboxShape(want, a.json, file);
                // what the machine got: block-all => no network; the 1.1.1.1/8.8.8.0 list does not name the canary
                assertEquals(Boolean.FALSE, emulator.hostNetwork(id));
            } else if (path.startsWith("/api/sandbox/") && wantStatus == 200) {
                assertSandboxShape(want, a.json, file);
                if (method.equals("DELETE")) {
                    assertEquals("destroyed", a.json.get("desiredState").asText());
                }
            } else if (path.endsWith("/process/code-run") || path.endsWith("/process/execute")) {
                assertEquals(want, a.json, file + " " + path + " (the code really ran)");
            } else if (path.endsWith("/files/bulk-upload")) {
                // the daemon answers the destination as given (the recorder's fake said "main.py")
                assertEquals(Wire.JSON.readTree("{\"files\":[{\"path\":\"/tmp/main.py\",\"bytes\":12}]}"), a.json);
            } else if (wantStatus == 400) {
                assertEquals(want.get("statusCode"), a.json.get("statusCode"));
                assertEquals(want.get("error"), a.json.get("error"));
                assertEquals(want.get("message"), a.json.get("message"));
                assertEquals("/api/sandbox", a.json.get("path").asText());
                assertNotNull(a.json.get("timestamp"));
            }
        }
        assertTrue(sent > 0);
        assertEquals(0, emulator.ledger().live(), file + ": the recorded flow deletes what it creates");
    }

    /** Every field the reference's answer carries is there, with the same JSON type; state and egress match. */
    private static void assertSandboxShape(JsonNode want, JsonNode got, String file) {
        for (Iterator<String> it = want.fieldNames(); it.hasNext(); ) {
            String f = it.next();
            assertTrue(got.has(f), file + ": field " + f + " missing in " + got);
            assertEquals(want.get(f).getNodeType(), got.get(f).getNodeType(), file + ": type of " + f);
        }
        for (String f : new String[] {"state", "networkBlockAll", "networkAllowList", "labels", "env", "target",
                "autoStopInterval", "autoDeleteInterval", "user", "public", "cpu", "gpu", "memory", "disk"}) {
            assertEquals(want.get(f), got.get(f), file + ": " + f);
        }
        assertTrue(got.get("toolboxProxyUrl").asText().endsWith("/toolbox"), got.toString());
    }

    private static String query(JsonNode q) {
        if (q == null || q.isEmpty()) {
            return "";
        }
        StringBuilder sb = new StringBuilder("?");
        q.properties().forEach(e -> {
            if (sb.length() > 1) {
                sb.append('&');
            }
            sb.append(Wire.encode(e.getKey())).append('=').append(Wire.encode(e.getValue().asText()));
        });
        return sb.toString();
    }
}
