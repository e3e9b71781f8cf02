package dev.sandbox4j.daytona;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.sandbox4j.api.Execution;
import dev.sandbox4j.api.RunRequest;
import dev.sandbox4j.api.RunResult;
import dev.sandbox4j.api.RunStatus;
import dev.sandbox4j.api.Sandbox;
import dev.sandbox4j.api.exception.SandboxException;
import dev.sandbox4j.api.SandboxSpec;
import dev.sandbox4j.api.Teardown;
import dev.sandbox4j.spi.CreateRequest;
import dev.sandbox4j.http.HttpTransport;
import dev.sandbox4j.policy.EgressPolicy;
import dev.sandbox4j.policy.Language;
import dev.sandbox4j.policy.Limits;
import dev.sandbox4j.policy.UnsupportedPolicyException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import mockwebserver3.RecordedRequest;
import okio.Buffer;
import okhttp3.MediaType;
import okhttp3.MultipartReader;
import okhttp3.ResponseBody;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Our requests against what {@code @daytonaio/sdk@0.218.0} sent in the recordings: the same paths,
 * auth and JSON bodies (compared as trees), with each deliberate difference spelled out.
 */
class DaytonaWireTest {
    private final DaytonaFake fake = new DaytonaFake();

    @AfterEach
    void stop() {
        fake.close();
    }

    /** Replays the fake answers of a recording, skipping the SDK's socket.io attempts. */
    private List<JsonNode> replay(String name) {
        return replay(name, () -> {
            throw new AssertionError(name + " has toolbox calls: script them");
        });
    }

    /**
     * As {@link #replay(String)}, the toolbox calls' answers (the SDK's code-run, or upload and execute)
     * replaced by {@code exec}'s: our exec is a session command ({@link DaytonaFake#sessionRun}). The
     * SDK's requests are all returned, its toolbox calls among them.
     */
    private List<JsonNode> replay(String name, Runnable exec) {
        List<JsonNode> sdkRequests = new ArrayList<>();
        boolean scripted = false;
        for (JsonNode entry : fake.recording(name)) {
            if (entry.path("server").asText().equals("api-websocket-upgrade")) {
                continue;
            }
            sdkRequests.add(entry);
            if (entry.path("path").asText().startsWith("/toolbox/")) {
                if (!scripted) {
                    exec.run();
                    scripted = true;
                }
                continue;
            }
            fake.json(entry.path("fakeResponse").path("status").asInt(), entry.path("fakeResponse").path("body"));
        }
        return sdkRequests;
    }

    /** The SDK's requests of a recording but its toolbox calls. */
    private static List<JsonNode> apiOnly(List<JsonNode> sdk) {
        return sdk.stream().filter(e -> !e.path("path").asText().startsWith("/toolbox/")).toList();
    }

    /**
     * Takes the five requests of the {@code n}th exec in sandbox {@code toolbox}, a session command,
     * and checks each exactly: the program uploaded to {@code /tmp/sandbox4j/exec-<n><ext>}, byte for
     * byte; the session; the exec of the fixed command ({@link #expectedCommand}), asynchronous; the log
     * followed over a WebSocket, naming the SDK version the daemon labels the streams for; the
     * session's delete (no exit code read: the end frames carried it). Returns the session id.
     */
    static String assertSessionExec(DaytonaFake fake, String toolbox, int n, Language language, String code) throws Exception {
        String ext = language == Language.PYTHON ? ".py" : language == Language.JAVASCRIPT ? ".js" : ".sh";
        String program = "/tmp/sandbox4j/exec-" + n + ext;
        RecordedRequest upload = fake.take();
        assertEquals("POST " + toolbox + "/files/bulk-upload", line(upload));
        List<String[]> parts = parts(upload);
        assertEquals(2, parts.size());
        assertEquals("files[0].path", parts.get(0)[0]);
        assertEquals(program, parts.get(0)[2]);
        assertEquals("form-data; name=\"files[0].file\"; filename=\"exec-" + n + ext + "\"", parts.get(1)[1]);
        assertEquals(code, parts.get(1)[2]); // the code, byte for byte, never in a command line

        RecordedRequest create = fake.take();
        assertEquals("POST " + toolbox + "/process/session", line(create));
        String session = DaytonaFake.body(create).path("sessionId").asText();
        assertTrue(session.matches("sandbox4j-exec-" + n + "-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"), session);
        assertEquals(HttpTransport.JSON.createObjectNode().put("sessionId", session), DaytonaFake.body(create));

        RecordedRequest exec = fake.take();
        assertEquals("POST " + toolbox + "/process/session/" + session + "/exec", line(exec));
        String interpreter = language == Language.PYTHON ? "python3 -u" : language == Language.JAVASCRIPT ? "node" : "bash";
        String nonce = nonceOf(exec);
        assertEquals(HttpTransport.JSON.createObjectNode().put("command", expectedCommand(interpreter + " " + program, nonce))
                .put("runAsync", true), DaytonaFake.body(exec));
        assertEquals("application/json", exec.getHeaders().get("Content-Type"));

        String command = toolbox + "/process/session/" + session + "/command/" + DaytonaFake.CMD_ID;
        RecordedRequest logs = fake.take();
        assertEquals("GET " + command + "/logs", line(logs));
        assertEquals("follow=true", logs.getUrl().encodedQuery());
        assertEquals("websocket", logs.getHeaders().get("Upgrade"));
        assertEquals("0.218.0", logs.getHeaders().get("X-Daytona-SDK-Version"));
        assertEquals("Bearer " + DaytonaFake.KEY, logs.getHeaders().get("Authorization"));

        assertEquals("DELETE " + toolbox + "/process/session/" + session, line(fake.take()));
        return session;
    }

