package dev.sandbox4j.emulators.vercel;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.io.InputStream;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Pins the emulator to Vercel's documented wire format (vercel.md and the recordings), with plain
 * HTTP requests: paths, query, headers, bodies and NDJSON lines as the official SDK sends and reads them.
 */
class VercelEmulatorWireTest {
    static final String TOKEN = "test-token-0123456789";
    static final String TEAM = "team_FAKE123";
    static final String PROJECT = "prj_FAKE456";

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
    void stop() throws InterruptedException {
        int live = emulator.ledger().live();
        int local = machines.openLocalSandboxesSettled(Duration.ofSeconds(30));
        emulator.close();
        assertEquals(0, live, "sandboxes left running: " + emulator.ledger());
        assertEquals(0, local, "local sandboxes left open");
    }

    /** Recording a#1: the exact create body the SDK sent for deny-all. */
    static final String CREATE_A = "{\"projectId\":\"" + PROJECT + "\",\"ports\":[],\"timeout\":60000,"
            + "\"resources\":{\"vcpus\":1},\"networkPolicy\":{\"mode\":\"deny-all\"}}";

    JsonNode create(String body) throws Exception {
        Wire.Response r = wire.post("/v3/sandboxes", body);
        assertEquals(200, r.status, r.body);
        assertEquals("application/json", r.contentType);
        return r.json();
    }

    static void assertSdkSession(JsonNode s) {
        for (String f : List.of("id", "memory", "vcpus", "region", "timeout", "status", "requestedAt", "createdAt",
                "cwd", "updatedAt")) {
            assertTrue(s.hasNonNull(f), "session." + f + " missing: " + s);
        }
        assertTrue(Set.of("pending", "running", "stopping", "stopped", "failed", "aborted", "snapshotting")
                .contains(s.get("status").asText()));
    }

    static void assertSdkSandbox(JsonNode s) {
        for (String f : List.of("name", "persistent", "createdAt", "updatedAt", "currentSessionId", "status")) {
            assertTrue(s.hasNonNull(f), "sandbox." + f + " missing: " + s);
        }
    }

    static void assertSdkCommand(JsonNode c) {
        for (String f : List.of("id", "name", "args", "cwd", "sessionId", "startedAt")) {
            assertTrue(c.hasNonNull(f), "command." + f + " missing: " + c);
        }
        assertTrue(c.has("exitCode"), "command.exitCode missing: " + c);
    }

    HttpRequest cmdRequest(String sessionId, String body) {
        return wire.request("/v2/sandboxes/sessions/" + sessionId + "/cmd", null)
                .POST(HttpRequest.BodyPublishers.ofString(body)).build();
    }

    List<JsonNode> runWait(String sessionId, String body) throws Exception {
        HttpResponse<InputStream> r = wire.stream(cmdRequest(sessionId, body));
        assertEquals(200, r.statusCode());
        assertEquals("application/x-ndjson", r.headers().firstValue("content-type").orElse(null));
        return Wire.lines(r.body());
    }

    static String stdout(List<JsonNode> lines, String stream) {
        StringBuilder sb = new StringBuilder();
        for (JsonNode l : lines) {
            if (stream.equals(l.path("stream").asText())) {
                sb.append(l.get("data").asText());
            }
        }
        return sb.toString();
    }

