package dev.sandbox4j.emulators.e2b;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import okhttp3.Request;
import okhttp3.Response;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.api.parallel.Isolated;

/** The control-plane API: create, kill, timeout, get, list, network update, API key and faults. */
@Isolated("a case swaps System.err to read the emulator's log lines")
class E2bApiWireTest extends WireTestSupport {

    @Test
    void createAnswersLikeTheReferenceAndKillTearsDown() throws IOException {
        // the body of recording e2b-a-command.json
        JsonNode sb = create("{\"templateID\":\"base\",\"timeout\":60,\"allow_internet_access\":false}");
        String id = sb.get("sandboxID").asText();
        assertTrue(id.matches("i[a-z0-9]{20}"), id);
        assertTrue(sb.get("templateID").asText().matches("[a-z0-9]{20}"));
        assertEquals("base", sb.get("alias").asText());
        assertEquals("0.6.13", sb.get("envdVersion").asText());
        assertFalse(sb.get("envdAccessToken").asText().isEmpty());
        assertTrue(sb.get("trafficAccessToken").isNull());
        assertTrue(sb.get("domain").isNull());
        assertTrue(sb.has("clientID"));
        assertEquals(1, emulator.ledger().live());
        assertFalse(workspaces.last().hostNetwork, "allow_internet_access:false must give no network");

        assertEquals(204, kill(id));
        assertTrue(workspaces.last().isClosed());
        try (Response r = http.newCall(api("/sandboxes/" + id).delete().build()).execute()) {
            assertEquals(404, r.code());
            JsonNode err = JSON.readTree(r.body().string());
            assertEquals(404, err.get("code").asInt());
            assertEquals("Sandbox \"" + id + "\" doesn't exist or you don't have access to it", err.get("message").asText());
        }
        assertEquals(1, emulator.ledger().created());
        assertEquals(1, emulator.ledger().destroyed());
    }

    @Test
    void apiKeyIsCheckedAndNeverEchoed() throws IOException {
        String body = "{\"templateID\":\"base\"}";
        String[] keys = {null, "not-an-e2b-key", "e2b_wrongwrongwrongwrong"};
        String[] endings = {"authorization header is missing", "authorization header is malformed",
                "Cannot get the team for the given API key"};
        for (int i = 0; i < keys.length; i++) {
            Request.Builder b = new Request.Builder().url(url("/v2/sandboxes")).post(json(body));
            if (keys[i] != null) {
                b.header("X-API-KEY", keys[i]);
            }
            try (Response r = http.newCall(b.build()).execute()) {
                String text = r.body().string();
                assertEquals(401, r.code(), text);
                JsonNode err = JSON.readTree(text);
                assertEquals(401, err.get("code").asInt());
                assertTrue(err.get("message").asText().startsWith("Invalid API key, please visit"), text);
                assertTrue(err.get("message").asText().endsWith(endings[i]), text);
                if (keys[i] != null) {
                    assertFalse(text.contains(keys[i]), "the key must not be echoed");
                }
            }
        }
        assertEquals(0, emulator.ledger().created());
    }

    @Test
    void defaultTimeoutsAndValidation() throws IOException {
        JsonNode v2 = create("{\"templateID\":\"base\"}");
        String id = v2.get("sandboxID").asText();
        JsonNode detail = get(id);
        long seconds = Duration.between(java.time.Instant.parse(detail.get("startedAt").asText()),
                java.time.Instant.parse(detail.get("endAt").asText())).toSeconds();
        assertEquals(300, seconds, "v2 default timeout");
        assertTrue(detail.get("allowInternetAccess").isNull());
        assertEquals("running", detail.get("state").asText());
        assertEquals(204, kill(id));

        // deprecated v1: default 15 s, and no envd token without secure:true
        try (Response r = http.newCall(api("/sandboxes").post(json("{\"templateID\":\"base\"}")).build()).execute()) {
            JsonNode v1 = JSON.readTree(r.body().string());
            assertEquals(201, r.code());
            assertFalse(v1.has("envdAccessToken"));
            assertEquals(204, kill(v1.get("sandboxID").asText()));
        }
        try (Response r = http.newCall(api("/sandboxes").post(json("{\"templateID\":\"base\",\"secure\":true}")).build()).execute()) {
            JsonNode v1 = JSON.readTree(r.body().string());
            assertTrue(v1.has("envdAccessToken"));
            assertEquals(204, kill(v1.get("sandboxID").asText()));
        }

        assertBadRequest("{\"templateID\":\"base\",\"timeout\":0}", "Timeout must be greater than 0");
        assertBadRequest("{\"templateID\":\"base\",\"timeout\":90000}", "Timeout cannot be greater than 24 hours");
        assertBadRequest("{\"timeout\":10}", "property \"templateID\" is missing");
        assertBadRequest("{\"templateID\":\"base\",\"envVars\":{\"1BAD\":\"x\"}}", "invalid environment variable name");
    }