    /** The end frames' nonce in a session exec's command, checked for its form: a fresh one per exec. */
    static String nonceOf(RecordedRequest exec) {
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("'(\u001fsandbox4j-end-[0-9a-f]{32}:)'")
                .matcher(DaytonaFake.body(exec).path("command").asText());
        assertTrue(m.find(), DaytonaFake.body(exec).toString());
        return m.group(1);
    }

    /**
     * The session command for {@code run} (the interpreter and the program) under the default 64 MiB
     * hard cap: stdin {@code /dev/null}, each stream cut one byte past the cap (by an unbuffered
     * {@code head}), then the end frame on each stream with the exit code (through a temporary file),
     * or without the cuts when {@code stdbuf} or a temporary file is missing.
     */
    static String expectedCommand(String run, String nonce) {
        return "if command -v stdbuf >/dev/null 2>&1 && __s4j_ec=$(mktemp 2>/dev/null); then\n"
                + "{ { { " + run + " < /dev/null; echo \"$?\" > \"$__s4j_ec\"; } 2>&1 1>&3 3>&- | stdbuf -o0 head -c 67108865 1>&2; }"
                + " 3>&1 | stdbuf -o0 head -c 67108865; }\n"
                + "__s4j_code=$(cat \"$__s4j_ec\"); rm -f \"$__s4j_ec\"\n"
                + "else\n"
                + run + " < /dev/null\n"
                + "__s4j_code=$?\n"
                + "fi\n"
                + "printf '%s%s\\n' '" + nonce + "' \"$__s4j_code\"; printf '%s%s\\n' '" + nonce + "' \"$__s4j_code\" >&2\n";
    }

    private static void assertSameRequest(JsonNode sdk, RecordedRequest ours) {
        assertEquals(sdk.path("method").asText(), ours.getMethod());
        assertEquals(sdk.path("path").asText(), ours.getUrl().encodedPath());
        assertEquals("Bearer " + DaytonaFake.KEY, ours.getHeaders().get("Authorization"));
        if (sdk.path("headers").path("content-type").asText().startsWith("application/json")) {
            assertEquals("application/json", ours.getHeaders().get("Content-Type"));
            assertEquals("application/json", ours.getHeaders().get("Accept"));
        }
    }