    @Test
    void recordedScenarioA_createWriteRunStop() throws Exception {
        JsonNode created = create(CREATE_A);
        assertSdkSandbox(created.get("sandbox"));
        assertSdkSession(created.get("session"));
        assertTrue(created.get("routes").isArray());
        String session = created.get("session").get("id").asText();
        assertEquals(session, created.get("sandbox").get("currentSessionId").asText());
        assertEquals("running", created.get("session").get("status").asText());
        assertEquals(60000, created.get("session").get("timeout").asLong());
        assertEquals(1, created.get("session").get("vcpus").asInt());
        assertEquals(2048, created.get("session").get("memory").asInt());
        assertEquals("deny-all", created.get("session").get("networkPolicy").get("mode").asText());
        assertEquals("/vercel/sandbox", created.get("session").get("cwd").asText());
        assertEquals(1, emulator.ledger().live());

        // a#2: gzip(tar) with the entry relative to x-cwd "/".
        byte[] tar = new Tars().file("vercel/sandbox/hello.js", "console.log('hi');\nconsole.error('err');\n", 0644).gzip();
        Wire.Response w = wire.upload(session, "/", tar);
        assertEquals(200, w.status, w.body);
        assertEquals("{}", w.body);

        // a#3: run with wait + logs: command line, log lines, final command line.
        List<JsonNode> lines = runWait(session, "{\"command\":\"node\",\"args\":[\"/vercel/sandbox/hello.js\"],"
                + "\"env\":{},\"sudo\":false,\"wait\":true,\"logs\":true,\"timeout\":20000}");
        JsonNode first = lines.get(0).get("command");
        assertSdkCommand(first);
        assertTrue(first.get("exitCode").isNull());
        assertEquals("node", first.get("name").asText());
        assertEquals("/vercel/sandbox/hello.js", first.get("args").get(0).asText());
        assertEquals(session, first.get("sessionId").asText());
        JsonNode last = lines.get(lines.size() - 1).get("command");
        assertSdkCommand(last);
        assertEquals(0, last.get("exitCode").asInt());
        assertTrue(last.get("durationMs").isNumber());
        assertEquals(first.get("id").asText(), last.get("id").asText());
        assertEquals("hi\n", stdout(lines, "stdout"));
        assertEquals("err\n", stdout(lines, "stderr"));
        for (JsonNode l : lines.subList(1, lines.size() - 1)) {
            assertTrue(Set.of("stdout", "stderr").contains(l.get("stream").asText()), l.toString());
            assertTrue(l.get("data").isTextual());
        }

        // a#4: stop, no body.
        Wire.Response s = wire.postEmpty("/v2/sandboxes/sessions/" + session + "/stop");
        assertEquals(200, s.status, s.body);
        assertSdkSession(s.json().get("session"));
        assertEquals("stopped", s.json().get("session").get("status").asText());
        assertEquals("stopped", s.json().get("sandbox").get("status").asText());
        assertTrue(s.json().get("session").get("stoppedAt").isNumber());
        assertEquals(0, emulator.ledger().live());
        assertEquals(1, emulator.ledger().destroyed());

        // Runtime calls on a stopped session: 410 sandbox_stopped (the SDK's resume trigger).
        Wire.Response after = wire.post("/v2/sandboxes/sessions/" + session + "/cmd",
                "{\"command\":\"true\",\"args\":[],\"env\":{},\"sudo\":false}");
        assertEquals(410, after.status);
        assertEquals("sandbox_stopped", after.json().get("error").get("code").asText());
        assertEquals(410, wire.upload(session, "/", tar).status);
        // Stop again is answered like the first (idempotent, as Vercel's own mock does).
        assertEquals(200, wire.postEmpty("/v2/sandboxes/sessions/" + session + "/stop").status);
    }

    @Test
    void recordedScenarioB_v2RuntimeAllowAllThenLockDown() throws Exception {
        Wire.Response r = wire.post("/v2/sandboxes", "{\"projectId\":\"" + PROJECT + "\",\"ports\":[],"
                + "\"timeout\":120000,\"resources\":{\"vcpus\":2},\"runtime\":\"node24\","
                + "\"networkPolicy\":{\"mode\":\"allow-all\"}}");
        assertEquals(200, r.status, r.body);
        JsonNode created = r.json();
        assertEquals("node24", created.get("session").get("runtime").asText());
        assertEquals(4096, created.get("session").get("memory").asInt());
        String session = created.get("session").get("id").asText();
        String name = created.get("sandbox").get("name").asText();

        List<JsonNode> lines = runWait(session, "{\"command\":\"bash\",\"args\":[\"-c\",\"echo $CI\"],"
                + "\"cwd\":\"/vercel/sandbox\",\"env\":{\"CI\":\"1\"},\"sudo\":false,\"wait\":true,\"logs\":true}");
        assertEquals("1\n", stdout(lines, "stdout"));
        assertEquals(0, lines.get(lines.size() - 1).get("command").get("exitCode").asInt());

        // b#3 PATCH the record, b#4/b#5 update the live session.
        Wire.Response patch = wire.method("PATCH", "/v2/sandboxes/" + name, "projectId=" + PROJECT,
                "{\"networkPolicy\":{\"mode\":\"deny-all\"}}");
        assertEquals(200, patch.status, patch.body);
        assertEquals("deny-all", patch.json().get("sandbox").get("networkPolicy").get("mode").asText());
        Wire.Response np = wire.post("/v2/sandboxes/sessions/" + session + "/network-policy", "{\"mode\":\"deny-all\"}");
        assertEquals(200, np.status, np.body);
        assertSdkSession(np.json().get("session"));
        assertEquals("deny-all", np.json().get("session").get("networkPolicy").get("mode").asText());

        runWait(session, "{\"command\":\"true\",\"args\":[],\"env\":{},\"sudo\":false,\"wait\":true}");
        assertEquals(List.of(true, false), machines.last().networkAtRun);

        assertEquals(200, wire.postEmpty("/v2/sandboxes/sessions/" + session + "/stop").status);
    }