    private void assertBadRequest(String body, String messagePart) throws IOException {
        try (Response r = http.newCall(api("/v2/sandboxes").post(json(body)).build()).execute()) {
            String text = r.body().string();
            assertEquals(400, r.code(), text);
            JsonNode err = JSON.readTree(text);
            assertEquals(400, err.get("code").asInt());
            assertTrue(err.get("message").asText().contains(messagePart), text);
        }
    }

    private JsonNode get(String id) throws IOException {
        try (Response r = http.newCall(api("/sandboxes/" + id).get().build()).execute()) {
            assertEquals(200, r.code());
            return JSON.readTree(r.body().string());
        }
    }

    /** The egress the emulator received, as the local sandbox's network: host or none; refusals as E2B. */
    @ParameterizedTest(name = "{0} -> {1}")
    @CsvSource(delimiter = '|', quoteCharacter = '`', value = {
        "{}                                                                        | host",
        "{\"allow_internet_access\":true}                                          | host",
        "{\"allow_internet_access\":false}                                         | none",
        "{\"network\":{\"denyOut\":[\"0.0.0.0/0\"]}}                               | none",
        "{\"network\":{\"allowOut\":[\"example.com\"],\"denyOut\":[\"0.0.0.0/0\"]}} | none",
        "{\"network\":{\"allowOut\":[\"1.1.1.1\",\"8.8.8.0/24\",\"example.com\"],\"denyOut\":[\"0.0.0.0/0\"]}} | none",
        "{\"network\":{\"allowOut\":[\"127.0.0.1\"],\"denyOut\":[\"0.0.0.0/0\"]}}   | host",
        "{\"network\":{\"allowOut\":[\"127.0.0.0/8\"],\"denyOut\":[\"0.0.0.0/0\"]}} | host",
        "{\"network\":{\"allowOut\":[\"localhost\"],\"denyOut\":[\"0.0.0.0/0\"]}}   | host",
        "{\"network\":{\"allowOut\":[\"::1\"],\"denyOut\":[\"0.0.0.0/0\"]}}         | host",
        "{\"network\":{\"allowOut\":[\"0.0.0.0/0\"],\"denyOut\":[\"0.0.0.0/0\"]}}   | host",
        "{\"network\":{\"allowOut\":[\"1.1.1.1\"]}}                                 | host",
        "{\"network\":{\"denyOut\":[\"10.0.0.0/8\"]}}                               | none",
        "{\"allow_internet_access\":false,\"network\":{\"allowOut\":[\"127.0.0.1\"]}} | host",
        "{\"allow_internet_access\":true,\"network\":{\"denyOut\":[\"0.0.0.0/0\"]}}   | none",
        "{\"network\":{\"allowOut\":[\"example.com\"]}}                             | 400:When specifying allowed domains in allow out, you must include 'ALL_TRAFFIC' in deny out",
        "{\"network\":{\"allowOut\":[\"*.example.com\"],\"denyOut\":[\"10.0.0.0/8\"]}} | 400:When specifying allowed domains",
        "{\"network\":{\"denyOut\":[\"example.com\"]}}                              | 400:invalid denied CIDR example.com",
        "{\"network\":{\"denyOut\":[\"0.0.0.0\"]}}                                  | 400:invalid denied CIDR 0.0.0.0",
        "{\"network\":{\"allowOut\":[\"300.1.1.1\"],\"denyOut\":[\"0.0.0.0/0\"]}}   | 400:invalid allow out entry",
        "{\"allow_internet_access\":\"no\"}                                         | 400:allow_internet_access",
    })
    void egressBecomesTheLocalNetwork(String fields, String expected) throws IOException {
        JsonNode f = JSON.readTree(fields);
        ((com.fasterxml.jackson.databind.node.ObjectNode) f).put("templateID", "base");
        if (expected.startsWith("400:")) {
            assertBadRequest(f.toString(), expected.substring(4));
            assertEquals(0, emulator.ledger().created(), "a refused create creates nothing");
            return;
        }
        JsonNode sb = create(f.toString());
        assertEquals(expected.equals("host"), workspaces.last().hostNetwork, fields);
        assertEquals(204, kill(sb.get("sandboxID").asText()));
    }