    /**
     * The create, polls and delete of recording (a) as the SDK sent them; its one code-run is our
     * session command's five calls ({@link #assertSessionExec}), whose log labels stdout and stderr.
     */
    @Test
    void blockAllRunMatchesTheRecordingAroundItsSessionExec() throws Exception {
        // create (starting), 2 polls, [code-run], delete
        List<JsonNode> sdk = apiOnly(replay("daytona-a-blockall-coderun", () -> fake.sessionRun(0, DaytonaFake.stdout("1\n"))));
        try (DaytonaSandboxRunner runner = fake.runner().target("us").build()) {
            RunResult r = runner.run(RunRequest.of(
                    SandboxSpec.builder().egress(EgressPolicy.denyAll())
                            .limits(Limits.builder().lifetime(Duration.ofMinutes(5)).build()).build(),
                    Execution.builder("print(1)").budget(Duration.ofSeconds(10)).build()));
            assertEquals("1\n", r.stdout());
            assertEquals("", r.stderr());
            assertEquals(RunStatus.EXITED, r.status());
            assertEquals(0, r.exitCode().getAsInt());
            assertEquals(Teardown.DESTROYED, r.teardown());
            assertEquals("sbx-fake-1", r.sandboxId());
        }
        assertEquals(sdk.size() + 5, fake.server.getRequestCount());
        RecordedRequest create = fake.take();
        assertSameRequest(sdk.get(0), create);
        JsonNode ours = DaytonaFake.body(create);
        String runId = ours.path("labels").path(CreateRequest.RUN_ID_LABEL).asText();
        assertTrue(runId.matches("[a-z0-9]{16}"), runId);
        // The SDK's body, changed where we differ on purpose: our run-id label instead of the SDK's
        // language label, a unique name (found again after a lost answer), and ttlMinutes (a wall clock).
        ObjectNode expected = sdk.get(0).path("body").deepCopy();
        ((ObjectNode) expected.path("labels")).remove("code-toolbox-language");
        ((ObjectNode) expected.path("labels")).put(CreateRequest.RUN_ID_LABEL, runId);
        // and the policy label an attach checks: 5 minutes, deny-all
        String policy = CreateRequest.of(runId, SandboxSpec.builder().egress(EgressPolicy.denyAll())
                .limits(Limits.builder().lifetime(Duration.ofMinutes(5)).build()).build()).labels().get(CreateRequest.POLICY_LABEL);
        assertTrue(policy.startsWith("300s-"), policy);
        ((ObjectNode) expected.path("labels")).put(CreateRequest.POLICY_LABEL, policy);
        expected.put("name", "sandbox4j-" + runId);
        expected.put("ttlMinutes", 5);
        assertEquals(expected, ours);
        for (int i = 1; i < sdk.size(); i++) {
            if (i == sdk.size() - 1) {
                assertSessionExec(fake, "/toolbox/sbx-fake-1", 1, Language.PYTHON, "print(1)");
            }
            RecordedRequest r = fake.take();
            assertSameRequest(sdk.get(i), r);
            assertTrue(sdk.get(i).path("body").isNull(), "polls and the delete carry no body");
            assertEquals(0, r.getBodySize());
        }
    }

    /**
     * A run without a listener is a session command too: create, the five calls of the exec, delete.
     * The log's labels keep stderr apart from stdout, a line split across frames and a marker split
     * across frames included; the end frames carry the exit code.
     */
    @Test
    void aSmallPythonRunIsSevenRequestsWithStderrApart() throws Exception {
        fake.json(200, fake.sandbox("sbx-1", "started"));
        byte[] err = DaytonaFake.stderr("warn: x\n");
        fake.sessionRun(3, DaytonaFake.stdout("4"), "2\n".getBytes(java.nio.charset.StandardCharsets.UTF_8),
                java.util.Arrays.copyOf(err, 2), java.util.Arrays.copyOfRange(err, 2, err.length), DaytonaFake.stdout("done\n"));
        fake.json(200, fake.sandbox("sbx-1", "started"));
        String code = "import sys\nprint(6 * 7)\nprint('warn: x', file=sys.stderr)\nprint('done')\nsys.exit(3)\n";
        try (DaytonaSandboxRunner runner = fake.runner().build()) {
            RunResult r = runner.run(RunRequest.python(code));
            assertEquals("42\ndone\n", r.stdout());
            assertEquals("warn: x\n", r.stderr());
            assertEquals(RunStatus.EXITED, r.status());
            assertEquals(3, r.exitCode().getAsInt());
        }
        assertEquals(7, fake.server.getRequestCount());
        RecordedRequest create = fake.take();
        assertEquals("POST /api/sandbox", line(create));
        // default budget 60 s; default lifetime = budget + 30 s margin = 2 minutes
        assertEquals(2, DaytonaFake.body(create).path("autoStopInterval").asInt());
        assertEquals("0.218.0", create.getHeaders().get("X-Daytona-SDK-Version"));
        assertSessionExec(fake, "/toolbox/sbx-1", 1, Language.PYTHON, code);
        assertEquals("DELETE /api/sandbox/sbx-1", line(fake.take()));
    }