    @Test
    void everyRequestNeedsTheBearerTokenAndTheTeam() throws Exception {
        for (Wire w : List.of(new Wire(emulator, null, TEAM), new Wire(emulator, "wrong", TEAM),
                new Wire(emulator, TOKEN, null), new Wire(emulator, TOKEN, "team_other"))) {
            Wire.Response r = w.post("/v3/sandboxes", CREATE_A);
            assertEquals(403, r.status, r.body);
            assertEquals("forbidden", r.json().get("error").get("code").asText());
            assertTrue(r.json().get("error").get("message").isTextual());
            assertFalse(r.body.contains(TOKEN), "token echoed");
        }
        assertEquals(0, emulator.ledger().created());
    }

    @Test
    void createRefusesWhatTheApiWouldRefuse() throws Exception {
        String[][] cases = {
            {"{\"ports\":[]}", "400"},
            {"{\"projectId\":\"prj_other\",\"ports\":[]}", "404"},
            {"{\"projectId\":\"" + PROJECT + "\",\"resources\":{\"vcpus\":3}}", "400"},
            {"{\"projectId\":\"" + PROJECT + "\",\"timeout\":-5}", "400"},
            {"{\"projectId\":\"" + PROJECT + "\",\"runtime\":\"node24\"}", "400"},
            {"{\"projectId\":\"" + PROJECT + "\",\"networkPolicy\":{\"mode\":\"sometimes\"}}", "400"},
            {"{\"projectId\":\"" + PROJECT + "\",\"networkPolicy\":{\"allow\":[\"a.com\"],\"subnet\":{}}}", "400"},
            {"{\"projectId\":\"" + PROJECT + "\",\"networkPolicy\":{\"subnets\":{\"deny\":[\"10.0.0.1/8\"]}}}", "400"},
            {"{\"projectId\":\"" + PROJECT + "\",\"networkPolicy\":{\"allow\":{\"a.com\":[{\"transform\":[],"
                    + "\"forwardURL\":\"https://p.example\"}]}}}", "400"},
            {"{\"projectId\":\"" + PROJECT + "\",\"ports\":[3000]}", "400"},
            {"{\"projectId\":\"" + PROJECT + "\",\"env\":{\"BAD NAME\":\"x\"}}", "400"},
            {"not json", "400"},
        };
        for (String[] c : cases) {
            Wire.Response r = wire.post("/v3/sandboxes", c[0]);
            assertEquals(Integer.parseInt(c[1]), r.status, c[0] + " -> " + r.body);
            assertTrue(r.json().get("error").get("code").isTextual());
            assertTrue(r.json().get("error").get("message").isTextual());
        }
        assertEquals(0, emulator.ledger().created());
    }

    @Test
    void theReceivedPolicyDecidesTheNetworkOfEachCommand() throws Exception {
        try (Canary canary = new Canary()) {
            String session = create(CREATE_A).get("session").get("id").asText();
            String np = "/v2/sandboxes/sessions/" + session + "/network-policy";
            List<String[]> steps = List.of(
                    new String[] {null, "deny-all"},
                    new String[] {"{\"allow\":[\"example.com\",\"*.github.com\"]}", "domains"},
                    new String[] {"{\"subnets\":{\"allow\":[\"10.0.0.0/8\"]}}", "other-subnet"},
                    new String[] {"{\"allow\":{\"*\":[]},\"subnets\":{\"deny\":[\"127.0.0.0/8\"]}}", "denied-loopback"},
                    new String[] {"{\"subnets\":{\"allow\":[\"127.0.0.1/32\"]}}", "control"});
            for (String[] step : steps) {
                if (step[0] != null) {
                    Wire.Response r = wire.post(np, step[0]);
                    assertEquals(200, r.status, r.body);
                }
                String body = Wire.JSON.createObjectNode().put("command", "bash")
                        .set("args", Wire.JSON.createArrayNode().add("-c").add(canary.knock(step[1]))).toString();
                List<JsonNode> lines = runWait(session, body.replace("}", ",\"wait\":true,\"logs\":true}"));
                int exit = lines.get(lines.size() - 1).get("command").get("exitCode").asInt();
                assertEquals(step[1].equals("control") ? 0 : 3, exit, step[1] + ": " + lines);
            }
            // The control's bytes arrived, so any earlier run's bytes would have arrived too.
            assertTrue(canary.await("control", 10_000), "the control never reached the canary");
            for (String tag : List.of("deny-all", "domains", "other-subnet", "denied-loopback")) {
                assertEquals(0, canary.bytes(tag), tag + " reached the host");
            }
            wire.postEmpty("/v2/sandboxes/sessions/" + session + "/stop");
        }
    }