    @Test
    void networkUpdateReplacesTheEgressForTheNextCommand() throws IOException {
        JsonNode sb = create("{\"templateID\":\"base\",\"network\":{\"denyOut\":[\"0.0.0.0/0\"]}}");
        String id = sb.get("sandboxID").asText();
        String token = sb.get("envdAccessToken").asText();
        run(id, token);
        try (Response r = http.newCall(api("/sandboxes/" + id + "/network").put(json("{\"allowOut\":[\"127.0.0.1\"],\"denyOut\":[\"0.0.0.0/0\"]}")).build()).execute()) {
            assertEquals(204, r.code());
        }
        run(id, token);
        JsonNode detail = get(id);
        assertEquals("127.0.0.1", detail.path("network").path("allowOut").get(0).asText());
        try (Response r = http.newCall(api("/sandboxes/" + id + "/network").put(json("{\"allow_internet_access\":false}")).build()).execute()) {
            assertEquals(204, r.code());
        }
        run(id, token);
        try (Response r = http.newCall(api("/sandboxes/" + id + "/network").put(json("{\"allowOut\":[\"example.com\"]}")).build()).execute()) {
            assertEquals(400, r.code());
        }
        assertEquals(List.of(false, true, false), workspaces.last().networkPerExec);
        assertEquals(204, kill(id));
    }

    private void run(String id, String token) throws IOException {
        try (Response r = http.newCall(start(id, token, "{\"process\":{\"cmd\":\"/bin/bash\",\"args\":[\"-l\",\"-c\",\"true\"]},\"stdin\":false}").build()).execute()) {
            List<Frame> frames = readAll(r.body().byteStream());
            assertEquals(2, frames.get(frames.size() - 1).flags);
        }
    }

    @Test
    void setTimeoutMovesTheExpiryAndTheSandboxExpires() throws Exception {
        String id = create("{\"templateID\":\"base\",\"timeout\":120}").get("sandboxID").asText();
        try (Response r = http.newCall(api("/sandboxes/" + id + "/timeout").post(json("{\"timeout\":1}")).build()).execute()) {
            assertEquals(204, r.code());
        }
        long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
        while (emulator.ledger().live() > 0 && System.nanoTime() < deadline) {
            Thread.sleep(50);
        }
        assertEquals(0, emulator.ledger().live(), "the sandbox's own timeout kills it");
        try (Response r = http.newCall(api("/sandboxes/" + id).get().build()).execute()) {
            assertEquals(404, r.code());
        }
        try (Response r = http.newCall(api("/sandboxes/" + id + "/timeout").post(json("{\"timeout\":10}")).build()).execute()) {
            assertEquals(404, r.code());
        }
    }

    @Test
    void connectOnlyExtendsTheTimeout() throws IOException {
        JsonNode sb = create("{\"templateID\":\"base\",\"timeout\":600}");
        String id = sb.get("sandboxID").asText();
        String endAt = get(id).get("endAt").asText();
        try (Response r = http.newCall(api("/v2/sandboxes/" + id + "/connect").post(json("{\"timeout\":10}")).build()).execute()) {
            assertEquals(200, r.code());
            JsonNode c = JSON.readTree(r.body().string());
            assertEquals(id, c.get("sandboxID").asText());
            assertEquals(sb.get("envdAccessToken").asText(), c.get("envdAccessToken").asText());
        }
        assertEquals(endAt, get(id).get("endAt").asText(), "a shorter timeout does not shorten the TTL");
        assertEquals(204, kill(id));
    }

    @Test
    void listFiltersByMetadataAndState() throws IOException {
        String a = create("{\"templateID\":\"base\",\"metadata\":{\"sandbox4j-run-id\":\"aaaa\",\"team\":\"x y\"}}").get("sandboxID").asText();
        String b = create("{\"templateID\":\"base\",\"metadata\":{\"sandbox4j-run-id\":\"bbbb\"}}").get("sandboxID").asText();
        // as the SDK sends it: metadata=<urlencoded k=v&k=v>, state comma-joined
        assertEquals(List.of(a), ids("/v2/sandboxes?state=running,paused&metadata=sandbox4j-run-id%3Daaaa"));
        assertEquals(List.of(a), ids("/v2/sandboxes?metadata=sandbox4j-run-id%3Daaaa%26team%3Dx%2By"));
        assertEquals(List.of(b), ids("/sandboxes?metadata=sandbox4j-run-id%3Dbbbb"));
        assertEquals(List.of(), ids("/v2/sandboxes?state=paused&metadata=sandbox4j-run-id%3Daaaa"));
        assertEquals(2, ids("/v2/sandboxes").size());
        try (Response r = http.newCall(api("/v2/sandboxes?limit=1").get().build()).execute()) {
            assertEquals(1, JSON.readTree(r.body().string()).size());
            assertEquals("1", r.header("X-Next-Token"));
        }
        assertEquals(204, kill(a));
        assertEquals(204, kill(b));
        assertEquals(List.of(), ids("/v2/sandboxes?metadata=sandbox4j-run-id%3Daaaa"));
    }