    /**
     * A run past its budget (the daemon has no timeout for session commands): TIMED_OUT with what the
     * log had delivered, both streams, and the session deleted, which kills the command.
     */
    @Test
    void aRunPastItsBudgetKeepsWhatItPrintedAndDeletesItsSession() throws Exception {
        fake.json(200, fake.sandbox("sbx-1", "started"));
        fake.sessionStart();
        fake.logNeverEnding(DaytonaFake.stdout("started\n"), DaytonaFake.stderr("working\n"));
        fake.sessionDeleted();
        fake.json(200, fake.sandbox("sbx-1", "started"));
        String code = "import sys, time\nprint('started', flush=True)\nprint('working', file=sys.stderr)\ntime.sleep(60)\n";
        long t0 = System.nanoTime();
        try (DaytonaSandboxRunner runner = fake.runner().build()) {
            RunResult r = runner.run(RunRequest.builder(code).budget(Duration.ofMillis(1500)).build());
            assertEquals(RunStatus.TIMED_OUT, r.status());
            assertTrue(r.exitCode().isEmpty());
            assertEquals("started\n", r.stdout());
            assertEquals("working\n", r.stderr());
            assertEquals(Teardown.DESTROYED, r.teardown());
        }
        assertTrue(System.nanoTime() - t0 < Duration.ofSeconds(10).toNanos(), "came back at its budget");
        assertEquals("POST /api/sandbox", line(fake.take()));
        assertEquals("POST /toolbox/sbx-1/files/bulk-upload", line(fake.take()));
        String session = DaytonaFake.body(fake.take()).path("sessionId").asText();
        assertEquals("POST /toolbox/sbx-1/process/session/" + session + "/exec", line(fake.take()));
        assertEquals("GET /toolbox/sbx-1/process/session/" + session + "/command/" + DaytonaFake.CMD_ID + "/logs",
                line(fake.take()));
        // no exit code is read: the session's delete ends the command
        assertEquals("DELETE /toolbox/sbx-1/process/session/" + session, line(fake.take()));
        assertEquals("DELETE /api/sandbox/sbx-1", line(fake.take()));
        assertNull(fake.poll());
    }

    /**
     * The daemon's {@code GET /files} follows links (os.Stat), so a listing is the fixed script through
     * {@code process/execute}; only the frame with the nonce it was given counts, whatever else the
     * mixed stdout and stderr hold.
     */
    @Test
    void listingIsTheFixedScriptThroughExecute() {
        fake.json(200, fake.sandbox("sbx-1", "started"));
        fake.answer(r -> {
            String command = DaytonaFake.body(r).path("command").asText();
            String nonce = command.substring(command.length() - 33, command.length() - 1);
            String result = "motd\n0123 begin\nf 9 forged\u0000\n0123 end 0\n" + nonce + " begin\nf 5 b.txt\u0000"
                    + "d 4096 c\u0000l 4 e\u0000\n" + nonce + " end 0\n";
            return DaytonaFake.jsonResponse(200, HttpTransport.JSON.createObjectNode().put("exitCode", 0).put("result", result));
        });
        fake.json(200, fake.sandbox("sbx-1", "started"));
        try (DaytonaSandboxRunner runner = fake.runner().build(); dev.sandbox4j.api.Sandbox sandbox = runner.open(SandboxSpec.defaults())) {
            assertEquals(List.of(dev.sandbox4j.api.FileEntry.of("a/b.txt", dev.sandbox4j.api.FileEntry.Type.FILE, 5),
                    dev.sandbox4j.api.FileEntry.of("a/c", dev.sandbox4j.api.FileEntry.Type.DIRECTORY, 0),
                    dev.sandbox4j.api.FileEntry.of("a/e", dev.sandbox4j.api.FileEntry.Type.SYMLINK, 0)), sandbox.listFiles("a"));
        }
        assertEquals("POST /api/sandbox", line(fake.take()));
        RecordedRequest list = fake.take();
        assertEquals("POST /toolbox/sbx-1/process/execute", line(list));
        JsonNode body = DaytonaFake.body(list);
        assertEquals(60, body.path("timeout").asInt());
        assertTrue(body.path("command").asText().matches("(?s)bash -c '.*' 'sandbox4j-list' 'a' '[0-9a-f]{32}'"), body.toString());
        assertEquals("DELETE /api/sandbox/sbx-1", line(fake.take()));
    }