    /**
     * A list reaches the machine as a list (the local runner's proxy enforces it; the contract suite's
     * list case checks that for real): at the create, and on a live update, switched at once when no
     * command runs; a policy with a rule, which the local runner would widen, fails closed.
     */
    @Test
    void aListGoesToTheMachineAtCreateAndOnALiveUpdate() throws Exception {
        JsonNode created = create("{\"projectId\":\"" + PROJECT + "\",\"networkPolicy\":{\"allow\":[\"allowed.test\"]}}");
        String session = created.get("session").get("id").asText();
        TestMachines.Recording m = machines.last();
        assertEquals(dev.sandbox4j.policy.EgressPolicy.allowOnly("allowed.test"), m.egress, "the machine opened under the list");
        String np = "/v2/sandboxes/sessions/" + session + "/network-policy";
        String run = "{\"command\":\"true\",\"args\":[],\"wait\":true}";
        runWait(session, run);
        assertEquals(200, wire.post(np, "{\"allow\":[\"b.test\",\"*.c.test\"],\"subnets\":{\"deny\":[\"10.0.0.0/8\"]}}").status);
        dev.sandbox4j.policy.EgressPolicy second = dev.sandbox4j.policy.EgressPolicy.builder().allowDomain("b.test")
                .allowDomain("*.c.test").denyCidr("10.0.0.0/8").build();
        assertEquals(second, m.egress, "switched by the update itself: no command was running");
        runWait(session, run);
        assertEquals(200, wire.post(np, "{\"allow\":{\"b.test\":[{\"response\":{\"statusCode\":403}}]}}").status);
        runWait(session, run);
        assertEquals(List.of(dev.sandbox4j.policy.EgressPolicy.allowOnly("allowed.test"), second,
                dev.sandbox4j.policy.EgressPolicy.denyAll()), m.egressAtRun);
        wire.postEmpty("/v2/sandboxes/sessions/" + session + "/stop");
    }

    @Test
    void getByNameFindsTheSandboxAndItsSession() throws Exception {
        JsonNode created = create("{\"projectId\":\"" + PROJECT + "\",\"name\":\"sandbox4j-abc123\",\"ports\":[],"
                + "\"persistent\":false,\"timeout\":60000,\"tags\":{\"sandbox4j-run-id\":\"abc123\"}}");
        String session = created.get("session").get("id").asText();
        assertEquals("sandbox4j-abc123", created.get("sandbox").get("name").asText());
        assertFalse(created.get("sandbox").get("persistent").asBoolean());

        Wire.Response dup = wire.post("/v3/sandboxes", "{\"projectId\":\"" + PROJECT + "\",\"name\":\"sandbox4j-abc123\"}");
        assertEquals(409, dup.status);

        Wire.Response got = wire.get("/v2/sandboxes/sandbox4j-abc123", "projectId=" + PROJECT);
        assertEquals(200, got.status, got.body);
        assertSdkSandbox(got.json().get("sandbox"));
        assertSdkSession(got.json().get("session"));
        assertEquals(session, got.json().get("session").get("id").asText());
        assertEquals(404, wire.get("/v2/sandboxes/sandbox4j-nothere", "projectId=" + PROJECT).status);
        assertEquals("not_found", wire.get("/v2/sandboxes/sandbox4j-nothere", "projectId=" + PROJECT)
                .json().get("error").get("code").asText());
        assertEquals(400, wire.get("/v2/sandboxes/sandbox4j-abc123", null).status);

        Wire.Response session1 = wire.get("/v2/sandboxes/sessions/" + session, null);
        assertEquals(200, session1.status);
        assertSdkSession(session1.json().get("session"));

        Wire.Response listed = wire.get("/v2/sandboxes", "project=" + PROJECT + "&namePrefix=sandbox4j-&limit=10");
        assertEquals(200, listed.status, listed.body);
        assertEquals(1, listed.json().get("sandboxes").size());
        assertSdkSandbox(listed.json().get("sandboxes").get(0));
        assertEquals(1, listed.json().get("pagination").get("count").asInt());
        assertTrue(listed.json().get("pagination").get("next").isNull());
        assertEquals(0, wire.get("/v2/sandboxes", "project=" + PROJECT + "&namePrefix=other").json()
                .get("sandboxes").size());
        assertEquals(1, wire.get("/v2/sandboxes", "project=" + PROJECT + "&tags=sandbox4j-run-id:abc123").json()
                .get("sandboxes").size());
        assertEquals(0, wire.get("/v2/sandboxes", "project=" + PROJECT + "&tags=sandbox4j-run-id:other").json()
                .get("sandboxes").size());
        assertEquals(400, wire.get("/v2/sandboxes", null).status);

        Wire.Response del = wire.method("DELETE", "/v2/sandboxes/sandbox4j-abc123", "projectId=" + PROJECT, null);
        assertEquals(200, del.status, del.body);
        assertSdkSandbox(del.json().get("sandbox"));
        assertEquals(0, emulator.ledger().live());
        assertEquals(404, wire.get("/v2/sandboxes/sandbox4j-abc123", "projectId=" + PROJECT).status);
    }