    private List<String> ids(String path) throws IOException {
        try (Response r = http.newCall(api(path).get().build()).execute()) {
            String text = r.body().string();
            assertEquals(200, r.code(), text);
            List<String> out = new ArrayList<>();
            for (JsonNode n : JSON.readTree(text)) {
                out.add(n.get("sandboxID").asText());
                assertEquals("running", n.get("state").asText());
                assertTrue(n.has("startedAt") && n.has("endAt") && n.has("cpuCount") && n.has("memoryMB"));
            }
            return out;
        }
    }

    // ------------------------------------------------------------------ faults

    @Test
    void failedCreatesCreateNothing() throws IOException {
        emulator.faults().failCreate(503, 1);
        try (Response r = http.newCall(api("/v2/sandboxes").post(json("{\"templateID\":\"base\"}")).build()).execute()) {
            assertEquals(503, r.code());
            JsonNode err = JSON.readTree(r.body().string());
            assertEquals(503, err.get("code").asInt());
            assertEquals("sandbox_capacity_unavailable", err.get("error_code").asText());
        }
        emulator.faults().rateLimitCreate(1, 2);
        try (Response r = http.newCall(api("/v2/sandboxes").post(json("{\"templateID\":\"base\"}")).build()).execute()) {
            assertEquals(429, r.code());
            assertEquals("2", r.header("Retry-After"));
            assertTrue(JSON.readTree(r.body().string()).get("message").asText().contains("maximum number of concurrent"));
        }
        assertEquals(0, emulator.ledger().created());
        assertEquals(204, kill(create("{\"templateID\":\"base\"}").get("sandboxID").asText()));
    }

    @Test
    void aLostCreateResponseLeavesASandboxToFindByMetadata() throws IOException {
        emulator.faults().loseCreateResponse(1);
        Request req = api("/v2/sandboxes").post(json("{\"templateID\":\"base\",\"metadata\":{\"sandbox4j-run-id\":\"lost0001\"}}")).build();
        assertThrows(IOException.class, () -> http.newCall(req).execute().close());
        assertEquals(1, emulator.ledger().live(), "the sandbox was created");
        List<String> found = ids("/v2/sandboxes?metadata=sandbox4j-run-id%3Dlost0001");
        assertEquals(1, found.size());
        assertEquals(204, kill(found.get(0)));
    }

    @Test
    void teardownFailsThenSucceeds() throws IOException {
        String id = create("{\"templateID\":\"base\"}").get("sandboxID").asText();
        emulator.faults().failTeardown(500, 2);
        for (int i = 0; i < 2; i++) {
            try (Response r = http.newCall(api("/sandboxes/" + id).delete().build()).execute()) {
                assertEquals(500, r.code());
                assertEquals(500, JSON.readTree(r.body().string()).get("code").asInt());
            }
            assertEquals(1, emulator.ledger().live(), "a failed kill leaves the sandbox alive");
        }
        assertEquals(204, kill(id));
    }

    @Test
    void slowAnswersStillAnswer() throws IOException {
        emulator.faults().slow(Duration.ofMillis(100));
        String id = create("{\"templateID\":\"base\"}").get("sandboxID").asText();
        emulator.faults().reset();
        assertEquals(204, kill(id));
    }

    @Test
    void theTraceMasksTheKeyAndTheToken() throws IOException {
        emulator.close();
        emulator = E2bEmulator.builder().apiKey(KEY).machines(workspaces).trace(true).build();
        java.io.PrintStream saved = System.err;
        java.io.ByteArrayOutputStream captured = new java.io.ByteArrayOutputStream();
        String token;
        System.setErr(new java.io.PrintStream(captured, true, java.nio.charset.StandardCharsets.UTF_8));
        try {
            JsonNode sb = create("{\"templateID\":\"base\"}");
            token = sb.get("envdAccessToken").asText();
            try (Response r = http.newCall(start(sb.get("sandboxID").asText(), token, "{\"process\":{\"cmd\":\"true\"}}")
                    .header("Authorization", "Basic dXNlcjo=").build()).execute()) {
                readAll(r.body().byteStream());
            }
            assertEquals(204, kill(sb.get("sandboxID").asText()));
        } finally {
            System.setErr(saved);
        }
        String log = captured.toString(java.nio.charset.StandardCharsets.UTF_8);
        assertTrue(log.contains("POST /v2/sandboxes") && log.contains("POST /process.Process/Start"), log);
        assertTrue(log.contains("envelope flags=0 len="), log);
        assertFalse(log.contains(KEY), "the API key is in the trace");
        assertFalse(log.contains(token), "the envd token is in the trace");
        assertFalse(log.contains("dXNlcjo="), "the Authorization header is in the trace");
    }

    @Test
    void unknownRoutesAnswer404InTheErrorShape() throws IOException {
        try (Response r = http.newCall(api("/nope").get().build()).execute()) {
            assertEquals(404, r.code());
            assertEquals(404, JSON.readTree(r.body().string()).get("code").asInt());
        }
    }
}