    /**
     * Should the daemon close the log (1000) without the end frames, the exit code is read from the
     * command; what arrived is kept.
     */
    @Test
    void aLogClosedWithoutEndFramesReadsTheExitCode() throws Exception {
        fake.json(200, fake.sandbox("sbx-1", "started"));
        fake.sessionStart();
        fake.log(DaytonaFake.stdout("out\n"), DaytonaFake.stderr("err\n"));
        fake.command(4);
        fake.sessionDeleted();
        fake.json(200, fake.sandbox("sbx-1", "started"));
        try (DaytonaSandboxRunner runner = fake.runner().build()) {
            RunResult r = runner.run(RunRequest.python("pass"));
            assertEquals(RunStatus.EXITED, r.status());
            assertEquals(4, r.exitCode().getAsInt());
            assertEquals("out\n", r.stdout());
            assertEquals("err\n", r.stderr());
        }
        fake.take();
        fake.take();
        String session = DaytonaFake.body(fake.take()).path("sessionId").asText();
        fake.take();
        String command = "/toolbox/sbx-1/process/session/" + session + "/command/" + DaytonaFake.CMD_ID;
        assertEquals("GET " + command + "/logs", line(fake.take()));
        assertEquals("GET " + command, line(fake.take()));
        assertEquals("DELETE /toolbox/sbx-1/process/session/" + session, line(fake.take()));
        assertEquals("DELETE /api/sandbox/sbx-1", line(fake.take()));
    }

    @Test
    void pollsUntilStartedWithoutTheSdksExtraRequests() throws Exception {
        // starting, 3 polls (starting, starting, started), [code-run], delete
        List<JsonNode> sdk = apiOnly(replay("daytona-a-polling-only", () -> fake.sessionRun(0, DaytonaFake.stdout("1\n"))));
        try (DaytonaSandboxRunner runner = fake.runner().target("us").build()) {
            RunResult r = runner.run(RunRequest.builder("print(1)").budget(Duration.ofSeconds(10)).build());
            assertEquals("1\n", r.stdout());
        }
        for (int i = 0; i < sdk.size(); i++) {
            if (i == sdk.size() - 1) {
                assertSessionExec(fake, "/toolbox/sbx-fake-1", 1, Language.PYTHON, "print(1)");
            }
            assertSameRequest(sdk.get(i), fake.take());
        }
        assertNull(fake.poll());
    }

    @Test
    void bashGoesByAnUploadedFileAndAFixedCommand() throws Exception {
        // create (started), upload, [execute], delete
        List<JsonNode> sdk = replay("daytona-b-allowlist-upload-exec", () -> fake.sessionRun(3, DaytonaFake.stdout("hi\n")));
        String script = "echo \"$HOME\" 'quoted' $(printf x) `true`\nexit 3\n";
        EgressPolicy cidrs = EgressPolicy.builder().allowCidr("1.1.1.1/32").allowCidr("8.8.8.0/24").build();
        try (DaytonaSandboxRunner runner = fake.runner().target("us").build()) {
            RunResult r = runner.run(RunRequest.builder(script).language(Language.BASH).egress(cidrs)
                    .budget(Duration.ofSeconds(10)).build());
            assertEquals("hi\n", r.stdout()); // the recording's fake answer
            assertEquals(3, r.exitCode().getAsInt());
        }
        RecordedRequest create = fake.take();
        assertSameRequest(sdk.get(0), create);
        assertEquals(sdk.get(0).path("body").path("networkAllowList"), DaytonaFake.body(create).path("networkAllowList"));
        assertNull(DaytonaFake.body(create).get("networkBlockAll"));
        assertNull(DaytonaFake.body(create).get("domainAllowList"));

        RecordedRequest upload = fake.take();
        assertSameRequest(sdk.get(1), upload);
        assertTrue(upload.getHeaders().get("Content-Type").startsWith("multipart/form-data; boundary="));
        List<String[]> parts = parts(upload);
        JsonNode sdkParts = sdk.get(1).path("body").path("multipartParts");
        assertEquals(sdkParts.size(), parts.size());
        assertEquals(sdkParts.get(0).path("name").asText(), parts.get(0)[0]); // files[0].path first
        assertEquals(sdkParts.get(1).path("name").asText(), parts.get(1)[0]); // then files[0].file
        assertEquals("/tmp/sandbox4j/exec-1.sh", parts.get(0)[2]);
        assertEquals("form-data; name=\"files[0].file\"; filename=\"exec-1.sh\"", parts.get(1)[1]);
        assertEquals(script, parts.get(1)[2]); // the code, byte for byte, never in a command line

        // the SDK's execute is our session command (its upload was the one above)
        String session = DaytonaFake.body(fake.take()).path("sessionId").asText();
        RecordedRequest exec = fake.take();
        assertEquals("POST /toolbox/sbx-fake-1/process/session/" + session + "/exec", line(exec));
        assertEquals(HttpTransport.JSON.createObjectNode().put("command", expectedCommand("bash /tmp/sandbox4j/exec-1.sh", nonceOf(exec)))
                .put("runAsync", true), DaytonaFake.body(exec));
        String command = "/toolbox/sbx-fake-1/process/session/" + session + "/command/" + DaytonaFake.CMD_ID;
        assertEquals("GET " + command + "/logs", line(fake.take()));
        assertEquals("DELETE /toolbox/sbx-fake-1/process/session/" + session, line(fake.take()));
        assertSameRequest(sdk.get(3), fake.take());
        assertNull(fake.poll());
    }