    @Test
    void resumeStartsANewSession() throws Exception {
        JsonNode created = create("{\"projectId\":\"" + PROJECT + "\",\"name\":\"sbx-resume\",\"ports\":[]}");
        String first = created.get("session").get("id").asText();
        wire.postEmpty("/v2/sandboxes/sessions/" + first + "/stop");
        Wire.Response got = wire.get("/v2/sandboxes/sbx-resume", "projectId=" + PROJECT + "&resume=true");
        assertEquals(200, got.status);
        assertTrue(got.json().get("resumed").asBoolean());
        String second = got.json().get("session").get("id").asText();
        assertFalse(first.equals(second));
        assertEquals(1, emulator.ledger().live());
        wire.postEmpty("/v2/sandboxes/sessions/" + second + "/stop");
    }

    @Test
    void perCommandTimeoutIsEnforced() throws Exception {
        String session = create(CREATE_A).get("session").get("id").asText();
        List<JsonNode> lines = runWait(session, "{\"command\":\"bash\",\"args\":[\"-c\",\"echo start; sleep 60\"],"
                + "\"env\":{},\"sudo\":false,\"wait\":true,\"logs\":true,\"timeout\":2000}");
        JsonNode last = lines.get(lines.size() - 1).get("command");
        assertEquals(137, last.get("exitCode").asInt());
        assertEquals("start\n", stdout(lines, "stdout"));
        wire.postEmpty("/v2/sandboxes/sessions/" + session + "/stop");
    }

    @Test
    void detachedCommandKillWaitAndLogs() throws Exception {
        String session = create(CREATE_A).get("session").get("id").asText();
        Wire.Response started = wire.post("/v2/sandboxes/sessions/" + session + "/cmd",
                "{\"command\":\"bash\",\"args\":[\"-c\",\"echo up; sleep 60\"],\"env\":{},\"sudo\":true,\"timeout\":50000}");
        assertEquals(200, started.status, started.body);
        assertEquals("application/json", started.contentType);
        JsonNode cmd = started.json().get("command");
        assertSdkCommand(cmd);
        assertTrue(cmd.get("exitCode").isNull());
        String id = cmd.get("id").asText();

        Wire.Response killed = wire.post("/v2/sandboxes/sessions/" + session + "/cmd/" + id + "/kill", "{\"signal\":9}");
        assertEquals(200, killed.status, killed.body);
        assertEquals(137, killed.json().get("command").get("exitCode").asInt());

        Wire.Response waited = wire.get("/v2/sandboxes/sessions/" + session + "/cmd/" + id, "wait=true");
        assertEquals(137, waited.json().get("command").get("exitCode").asInt());
        assertTrue(waited.json().get("command").get("durationMs").isNumber());

        // A detached command that ends by itself: wait for it, then replay its logs from the start.
        String done = wire.post("/v2/sandboxes/sessions/" + session + "/cmd", "{\"command\":\"bash\",\"args\":[\"-c\","
                + "\"echo up; echo oops >&2; exit 4\"],\"env\":{},\"sudo\":false}").json().get("command").get("id").asText();
        assertEquals(4, wire.get("/v2/sandboxes/sessions/" + session + "/cmd/" + done, "wait=true").json()
                .get("command").get("exitCode").asInt());
        HttpResponse<InputStream> logs = wire.stream(wire.request("/v2/sandboxes/sessions/" + session + "/cmd/" + done
                + "/logs", null).GET().build());
        assertEquals("application/x-ndjson", logs.headers().firstValue("content-type").orElse(null));
        List<JsonNode> lines = Wire.lines(logs.body());
        assertEquals("up\n", stdout(lines, "stdout"));
        assertEquals("oops\n", stdout(lines, "stderr"));
        for (JsonNode l : lines) {
            assertFalse(l.has("command"), "logs carry no command lines");
        }
        assertEquals(404, wire.get("/v2/sandboxes/sessions/" + session + "/cmd/cmd_nothere", null).status);
        wire.postEmpty("/v2/sandboxes/sessions/" + session + "/stop");
    }

