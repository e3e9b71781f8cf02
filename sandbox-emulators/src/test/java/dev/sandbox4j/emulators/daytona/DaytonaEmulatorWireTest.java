package dev.sandbox4j.emulators.daytona;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import java.net.URI;
import java.net.http.HttpRequest;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The emulator against plain requests built from the Daytona reference, one behaviour per test. */
class DaytonaEmulatorWireTest {
    private static final String RUN_LABEL = "sandbox4j-run-id";
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
        Set<String> left = emulator.sandboxIds();
        emulator.close();
        assertEquals(Set.of(), left, "sandboxes the test did not delete");
        assertEquals(0, emulator.ledger().live());
        for (ProcessMachine m : machines.opened) {
            assertTrue(m.isClosed(), "a machine outlived the emulator");
        }
    }

    private static String body(String egress) {
        return "{\"env\":{},\"labels\":{\"code-toolbox-language\":\"python\"},\"target\":\"us\"" + egress + "}";
    }

    // ------------------------------------------------------------------ API

    @Test
    void createAnswersTheSandboxSchemaWithWhatItWasGiven() throws Exception {
        Wire.Answer a = wire.create("{\"name\":\"sandbox4j-abc\",\"env\":{\"A\":\"1\"},\"labels\":{\"" + RUN_LABEL
                + "\":\"abc\"},\"target\":\"eu\",\"autoStopInterval\":2,\"autoDeleteInterval\":0,\"ttlMinutes\":2,"
                + "\"unknownField\":true,\"networkAllowList\":\"127.0.0.1/32\"}");
        assertEquals(200, a.status, a.toString());
        JsonNode s = a.json;
        for (String f : new String[] {"id", "organizationId", "name", "user", "env", "labels", "public", "networkBlockAll",
                "target", "cpu", "gpu", "memory", "disk", "toolboxProxyUrl", "state", "desiredState", "createdAt"}) {
            assertTrue(s.has(f), "required field " + f + " in " + s);
        }
        assertEquals("sandbox4j-abc", s.get("name").asText());
        assertEquals("daytona", s.get("user").asText());
        assertEquals("eu", s.get("target").asText());
        assertEquals("1", s.get("env").get("A").asText());
        assertEquals("abc", s.get("labels").get(RUN_LABEL).asText());
        assertEquals("127.0.0.1/32", s.get("networkAllowList").asText());
        assertFalse(s.get("networkBlockAll").asBoolean());
        assertFalse(s.has("domainAllowList"));
        assertEquals("started", s.get("state").asText());
        assertEquals(emulator.toolboxProxyUrl(), s.get("toolboxProxyUrl").asText());
        assertEquals(2, s.get("autoStopInterval").asInt());
        assertEquals(0, s.get("autoDeleteInterval").asInt());
        String id = s.get("id").asText();
        assertEquals(Boolean.TRUE, emulator.hostNetwork(id), "an allow list naming the canary gets the host network");
        assertEquals(Boolean.TRUE, machines.last().hostNetwork);
        assertEquals("1", machines.last().env.get("A"));
        assertEquals(200, wire.delete(id).status);
    }

    @Test
    void startingForTheConfiguredReadsThenStartedAndDeleteWaitsMeanwhile() throws Exception {
        emulator.startingPolls(2);
        Wire.Answer created = wire.create(body(",\"networkBlockAll\":true"));
        assertEquals("starting", created.json.get("state").asText());
        assertEquals("started", created.json.get("desiredState").asText());
        String id = created.json.get("id").asText();
        assertEquals("starting", wire.get("/sandbox/" + id).json.get("state").asText());
        Wire.Answer refused = wire.delete(id);
        assertEquals(409, refused.status);
        assertApiError(refused, 409, "Conflict", "Sandbox state change in progress", "/api/sandbox/" + id);
        // the refused delete counted as a look at the state: the start is over now
        assertEquals("started", wire.get("/sandbox/" + id).json.get("state").asText());
        Wire.Answer deleted = wire.delete(id);
        assertEquals(200, deleted.status);
        assertEquals("destroyed", deleted.json.get("desiredState").asText());
        Wire.Answer gone = wire.get("/sandbox/" + id);
        assertApiError(gone, 404, "Not Found", "Sandbox with ID or name " + id + " not found", "/api/sandbox/" + id);
        assertApiError(wire.delete(id), 404, "Not Found", "Sandbox with ID or name " + id + " not found", "/api/sandbox/" + id);
    }

    @Test
    void anImageCreateIsPendingBuildAndMayBeDeletedWhileWaiting() throws Exception {
        emulator.startingPolls(1);
        Wire.Answer a = wire.create("{\"buildInfo\":{\"dockerfileContent\":\"FROM python:3.12-slim\\n\"},\"cpu\":2,\"memory\":4,\"disk\":5}");
        assertEquals(200, a.status, a.toString());
        assertEquals("pending_build", a.json.get("state").asText());
        assertEquals(2, a.json.get("cpu").asInt());
        assertEquals(4, a.json.get("memory").asInt());
        assertEquals(5, a.json.get("disk").asInt());
        assertFalse(a.json.has("snapshot"));
        assertEquals(200, wire.delete(a.json.get("id").asText()).status);
    }

    @Test
    void getAndDeleteAcceptANameAsWellAsAnId() throws Exception {
        String id = wire.createOk("{\"name\":\"by-name\"}");
        assertEquals(id, wire.get("/sandbox/by-name").json.get("id").asText());
        assertEquals(409, wire.create("{\"name\":\"by-name\"}").status, "names are unique");
        assertEquals(200, wire.delete("by-name").status);
        assertEquals(404, wire.get("/sandbox/" + id).status);
    }

    @Test
    void listByLabelsInTheReferencesForm() throws Exception {
        String mine = wire.createOk("{\"labels\":{\"" + RUN_LABEL + "\":\"run1\",\"code-toolbox-language\":\"python\"},\"env\":{\"SECRET_ISH\":\"x\"}}");
        String other = wire.createOk("{\"labels\":{\"" + RUN_LABEL + "\":\"run2\"}}");
        Wire.Answer a = wire.get("/sandbox?labels=" + Wire.encode("{\"" + RUN_LABEL + "\":\"run1\"}"));
        assertEquals(200, a.status, a.toString());
        assertEquals(1, a.json.get("items").size(), a.toString());
        JsonNode item = a.json.get("items").get(0);
        assertEquals(mine, item.get("id").asText());
        assertFalse(item.has("env"), "a SandboxListItem has no env");
        assertTrue(item.has("toolboxProxyUrl"));
        assertTrue(a.json.has("nextCursor"));
        assertTrue(a.json.get("nextCursor").isNull());
        assertEquals(0, wire.get("/sandbox?labels=" + Wire.encode("{\"" + RUN_LABEL + "\":\"nope\"}")).json.get("items").size());
        // pages
        Wire.Answer first = wire.get("/sandbox?limit=1");
        assertEquals(1, first.json.get("items").size());
        String cursor = first.json.get("nextCursor").asText();
        Wire.Answer second = wire.get("/sandbox?limit=1&cursor=" + cursor);
        assertEquals(1, second.json.get("items").size());
        assertTrue(second.json.get("nextCursor").isNull());
        Set<String> seen = new TreeSet<>(Set.of(first.json.get("items").get(0).get("id").asText(),
                second.json.get("items").get(0).get("id").asText()));
        assertEquals(new TreeSet<>(Set.of(mine, other)), seen);
        assertEquals(400, wire.get("/sandbox?labels=" + Wire.encode("{not json")).status);
        assertEquals(400, wire.get("/sandbox?limit=0").status);
        wire.delete(mine);
        wire.delete(other);
        assertEquals(0, wire.get("/sandbox?labels=" + Wire.encode("{\"" + RUN_LABEL + "\":\"run1\"}")).json.get("items").size());
    }

    @Test
    void theKeyIsCheckedOnTheApiAndTheToolboxAndNeverKept() throws Exception {
        String id = wire.createOk("{}");
        Wire.Answer noKey = wire.send(HttpRequest.newBuilder(URI.create(emulator.apiUrl() + "/sandbox/" + id)).GET().build());
        assertApiError(noKey, 401, "Unauthorized", "Unauthorized", "/api/sandbox/" + id);
        Wire.Answer wrong = wire.send(HttpRequest.newBuilder(URI.create(emulator.apiUrl() + "/sandbox"))
                .header("Authorization", "Bearer not-the-key").POST(HttpRequest.BodyPublishers.ofString("{}")).build());
        assertEquals(401, wrong.status);
        Wire.Answer toolbox = wire.send(HttpRequest.newBuilder(URI.create(emulator.toolboxProxyUrl() + "/" + id + "/process/execute"))
                .header("Authorization", "Bearer " + emulator.apiKey() + "x")
                .POST(HttpRequest.BodyPublishers.ofString("{\"command\":\"echo hi\"}")).build());
        assertEquals(401, toolbox.status);
        assertEquals("UNAUTHORIZED", toolbox.json.get("code").asText());
        assertEquals(1, emulator.ledger().created(), "nothing was created without the key");
        for (dev.sandbox4j.emulators.RecordedCall c : emulator.calls()) {
            assertFalse(c.headers().toString().contains(emulator.apiKey()), "the key was recorded: " + c.headers());
        }
        assertEquals(200, wire.delete(id).status);
    }

    @Test
    void createValidatesLikeTheServer() throws Exception {
        assertApiError(wire.create("{\"cpu\":2}"), 400, "Bad Request",
                "Cannot specify Sandbox resources when using a snapshot", "/api/sandbox");
        assertApiError(wire.create("{\"snapshot\":\"x\",\"buildInfo\":{\"dockerfileContent\":\"FROM a\\n\"}}"), 400,
                "Bad Request", "Cannot specify a snapshot when using a build info entry", "/api/sandbox");
        assertApiError(wire.create(body(",\"networkAllowList\":\"1.1.1.1\"")), 400, "Bad Request",
                "Invalid network format: \"1.1.1.1\". Missing CIDR prefix length (e.g., /24)", "/api/sandbox");
        assertApiError(wire.create("{\"env\":[]}"), 400, "Bad Request", "env must be an object", "/api/sandbox");
        assertApiError(wire.create("{\"autoStopInterval\":\"5\"}"), 400, "Bad Request",
                "autoStopInterval must be an integer number", "/api/sandbox");
        assertApiError(wire.create("{\"autoStopInterval\":-1}"), 400, "Bad Request",
                "autoStopInterval must not be negative", "/api/sandbox");
        assertApiError(wire.create("{\"public\":\"yes\"}"), 400, "Bad Request", "public must be a boolean value", "/api/sandbox");
        assertEquals(400, wire.create("{not json").status);
        assertEquals(0, emulator.ledger().created(), "a refused create creates nothing");
    }

    @Test
    void aConflictingMixIsAcceptedAndBlockAllSilentlyWins() throws Exception {
        Wire.Answer a = wire.create(body(",\"networkBlockAll\":true,\"networkAllowList\":\"127.0.0.1/32\",\"domainAllowList\":\"example.com\""));
        assertEquals(200, a.status, a.toString());
        assertTrue(a.json.get("networkBlockAll").asBoolean());
        assertEquals("127.0.0.1/32", a.json.get("networkAllowList").asText());
        assertEquals("example.com", a.json.get("domainAllowList").asText());
        String id = a.json.get("id").asText();
        assertEquals(Boolean.FALSE, emulator.hostNetwork(id));
        // and for real: the command has no network at all
        Wire.Answer r = wire.codeRun(id, "{\"code\":\"import socket\\ntry:\\n    socket.create_connection(('127.0.0.1', "
                + emulator.port() + "), timeout=3)\\n    print('REACHED')\\nexcept OSError as e:\\n    print('BLOCKED', e.errno)\","
                + "\"language\":\"python\",\"timeout\":20}");
        assertEquals(200, r.status, r.toString());
        assertTrue(r.json.get("result").asText().startsWith("BLOCKED"), r.toString());
        wire.delete(id);
    }

    @Test
    void toolboxProxyUrlLookupAndTheKnobThatMakesItNeeded() throws Exception {
        emulator.omitToolboxProxyUrl(true);
        Wire.Answer a = wire.create("{}");
        assertFalse(a.json.has("toolboxProxyUrl"));
        String id = a.json.get("id").asText();
        Wire.Answer url = wire.get("/sandbox/" + id + "/toolbox-proxy-url");
        assertEquals(200, url.status);
        assertEquals(emulator.toolboxProxyUrl(), url.json.get("url").asText());
        assertEquals(404, wire.get("/sandbox/nope/toolbox-proxy-url").status);
        wire.delete(id);
    }

    @Test
    void configHealthAndTheRefusedEventStream() throws Exception {
        Wire.Answer config = wire.get("/config");
        assertEquals(200, config.status);
        assertEquals(emulator.toolboxProxyUrl(), config.json.get("proxyToolboxUrl").asText());
        for (String f : new String[] {"version", "oidc", "linkedAccountsEnabled", "announcements", "proxyTemplateUrl",
                "defaultSnapshot", "dashboardUrl", "maxAutoArchiveInterval", "maintananceMode", "environment"}) {
            assertTrue(config.json.has(f), f);
        }
        assertEquals(200, wire.get("/health").status);
        Wire.Answer io = wire.send(HttpRequest.newBuilder(URI.create(emulator.apiUrl()
                + "/socket.io/?source=sdk-typescript-legacy&sdkVersion=0.218.0&EIO=4&transport=websocket")).GET().build());
        assertEquals(404, io.status);
        assertEquals(404, wire.get("/nothing-here").status);
    }

    // ------------------------------------------------------------------ toolbox

    @Test
    void codeRunRunsPythonAndJavaScriptWithMergedOutput() throws Exception {
        String id = wire.createOk("{}");
        Wire.Answer py = wire.codeRun(id, "{\"code\":\"import sys\\nprint('out', flush=True)\\nprint('err', file=sys.stderr, flush=True)\\nprint('out2')\\nsys.exit(3)\","
                + "\"language\":\"python\",\"timeout\":20}");
        assertEquals(200, py.status, py.toString());
        assertEquals(Wire.JSON.readTree("{\"exitCode\":3,\"result\":\"out\\nerr\\nout2\\n\"}"), py.json, "interleaved, one buffer");
        Wire.Answer js = wire.codeRun(id, "{\"code\":\"console.log(process.argv.slice(1).join('|'), process.env.ZED)\","
                + "\"language\":\"javascript\",\"argv\":[\"a b\",\"$(id)\"],\"envs\":{\"ZED\":\"z\"},\"timeout\":20}");
        assertEquals(200, js.status, js.toString());
        assertEquals("a b|$(id) z\n", js.json.get("result").asText());
        assertEquals(0, js.json.get("exitCode").asInt());
        Wire.Answer bad = wire.codeRun(id, "{\"code\":\"puts 1\",\"language\":\"ruby\"}");
        assertToolboxError(bad, 400, "BAD_REQUEST", "bad request: unsupported language: ruby", "/process/code-run");
        assertToolboxError(wire.codeRun(id, "{\"language\":\"python\"}"), 400, "INVALID_REQUEST_BODY",
                "invalid body request: Key: 'CodeRunRequest.Code' Error:Field validation for 'Code' failed on the 'required' tag",
                "/process/code-run");
        wire.delete(id);
    }

    @Test
    void codeRunTakesArtifactLinesOutOfTheResult() throws Exception {
        String id = wire.createOk("{}");
        String chart = "{\\\"type\\\":\\\"chart\\\",\\\"value\\\":{\\\"type\\\":\\\"line\\\",\\\"title\\\":\\\"t\\\",\\\"elements\\\":[]}}";
        Wire.Answer a = wire.codeRun(id, "{\"code\":\"print('before')\\nprint('dtn_artifact_k39fd2:" + chart.replace("\\\"", "\\\\\\\"")
                + "')\\nprint('after')\",\"language\":\"python\",\"timeout\":20}");
        assertEquals(200, a.status, a.toString());
        assertEquals("before\nafter\n", a.json.get("result").asText());
        assertEquals("t", a.json.get("artifacts").get("charts").get(0).get("title").asText(), a.toString());
        Wire.Answer plain = wire.codeRun(id, "{\"code\":\"print(1)\",\"language\":\"python\",\"timeout\":20}");
        assertFalse(plain.json.has("artifacts"), "no artifacts field without charts");
        wire.delete(id);
    }

    @Test
    void uploadThenExecuteWithCwdAndEnvs() throws Exception {
        String id = wire.createOk(body(",\"networkAllowList\":\"1.1.1.1/32,8.8.8.0/24\""));
        byte[] program = "import os\nprint('hi', os.getcwd(), os.environ['FOO'])\n".getBytes(StandardCharsets.UTF_8);
        Wire.Answer up = wire.upload(id, "/tmp/job/main.py", program);
        assertEquals(200, up.status, up.toString());
        assertEquals(Wire.JSON.readTree("{\"files\":[{\"path\":\"/tmp/job/main.py\",\"bytes\":" + program.length + "}]}"), up.json);
        Wire.Answer run = wire.execute(id, "{\"command\":\"python3 /tmp/job/main.py\",\"timeout\":10,\"cwd\":\"/tmp/job\",\"envs\":{\"FOO\":\"bar\"}}");
        assertEquals(200, run.status, run.toString());
        assertEquals(Wire.JSON.readTree("{\"exitCode\":0,\"result\":\"hi /tmp/job bar\\n\"}"), run.json);
        // a relative path lands in the home, where commands start
        assertEquals(200, wire.upload(id, "data/in.txt", "h\u00e9llo".getBytes(StandardCharsets.UTF_8)).status);
        Wire.Answer cat = wire.execute(id, "{\"command\":\"cat data/in.txt && cd /tmp && cat \\\"$HOME\\\"/data/in.txt\",\"timeout\":10}");
        assertEquals("h\u00e9lloh\u00e9llo", cat.json.get("result").asText());
        assertEquals(200, wire.delete(id).status);
    }

    @Test
    void executeIsAShellScriptAndReportsTheExitCode() throws Exception {
        String id = wire.createOk("{}");
        Wire.Answer a = wire.execute(id, "{\"command\":\"echo one && echo two >&2; false || exit 7\",\"timeout\":10}");
        assertEquals(Wire.JSON.readTree("{\"exitCode\":7,\"result\":\"one\\ntwo\\n\"}"), a.json);
        Wire.Answer cwd = wire.execute(id, "{\"command\":\"pwd\",\"cwd\":\"/no/such/dir\",\"timeout\":10}");
        assertEquals(200, cwd.status, "a start failure is a 200 with exit code -1");
        assertEquals(-1, cwd.json.get("exitCode").asInt());
        assertEquals("chdir /no/such/dir: no such file or directory", cwd.json.get("result").asText());
        assertToolboxError(wire.execute(id, "{\"command\":\"env\",\"envs\":{\"1BAD\":\"x\"}}"), 400, "BAD_REQUEST",
                "bad request: invalid environment variable name: '1BAD'", "/process/execute");
        assertToolboxError(wire.execute(id, "{\"timeout\":5}"), 400, "INVALID_REQUEST_BODY",
                "invalid body request: Key: 'ExecuteRequest.Command' Error:Field validation for 'Command' failed on the 'required' tag",
                "/process/execute");
        assertToolboxError(wire.execute(id, "{\"command\":\"true\",\"timeout\":-1}"), 400, "INVALID_REQUEST_BODY", null,
                "/process/execute");
        wire.delete(id);
    }

    @Test
    void theTimeoutIsTheBudgetAnd408CarriesNoOutput() throws Exception {
        String id = wire.createOk("{}");
        Wire.Answer a = wire.execute(id, "{\"command\":\"echo started; sleep 30\",\"timeout\":1}");
        assertToolboxError(a, 408, "REQUEST_TIMEOUT", "command execution timeout", "/process/execute");
        assertFalse(a.text().contains("started"), "Daytona keeps no partial output");
        Wire.Answer c = wire.codeRun(id, "{\"code\":\"while True: pass\",\"language\":\"python\",\"timeout\":1}");
        assertToolboxError(c, 408, "REQUEST_TIMEOUT", "command execution timeout", "/process/code-run");
        // the sandbox stays usable
        assertEquals(0, wire.execute(id, "{\"command\":\"true\",\"timeout\":10}").json.get("exitCode").asInt());
        wire.delete(id);
    }

    @Test
    void uploadErrorsUseTheErrorsShape() throws Exception {
        String id = wire.createOk("{}");
        String b = "B";
        String fileFirst = "--B\r\nContent-Disposition: form-data; name=\"files[0].file\"; filename=\"x\"\r\n\r\ndata\r\n--B--\r\n";
        Wire.Answer a = wire.send(wire.toolbox(id, "/files/bulk-upload").header("Content-Type", "multipart/form-data; boundary=" + b)
                .POST(HttpRequest.BodyPublishers.ofString(fileFirst)).build());
        assertEquals(400, a.status);
        assertEquals(Wire.JSON.readTree("{\"errors\":[\"file[0]: missing .path metadata\"],\"files\":null}"), a.json);
        Wire.Answer notMultipart = wire.send(wire.toolbox(id, "/files/bulk-upload").header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString("{}")).build());
        assertEquals(Wire.JSON.readTree("{\"errors\":[\"invalid multipart form\"]}"), notMultipart.json);
        assertEquals(400, notMultipart.status);
        wire.delete(id);
    }

    @Test
    void uploadsCannotEscapeTheMachinesDirectory() throws Exception {
        String id = wire.createOk("{}");
        ProcessMachine m = machines.last();
        assertEquals(200, wire.upload(id, "../../../../../etc/daytonaemu-escape", "x".getBytes(StandardCharsets.UTF_8)).status);
        assertFalse(Files.exists(java.nio.file.Path.of("/etc/daytonaemu-escape")));
        assertTrue(Files.exists(m.dir.resolve(".daytona-fs/etc/daytonaemu-escape")), "kept under the machine's directory");
        wire.delete(id);
    }

    @Test
    void toolboxAnswersForUnknownSandboxesRoutesAndStates() throws Exception {
        assertToolboxError(wire.execute("no-such-id", "{\"command\":\"true\"}"), 404, "NOT_FOUND", null, null);
        emulator.startingPolls(1);
        String id = wire.createOk("{}");
        assertToolboxError(wire.execute(id, "{\"command\":\"true\"}"), 409, "CONFLICT", null, null);
        wire.get("/sandbox/" + id);
        Wire.Answer route = wire.send(wire.toolbox(id, "/files/find?path=x").GET().build());
        assertEquals(404, route.status);
        assertEquals("404 page not found", route.text());
        wire.delete(id);
    }

    @Test
    void aDeleteKillsTheRunningCommandAndItsAnswerNeverComes() throws Exception {
        String id = wire.createOk("{}");
        java.util.concurrent.CompletableFuture<java.net.http.HttpResponse<String>> running = wire.client.sendAsync(
                wire.toolbox(id, "/process/execute").header("Content-Type", "application/json")
                        .POST(HttpRequest.BodyPublishers.ofString("{\"command\":\"sleep 60\",\"timeout\":90}")).build(),
                java.net.http.HttpResponse.BodyHandlers.ofString());
        ProcessMachine m = machines.last();
        long until = System.nanoTime() + 20_000_000_000L;
        while (m.scripts.isEmpty() && System.nanoTime() < until) {
            Thread.sleep(10);
        }
        assertEquals(200, wire.delete(id).status);
        assertTrue(m.isClosed());
        try {
            java.net.http.HttpResponse<String> r = running.get(20, java.util.concurrent.TimeUnit.SECONDS);
            throw new AssertionError("the killed command was answered: " + r.statusCode() + " " + r.body());
        } catch (java.util.concurrent.ExecutionException expected) {
            assertTrue(expected.getCause() instanceof java.io.IOException, expected.toString());
        }
    }

    /** A session command until its exit code shows; returns the command id. */
    private String sessionRun(String id, String session, String command, boolean async) throws Exception {
        Wire.Answer a = wire.post(wire.toolbox(id, "/process/session/" + session + "/exec"),
                "{\"command\":" + Wire.quoteJson(command) + ",\"runAsync\":" + async + "}");
        assertEquals(async ? 202 : 200, a.status, a.toString());
        String cmd = a.json.get("cmdId").asText();
        long until = System.nanoTime() + 20_000_000_000L;
        while (!wire.get0(wire.toolbox(id, "/process/session/" + session + "/command/" + cmd)).json.has("exitCode")
                && System.nanoTime() < until) {
            Thread.sleep(20);
        }
        return cmd;
    }

    /**
     * A session log's format follows the SDK version the client names, as the v0.190 daemon's
     * (pkg/session/common.go): labels kept and the streams apart in JSON from 0.167 on; merged, labels
     * stripped, for a client that names none; the labelled bytes as text for one with the split
     * header. A sync exec answers the same way; an async one's stdin is held open (a read waits), a
     * sync one's is empty.
     */
    @Test
    void sessionLogsFollowTheSdkVersionTheClientNames() throws Exception {
        String id = wire.createOk("{}");
        assertEquals(201, wire.post(wire.toolbox(id, "/process/session"), "{\"sessionId\":\"s1\"}").status);
        String cmd = sessionRun(id, "s1", "echo out; sleep 0.3; echo err >&2; exit 3", true);
        String logs = "/process/session/s1/command/" + cmd + "/logs";
        Wire.Answer split = wire.send(wire.toolbox(id, logs).GET().build());
        assertEquals(Wire.JSON.readTree("{\"output\":\"\\u0001\\u0001\\u0001out\\n\\u0002\\u0002\\u0002err\\n\","
                + "\"stdout\":\"out\\n\",\"stderr\":\"err\\n\"}"), split.json);
        assertEquals(3, wire.get0(wire.toolbox(id, "/process/session/s1/command/" + cmd)).json.get("exitCode").asInt());
        HttpRequest.Builder bare = HttpRequest.newBuilder(java.net.URI.create(emulator.toolboxProxyUrl() + "/" + id + logs))
                .header("Authorization", "Bearer " + emulator.apiKey());
        Wire.Answer merged = wire.send(bare.copy().GET().build());
        assertEquals("out\nerr\n", merged.text(), "no version: the labels stripped");
        Wire.Answer labelled = wire.send(bare.copy().header("X-Daytona-Split-Output", "true").GET().build());
        assertEquals("\u0001\u0001\u0001out\n\u0002\u0002\u0002err\n", labelled.text());
        Wire.Answer old = wire.send(bare.copy().header("X-Daytona-SDK-Version", "0.26.9").GET().build());
        assertEquals("out\nerr\n", old.text(), "before 0.27: merged");
        Wire.Answer middle = wire.send(bare.copy().header("X-Daytona-SDK-Version", "0.166.0").GET().build());
        assertEquals("\u0001\u0001\u0001out\n\u0002\u0002\u0002err\n", middle.text(), "before 0.167: labelled text");

        // a sync exec: its stdin ends at once; an async one's never does
        Wire.Answer sync = wire.post(wire.toolbox(id, "/process/session/s1/exec"),
                "{\"command\":\"cat; echo read-to-end\",\"runAsync\":false}");
        assertEquals(200, sync.status, sync.toString());
        assertEquals("read-to-end\n", sync.json.get("stdout").asText());
        assertEquals("", sync.json.get("stderr").asText());
        assertEquals(0, sync.json.get("exitCode").asInt());
        Wire.Answer syncMerged = wire.send(bare.copy().header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString("{\"command\":\"echo a; sleep 0.3; echo b >&2\"}"))
                .uri(java.net.URI.create(emulator.toolboxProxyUrl() + "/" + id + "/process/session/s1/exec")).build());
        assertEquals("a\nb\n", syncMerged.json.get("output").asText(), syncMerged.toString());
        assertTrue(syncMerged.json.get("stdout").isNull(), syncMerged.toString());
        Wire.Answer async = wire.post(wire.toolbox(id, "/process/session/s1/exec"),
                "{\"command\":\"read line; echo got-eof\",\"runAsync\":true}");
        assertEquals(202, async.status);
        assertTrue(async.json.get("exitCode").isNull(), async.toString());
        Thread.sleep(1000);
        Wire.Answer waiting = wire.get0(wire.toolbox(id, "/process/session/s1/command/" + async.json.get("cmdId").asText()));
        assertFalse(waiting.json.has("exitCode"), "an async command's read of stdin waits: " + waiting);
        assertEquals(204, wire.send(wire.toolbox(id, "/process/session/s1").DELETE().build()).status);
        wire.delete(id);
    }

    @Test
    void callsAreRecordedForReports() throws Exception {
        String id = wire.createOk(body(",\"networkBlockAll\":true"));
        wire.codeRun(id, "{\"code\":\"print(1)\",\"language\":\"python\",\"timeout\":10}");
        wire.delete(id);
        Wire.Answer calls = wire.send(HttpRequest.newBuilder(URI.create(emulator.baseUrl() + "/_emulator/calls")).GET().build());
        JsonNode list = calls.json.get("calls");
        assertEquals(3, list.size(), calls.toString());
        assertEquals("POST", list.get(0).get("method").asText());
        assertEquals(true, list.get(0).get("body").get("networkBlockAll").asBoolean());
        assertEquals("sdk-typescript-legacy", list.get(0).get("headers").get("x-daytona-source").asText());
        assertEquals("Bearer ***", list.get(0).get("headers").get("authorization").asText());
        assertEquals("/toolbox/" + id + "/process/code-run", list.get(1).get("path").asText());
        assertEquals(200, list.get(2).get("status").asInt());
        Wire.Answer ledger = wire.send(HttpRequest.newBuilder(URI.create(emulator.baseUrl() + "/_emulator/ledger")).GET().build());
        assertEquals(1, ledger.json.get("created").asInt());
        assertEquals(0, ledger.json.get("live").asInt());
    }

    // ------------------------------------------------------------------ helpers

    static void assertApiError(Wire.Answer a, int status, String error, String message, String path) {
        assertEquals(status, a.status, a.toString());
        assertNotNull(a.json, a.toString());
        assertEquals(status, a.json.get("statusCode").asInt(), a.toString());
        assertEquals(error, a.json.get("error").asText(), a.toString());
        assertEquals(message, a.json.get("message").asText(), a.toString());
        assertEquals(path, a.json.get("path").asText(), a.toString());
        assertTrue(a.json.get("timestamp").asText().endsWith("Z"), a.toString());
        assertEquals(Set.of("statusCode", "error", "message", "path", "timestamp"), fieldNames(a.json));
    }

    static void assertToolboxError(Wire.Answer a, int status, String code, String message, String path) {
        assertEquals(status, a.status, a.toString());
        assertNotNull(a.json, a.toString());
        assertEquals(status, a.json.get("statusCode").asInt(), a.toString());
        assertEquals(code, a.json.get("code").asText(), a.toString());
        if (message != null) {
            assertEquals(message, a.json.get("message").asText(), a.toString());
        }
        if (path != null) {
            assertEquals(path, a.json.get("path").asText(), a.toString());
        }
        assertNotNull(a.json.get("timestamp"));
        assertNotNull(a.json.get("method"));
        assertNull(a.json.get("result"), "an error carries no output");
    }

    private static Set<String> fieldNames(JsonNode n) {
        Set<String> s = new TreeSet<>();
        n.fieldNames().forEachRemaining(s::add);
        return s;
    }
}