    @Test
    void sessionsReuseTheSandboxAndUploadInputFiles() throws Exception {
        fake.json(200, fake.sandbox("sbx-2", "started"));
        fake.json(200, "{\"files\":[{\"path\":\"data/in.csv\",\"bytes\":3}]}");
        fake.sessionRun(0, DaytonaFake.stdout("a"));
        fake.sessionRun(7, DaytonaFake.stderr("b"));
        fake.json(200, fake.sandbox("sbx-2", "started"));
        SandboxSpec spec = SandboxSpec.builder().file("data/in.csv", "1,2").env("MODE", "test").label("team", "x").build();
        try (DaytonaSandboxRunner runner = fake.runner().build(); Sandbox sandbox = runner.open(spec)) {
            assertEquals("a", sandbox.exec(Execution.of(Language.JAVASCRIPT, "console.log('a')")).stdout());
            RunResult second = sandbox.exec(Execution.of(Language.BASH, "echo b >&2; exit 7"));
            assertEquals("", second.stdout());
            assertEquals("b", second.stderr());
            assertEquals(7, second.exitCode().getAsInt());
        }
        JsonNode create = DaytonaFake.body(fake.take());
        assertEquals("test", create.path("env").path("MODE").asText());
        assertEquals(1, create.path("env").size());
        assertEquals("x", create.path("labels").path("team").asText());
        assertEquals(10, create.path("autoStopInterval").asInt()); // a session's default lifetime: 10 minutes
        assertEquals(0, create.path("autoDeleteInterval").asInt());
        assertNull(create.get("cpu"));
        RecordedRequest files = fake.take();
        assertEquals("POST /toolbox/sbx-2/files/bulk-upload", line(files));
        List<String[]> parts = parts(files);
        assertEquals("data/in.csv", parts.get(0)[2]);
        assertEquals("1,2", parts.get(1)[2]);
        String first = assertSessionExec(fake, "/toolbox/sbx-2", 1, Language.JAVASCRIPT, "console.log('a')");
        String second = assertSessionExec(fake, "/toolbox/sbx-2", 2, Language.BASH, "echo b >&2; exit 7");
        assertFalse(first.equals(second), "a session per exec");
        assertEquals("DELETE /api/sandbox/sbx-2", line(fake.take()));
    }

    @Test
    void largeCodeGoesByFileAsAnyOther() throws Exception {
        fake.json(200, fake.sandbox("sbx-3", "started"));
        fake.sessionRun(0);
        fake.json(200, fake.sandbox("sbx-3", "started"));
        String code = "x = 1\n".repeat(60_000); // 360 KB
        try (DaytonaSandboxRunner runner = fake.runner().build()) {
            assertEquals(RunStatus.EXITED, runner.run(RunRequest.python(code)).status());
        }
        fake.take();
        assertSessionExec(fake, "/toolbox/sbx-3", 1, Language.PYTHON, code);
    }

    @Test
    void imageCreatesCarryBuildInfoAndWholeGibResources() {
        fake.json(200, fake.sandbox("sbx-4", "pending_build"));
        fake.json(200, fake.sandbox("sbx-4", "building_snapshot"));
        fake.json(200, fake.sandbox("sbx-4", "started"));
        fake.sessionRun(0);
        fake.json(200, fake.sandbox("sbx-4", "started"));
        Limits limits = Limits.builder().vcpus(2).memoryMib(4096).diskMib(5120).lifetime(Duration.ofSeconds(61)).build();
        try (DaytonaSandboxRunner runner = fake.runner().image("python:3.12-slim").build()) {
            runner.run(RunRequest.builder("pass").spec(SandboxSpec.builder().limits(limits).build()).build());
        }
        JsonNode create = DaytonaFake.body(fake.take());
        assertEquals("FROM python:3.12-slim\n", create.path("buildInfo").path("dockerfileContent").asText());
        assertNull(create.get("snapshot"));
        assertEquals(2, create.path("cpu").asInt());
        assertEquals(4, create.path("memory").asInt());
        assertEquals(5, create.path("disk").asInt());
        assertEquals(2, create.path("autoStopInterval").asInt()); // 61 s rounds up to 2 minutes
        assertEquals(2, create.path("ttlMinutes").asInt());
        assertTrue(create.path("networkBlockAll").asBoolean()); // deny-all by default
        assertEquals("GET /api/sandbox/sbx-4", line(fake.take()));
        assertEquals("GET /api/sandbox/sbx-4", line(fake.take()));
    }