    /**
     * Vercel streams a command's logs while it runs (vercel.md section 6, "Streaming"): the stdout line
     * comes before the command ends, on the wait stream and on {@code /logs} of the same command.
     */
    @Test
    void outputIsStreamedWhileTheCommandRuns() throws Exception {
        String session = create(CREATE_A).get("session").get("id").asText();
        HttpResponse<InputStream> r = wire.stream(cmdRequest(session, "{\"command\":\"bash\",\"args\":[\"-c\","
                + "\"echo ready; sleep 30\"],\"env\":{},\"sudo\":false,\"wait\":true,\"logs\":true,\"timeout\":50000}"));
        java.io.BufferedReader reader = new java.io.BufferedReader(new java.io.InputStreamReader(r.body(), StandardCharsets.UTF_8));
        JsonNode first = Wire.JSON.readTree(reader.readLine());
        String id = first.get("command").get("id").asText();
        JsonNode out = Wire.JSON.readTree(reader.readLine());
        assertEquals("stdout", out.get("stream").asText(), out.toString());
        assertEquals("ready\n", out.get("data").asText());
        // the command still runs: its record has no exit code yet
        assertTrue(wire.get("/v2/sandboxes/sessions/" + session + "/cmd/" + id, null).json()
                .get("command").get("exitCode").isNull(), "the output came only after the command ended");
        HttpResponse<InputStream> logs = wire.stream(wire.request("/v2/sandboxes/sessions/" + session + "/cmd/" + id
                + "/logs", null).GET().build());
        java.io.BufferedReader logReader = new java.io.BufferedReader(new java.io.InputStreamReader(logs.body(), StandardCharsets.UTF_8));
        assertEquals("ready\n", Wire.JSON.readTree(logReader.readLine()).get("data").asText());
        assertEquals(200, wire.post("/v2/sandboxes/sessions/" + session + "/cmd/" + id + "/kill", "{\"signal\":9}").status);
        wire.postEmpty("/v2/sandboxes/sessions/" + session + "/stop");
    }

    @Test
    void stoppingTheSessionEndsARunningStreamWithAnErrorLine() throws Exception {
        String session = create(CREATE_A).get("session").get("id").asText();
        HttpResponse<InputStream> r = wire.stream(cmdRequest(session, "{\"command\":\"bash\",\"args\":[\"-c\","
                + "\"echo go; sleep 60\"],\"env\":{},\"sudo\":false,\"wait\":true,\"logs\":true}"));
        InputStream in = r.body();
        List<JsonNode> lines = new ArrayList<>();
        java.io.BufferedReader reader = new java.io.BufferedReader(new java.io.InputStreamReader(in, StandardCharsets.UTF_8));
        lines.add(Wire.JSON.readTree(reader.readLine()));
        assertTrue(lines.get(0).has("command"));
        assertEquals(200, wire.postEmpty("/v2/sandboxes/sessions/" + session + "/stop").status);
        String line;
        while ((line = reader.readLine()) != null) {
            lines.add(Wire.JSON.readTree(line));
        }
        JsonNode last = lines.get(lines.size() - 1);
        assertEquals("error", last.get("stream").asText(), lines.toString());
        assertEquals("sandbox_stream_closed", last.get("data").get("code").asText());
    }

    @Test
    void extendTimeout() throws Exception {
        String session = create(CREATE_A).get("session").get("id").asText();
        assertEquals(400, wire.post("/v2/sandboxes/sessions/" + session + "/extend-timeout", "{\"duration\":500}").status);
        Wire.Response r = wire.post("/v2/sandboxes/sessions/" + session + "/extend-timeout", "{\"duration\":30000}");
        assertEquals(200, r.status, r.body);
        assertEquals(90000, r.json().get("session").get("timeout").asLong());
        wire.postEmpty("/v2/sandboxes/sessions/" + session + "/stop");
    }

    @Test
    void theSessionTimeoutStopsTheSession() throws Exception {
        String session = create("{\"projectId\":\"" + PROJECT + "\",\"ports\":[],\"timeout\":3000}")
                .get("session").get("id").asText();
        String id = wire.post("/v2/sandboxes/sessions/" + session + "/cmd",
                "{\"command\":\"sleep\",\"args\":[\"60\"]}").json().get("command").get("id").asText();
        // Blocks until the session's own clock (the backstop for a crashed client) kills the command.
        Wire.Response waited = wire.get("/v2/sandboxes/sessions/" + session + "/cmd/" + id, "wait=true");
        assertEquals(137, waited.json().get("command").get("exitCode").asInt());
        assertEquals(0, emulator.ledger().live());
        assertEquals("stopped", wire.get("/v2/sandboxes/sessions/" + session, null).json()
                .get("session").get("status").asText());
    }

    @Test
    void unknownRoutesAndSessions() throws Exception {
        assertEquals(404, wire.get("/v2/sandboxes/sessions/sbx_nothere", null).status);
        assertEquals("not_found", wire.get("/v2/sandboxes/sessions/sbx_nothere", null).json().get("error")
                .get("code").asText());
        assertEquals(404, wire.get("/v9/other", null).status);
        assertEquals(405, wire.get("/v3/sandboxes", null).status);
    }