    @Test
    void domainAllowListAndSnapshotOnTheWire() {
        fake.json(200, fake.sandbox("sbx-5", "started"));
        fake.sessionRun(0);
        fake.json(200, fake.sandbox("sbx-5", "started"));
        try (DaytonaSandboxRunner runner = fake.runner().snapshot("my-snap").build()) {
            runner.run(RunRequest.builder("pass").egress(EgressPolicy.allowOnly("pypi.org", "*.pythonhosted.org")).build());
        }
        JsonNode create = DaytonaFake.body(fake.take());
        assertEquals("pypi.org,*.pythonhosted.org", create.path("domainAllowList").asText()); // as recording c
        assertEquals("my-snap", create.path("snapshot").asText());
        assertFalse(create.has("networkBlockAll"));
        assertFalse(create.has("target"));
    }

    @Test
    void createRefusedByTheServerIsTypedAndLooksForWhatItMayHaveLeft() {
        List<JsonNode> sdk = replay("daytona-g-create-400");
        fake.json(200, "{\"items\":[],\"nextCursor\":null}");
        fake.json(404, "{\"statusCode\":404,\"message\":\"Sandbox not found\"}");
        try (DaytonaSandboxRunner runner = fake.runner().build()) {
            SandboxException e = assertThrows(SandboxException.class, () -> runner.run(RunRequest.python("print(1)")));
            assertEquals(400, e.httpStatus().getAsInt());
            assertTrue(e.getMessage().contains("Network allow list cannot contain more than 10 networks"), e.getMessage());
            assertFalse(e.isRetriable());
        }
        assertSameRequest(sdk.get(0), fake.take());
        RecordedRequest list = fake.take();
        assertEquals("GET /api/sandbox", line(list));
        String runId = list.getUrl().queryParameter("labels").replaceAll(".*\"([a-z0-9]{16})\".*", "$1");
        assertEquals("{\"" + CreateRequest.RUN_ID_LABEL + "\":\"" + runId + "\"}", list.getUrl().queryParameter("labels"));
        assertTrue(list.getUrl().encodedQuery().startsWith("labels=%7B%22sandbox4j-run-id%22%3A%22"), list.getUrl().encodedQuery());
        assertEquals("GET /api/sandbox/sandbox4j-" + runId, line(fake.take()));
        assertNull(fake.poll());
    }

    @Test
    void toolboxUrlWithATrailingSlashOrMissing() throws Exception {
        ObjectNode slash = fake.sandbox("sbx-6", "started").put("toolboxProxyUrl", fake.toolboxUrl() + "/");
        fake.json(200, slash);
        fake.sessionRun(0);
        fake.json(200, slash);
        ObjectNode none = fake.sandbox("sbx-7", "started");
        none.remove("toolboxProxyUrl");
        fake.json(200, none);
        fake.json(200, "{\"url\":\"" + fake.server.url("/proxy/toolbox") + "\"}");
        fake.sessionRun(0);
        fake.json(200, none);
        try (DaytonaSandboxRunner runner = fake.runner().build()) {
            runner.run(RunRequest.python("pass"));
            runner.run(RunRequest.python("pass"));
        }
        fake.take();
        assertSessionExec(fake, "/toolbox/sbx-6", 1, Language.PYTHON, "pass");
        fake.take();
        fake.take();
        assertEquals("GET /api/sandbox/sbx-7/toolbox-proxy-url", line(fake.take()));
        assertSessionExec(fake, "/proxy/toolbox/sbx-7", 1, Language.PYTHON, "pass"); // the log WebSocket too
    }

    static String line(RecordedRequest r) {
        return r.getMethod() + " " + r.getUrl().encodedPath();
    }

    /** Each part as {Content-Disposition, value}, in order. */
    static List<String[]> parts(RecordedRequest r) throws Exception {
        MediaType type = MediaType.get(r.getHeaders().get("Content-Type"));
        List<String[]> out = new ArrayList<>();
        try (MultipartReader reader = new MultipartReader(ResponseBody.create(r.getBody(), type))) {
            MultipartReader.Part part;
            while ((part = reader.nextPart()) != null) {
                String disposition = part.headers().get("Content-Disposition");
                String name = disposition.replaceAll(".*?; name=\"([^\"]*)\".*", "$1");
                Buffer b = new Buffer();
                part.body().readAll(b);
                out.add(new String[] {name, disposition, b.readUtf8()});
            }
        }
        return out;
    }

    /** A lock-down after setup: the setup runs, the network settings go, the record is read until it holds them. */
    @Test
    void theLockDownWaitsUntilTheRecordHoldsTheNewEgress() throws Exception {
        SandboxSpec spec = SandboxSpec.builder().egress(EgressPolicy.denyAll()).setupEgress(EgressPolicy.allowAll())
                .setupCommand("pip install x").build();
        fake.json(200, fake.sandbox("sbx-1", "started"));
        fake.sessionRun(0);
        fake.json(200, fake.sandbox("sbx-1", "started")); // the update's answer still shows the setup egress
        fake.json(200, fake.sandbox("sbx-1", "started").put("networkBlockAll", true));
        fake.sessionRun(0, DaytonaFake.stdout("ok\n"));
        fake.json(200, fake.sandbox("sbx-1", "started"));
        try (DaytonaSandboxRunner runner = fake.runner().build()) {
            RunResult r = runner.run(RunRequest.of(spec, Execution.builder("print('ok')").build()));
            assertEquals("ok\n", r.stdout());
        }
        assertNull(DaytonaFake.body(fake.take()).get("networkBlockAll"), "created under the setup egress");
        assertSessionExec(fake, "/toolbox/sbx-1", 1, Language.BASH, "pip install x");
        RecordedRequest update = fake.take();
        assertEquals("POST /api/sandbox/sbx-1/network-settings", line(update));
        assertEquals(HttpTransport.JSON.createObjectNode().put("networkBlockAll", true).put("networkAllowList", "")
                .put("domainAllowList", ""), DaytonaFake.body(update));
        assertEquals("GET /api/sandbox/sbx-1", line(fake.take()));
        assertSessionExec(fake, "/toolbox/sbx-1", 2, Language.PYTHON, "print('ok')");
        assertEquals("DELETE /api/sandbox/sbx-1", line(fake.take()));
    }

    /** A record that never shows the lock-down: refused within the bound, nothing of the code sent, torn down. */
    @Test
    void aLockDownTheRecordNeverShowsIsRefusedAndTornDown() {
        SandboxSpec spec = SandboxSpec.builder().egress(EgressPolicy.builder().allowCidr("1.1.1.1/32").build())
                .setupEgress(EgressPolicy.allowAll()).setupCommand("true").build();
        fake.json(200, fake.sandbox("sbx-1", "started"));
        fake.sessionRun(0);
        for (int i = 0; i < 200; i++) {
            fake.answer(r -> r.getMethod().equals("DELETE") ? DaytonaFake.jsonResponse(200, fake.sandbox("sbx-1", "started"))
                    : DaytonaFake.jsonResponse(200, fake.sandbox("sbx-1", "started")));
        }
        try (DaytonaSandboxRunner runner = fake.runner().startTimeout(Duration.ofMillis(300)).build()) {
            UnsupportedPolicyException e = assertThrows(UnsupportedPolicyException.class,
                    () -> runner.run(RunRequest.of(spec, Execution.builder("print('never')").build())));
            assertTrue(e.getMessage().contains("did not report the lock-down"), e.getMessage());
        }
        List<String> lines = new ArrayList<>();
        for (RecordedRequest r = fake.poll(); r != null; r = fake.poll()) {
            lines.add(line(r));
            if (line(r).endsWith("/network-settings")) {
                assertEquals("1.1.1.1/32", DaytonaFake.body(r).path("networkAllowList").asText());
                assertFalse(DaytonaFake.body(r).path("networkBlockAll").asBoolean());
            }
        }
        assertTrue(lines.contains("POST /api/sandbox/sbx-1/network-settings"), lines.toString());
        // the setup's exec only: one upload, one session exec, both before the lock-down
        assertEquals(1, lines.stream().filter(l -> l.equals("POST /toolbox/sbx-1/files/bulk-upload")).count(), lines.toString());
        assertEquals(1, lines.stream().filter(l -> l.endsWith("/exec")).count(), lines.toString());
        assertTrue(lines.indexOf("POST /api/sandbox/sbx-1/network-settings") > lines.indexOf("POST /toolbox/sbx-1/files/bulk-upload"),
                lines.toString());
        assertEquals("DELETE /api/sandbox/sbx-1", lines.get(lines.size() - 1));
    }
}