    @Test
    void commandBodyIsValidated() throws Exception {
        String session = create(CREATE_A).get("session").get("id").asText();
        for (String bad : List.of("{}", "{\"command\":\"\"}", "{\"command\":\"ls\",\"args\":\"-l\"}",
                "{\"command\":\"ls\",\"args\":[1]}", "{\"command\":\"ls\",\"timeout\":0}",
                "{\"command\":\"ls\",\"env\":{\"A\":1}}", "{\"command\":\"ls\",\"wait\":\"yes\"}",
                "{\"command\":\"ls\",\"args\":[\"a\\u0000b\"]}", "{\"command\":\"ls\",\"cwd\":\"relative\"}")) {
            Wire.Response r = wire.post("/v2/sandboxes/sessions/" + session + "/cmd", bad);
            assertEquals(400, r.status, bad + " -> " + r.body);
            assertEquals("bad_request", r.json().get("error").get("code").asText());
        }
        wire.postEmpty("/v2/sandboxes/sessions/" + session + "/stop");
    }

    @Test
    void argvReachesTheProgramByteForByte() throws Exception {
        String session = create(CREATE_A).get("session").get("id").asText();
        String tricky = "it's $(echo no) `no` \"q\" \\ \n naïve ✓";
        String body = Wire.JSON.createObjectNode().put("command", "/usr/bin/python3")
                .set("args", Wire.JSON.createArrayNode().add("-c").add("import sys; print(sys.argv[1], end='')").add(tricky))
                .toString();
        List<JsonNode> lines = runWait(session, body.replace("}", ",\"env\":{\"X\":\"1\"},\"wait\":true,\"logs\":true}"));
        assertEquals(tricky, stdout(lines, "stdout"));
        wire.postEmpty("/v2/sandboxes/sessions/" + session + "/stop");
    }

    @Test
    void filesReadAndMkdir() throws Exception {
        String session = create(CREATE_A).get("session").get("id").asText();
        byte[] tar = new Tars().directory("vercel/sandbox/d/").file("vercel/sandbox/d/a.txt", "A", 0644).gzip();
        assertEquals(200, wire.upload(session, "/", tar).status);
        Wire.Response read = wire.post("/v2/sandboxes/sessions/" + session + "/fs/read", "{\"path\":\"d/a.txt\"}");
        assertEquals(200, read.status);
        assertTrue(read.contentType.contains("application/octet-stream"));
        assertEquals("A", read.body);
        assertEquals(404, wire.post("/v2/sandboxes/sessions/" + session + "/fs/read",
                "{\"path\":\"/vercel/sandbox/missing\"}").status);
        assertEquals(200, wire.post("/v2/sandboxes/sessions/" + session + "/fs/mkdir", "{\"path\":\"e\"}").status);
        List<JsonNode> lines = runWait(session, "{\"command\":\"ls\",\"args\":[\"/vercel/sandbox\"],\"wait\":true,\"logs\":true}");
        assertEquals("d\ne\n", stdout(lines, "stdout"));
        wire.postEmpty("/v2/sandboxes/sessions/" + session + "/stop");
    }

    @Test
    void uploadsAreParsedStrictly() throws Exception {
        String session = create(CREATE_A).get("session").get("id").asText();
        String longDir = "vercel/sandbox/" + "d".repeat(60) + "/" + "e".repeat(60);
        assertEquals(200, wire.upload(session, "/", new Tars().file(longDir + "/prefix.txt", "P", 0644).gzip()).status);
        assertEquals(200, wire.upload(session, "/", new Tars().paxFile(longDir + "/" + "f".repeat(120) + "/pax.txt", "X")
                .gzip()).status);
        assertEquals(200, wire.upload(session, "/vercel/sandbox", new Tars().gnuLongName("gnu/long.txt", "G").gzip()).status);
        assertEquals(200, wire.upload(session, null, new Tars().file("home.txt", "H", 0644).gzip()).status);
        List<JsonNode> lines = runWait(session, "{\"command\":\"bash\",\"args\":[\"-c\",\"cat " + longDir.substring(15)
                + "/prefix.txt " + longDir.substring(15) + "/" + "f".repeat(120) + "/pax.txt gnu/long.txt home.txt\"],"
                + "\"wait\":true,\"logs\":true}");
        assertEquals("PXGH", stdout(lines, "stdout"));

        List<byte[]> bad = List.of(
                new Tars().file("../etc/passwd", "x", 0644).gzip(),
                new Tars().symlink("vercel/sandbox/link", "/etc/passwd").gzip(),
                new Tars().corruptHeader("vercel/sandbox/x").gzip(),
                "not gzip".getBytes(StandardCharsets.UTF_8),
                new Tars().file("vercel/sandbox/t", "x".repeat(2000), 0644).gzipTruncated(1000));
        for (byte[] b : bad) {
            Wire.Response r = wire.upload(session, "/", b);
            assertEquals(400, r.status, r.body);
        }
        wire.postEmpty("/v2/sandboxes/sessions/" + session + "/stop");
    }

    @Test
    void filesUploadedOutsideTheSessionDirectoryCanBeRunByPath() throws Exception {
        String session = create(CREATE_A).get("session").get("id").asText();
        // How our adapter sends code too big for one argv element: a file under /tmp, run by path.
        byte[] tar = new Tars().file("tmp/sandbox4j-code-1.py", "import os\nprint('from tmp', os.getcwd() != '/tmp')\n", 0644).gzip();
        assertEquals(200, wire.upload(session, "/", tar).status);
        List<JsonNode> lines = runWait(session, "{\"command\":\"python3\",\"args\":[\"/tmp/sandbox4j-code-1.py\"],"
                + "\"env\":{},\"sudo\":false,\"wait\":true,\"logs\":true,\"timeout\":20000}");
        assertEquals("from tmp True\n", stdout(lines, "stdout"), lines.toString());
        Wire.Response read = wire.post("/v2/sandboxes/sessions/" + session + "/fs/read", "{\"path\":\"/tmp/sandbox4j-code-1.py\"}");
        assertEquals(200, read.status);
        assertTrue(read.body.startsWith("import os"));
        // A path nobody uploaded is not rewritten: it means what it means inside the sandbox.
        List<JsonNode> other = runWait(session, "{\"command\":\"cat\",\"args\":[\"/tmp/never-uploaded\"],\"wait\":true,\"logs\":true}");
        assertFalse(other.get(other.size() - 1).get("command").get("exitCode").asInt() == 0);
        wire.postEmpty("/v2/sandboxes/sessions/" + session + "/stop");
    }

    @Test
    void anOversizedUploadIsRefusedWithoutBeingInflated() throws Exception {
        emulator.close(); // closes its machines' local runner too: the new emulator gets machines of its own
        machines = new TestMachines();
        emulator = VercelEmulator.builder().token(TOKEN).teamId(TEAM).projectId(PROJECT)
                .machines(machines).maxUploadBytes(1 << 20).build();
        wire = new Wire(emulator, TOKEN, TEAM);
        String session = create(CREATE_A).get("session").get("id").asText();
        // 8 MiB of zeros inside one entry compresses to a few KiB.
        byte[] bomb = new Tars().file("vercel/sandbox/big", "\0".repeat(8 << 20), 0644).gzip();
        assertTrue(bomb.length < 100_000);
        Wire.Response r = wire.upload(session, "/", bomb);
        assertEquals(400, r.status);
        assertTrue(r.json().get("error").get("message").asText().contains("limit"), r.body);
        wire.postEmpty("/v2/sandboxes/sessions/" + session + "/stop");
    }

    @Test
    void theApiBaseWithoutTheApiPrefixWorksToo() throws Exception {
        Wire.Response r = wire.send(java.net.http.HttpRequest.newBuilder(java.net.URI.create(
                emulator.baseUrl() + "/v3/sandboxes?teamId=" + TEAM))
                .header("authorization", "Bearer " + TOKEN).header("content-type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(CREATE_A)).build());
        assertEquals(200, r.status);
        wire.postEmpty("/v2/sandboxes/sessions/" + r.json().get("session").get("id").asText() + "/stop");
    }

    @Test
    void policiesEchoHeaderNamesNeverValues() throws Exception {
        String secret = "sk-live-SECRET-do-not-echo";
        JsonNode created = create("{\"projectId\":\"" + PROJECT + "\",\"ports\":[],\"networkPolicy\":{\"allow\":{"
                + "\"api.example.com\":[{\"transform\":[{\"headers\":{\"Authorization\":\"Bearer " + secret + "\"}}]}],"
                + "\"registry.npmjs.org\":[]},\"subnets\":{\"deny\":[\"10.1.0.0/16\"]}}}");
        JsonNode policy = created.get("session").get("networkPolicy");
        assertEquals("custom", policy.get("mode").asText());
        assertEquals("api.example.com", policy.get("injectionRules").get(0).get("domain").asText());
        assertEquals("Authorization", policy.get("injectionRules").get(0).get("headerNames").get(0).asText());
        assertEquals("10.1.0.0/16", policy.get("deniedCIDRs").get(0).asText());
        assertFalse(created.toString().contains(secret));
        String session = created.get("session").get("id").asText();
        assertFalse(wire.get("/v2/sandboxes/sessions/" + session, null).body.contains(secret));
        wire.postEmpty("/v2/sandboxes/sessions/" + session + "/stop");
    }

    @Test
    void nonJsonRequestsGetTheErrorShape() throws Exception {
        String session = create(CREATE_A).get("session").get("id").asText();
        Wire.Response r = wire.post("/v2/sandboxes/sessions/" + session + "/network-policy", "[1]");
        assertEquals(400, r.status);
        assertNotNull(r.json().get("error").get("code"));
        wire.postEmpty("/v2/sandboxes/sessions/" + session + "/stop");
    }
}
