package dev.sandbox4j.vercel;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.sandbox4j.api.Execution;
import dev.sandbox4j.spi.CreateRequest;
import dev.sandbox4j.api.RunRequest;
import dev.sandbox4j.api.RunResult;
import dev.sandbox4j.api.RunStatus;
import dev.sandbox4j.api.Sandbox;
import dev.sandbox4j.api.exception.SandboxConfigurationException;
import dev.sandbox4j.api.SandboxRunner;
import dev.sandbox4j.api.SandboxRunners;
import dev.sandbox4j.api.SandboxSpec;
import dev.sandbox4j.api.Teardown;
import dev.sandbox4j.http.HttpTransport;
import dev.sandbox4j.policy.EgressPolicy;
import dev.sandbox4j.policy.Language;
import dev.sandbox4j.policy.Limits;
import dev.sandbox4j.policy.UnsupportedPolicyException;
import dev.sandbox4j.vercel.internal.TarReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;
import mockwebserver3.RecordedRequest;
import org.junit.jupiter.api.Test;

/** Exact requests, compared with what the official SDK sent (recordings/vercel-*.json). */
class VercelWireTest extends StubTestBase {
    private static final Pattern NAME = Pattern.compile("s4j-[a-z0-9]{16}");

    /** The recorded request body, as a tree, with our deliberate differences applied. */
    private static ObjectNode recordedBody(JsonNode exchange) {
        return exchange.path("body").deepCopy();
    }

    private static void assertRecordedRequest(JsonNode exchange, RecordedRequest actual) {
        assertEquals(exchange.path("method").asText(), actual.getMethod());
        assertEquals(exchange.path("path").asText(), actual.getUrl().encodedPath());
        JsonNode query = exchange.path("query");
        assertEquals(Set.copyOf(iterable(query.fieldNames())), actual.getUrl().queryParameterNames(), "query keys");
        query.properties().forEach(f -> assertEquals(f.getValue().asText(),
                actual.getUrl().queryParameter(f.getKey()), "query " + f.getKey()));
        assertEquals("Bearer " + TOKEN, actual.getHeaders().get("Authorization"));
        assertEquals(exchange.path("headers").path("content-type").asText(), actual.getHeaders().get("Content-Type"));
    }

    private static <T> List<T> iterable(java.util.Iterator<T> it) {
        List<T> out = new java.util.ArrayList<>();
        it.forEachRemaining(out::add);
        return out;
    }

    @Test
    void smallRunIsThreeRequestsShapedLikeTheSdks() {
        String code = "print('hello from stdout'); import sys; print('warning on stderr', file=sys.stderr)";
        SandboxSpec spec = SandboxSpec.builder()
                .limits(Limits.builder().vcpus(1).lifetime(Duration.ofSeconds(60)).build()).build();
        RunResult r;
        try (SandboxRunner vercel = runner()) {
            r = vercel.run(RunRequest.of(spec, Execution.builder(code).budget(Duration.ofSeconds(20)).build()));
        }
        assertEquals(List.of("create", "cmd", "stop"), stub.routes(), "one create, one streamed command, one stop");

        JsonNode rec = VercelStub.REC_A;
        RecordedRequest create = stub.requests.get(0);
        assertRecordedRequest(rec.get(0), create);
        JsonNode sent = VercelStub.body(create);
        String name = sent.path("name").asText();
        assertTrue(NAME.matcher(name).matches(), name);
        ObjectNode expected = recordedBody(rec.get(0));
        expected.put("name", name).put("persistent", false); // found again by name; no billed snapshot on stop
        // the policy label an attach checks, as a tag: 60 s, deny-all
        String policy = sent.path("tags").path(CreateRequest.POLICY_LABEL).asText();
        assertTrue(policy.matches("60s-[0-9a-f]{16}"), policy);
        expected.putObject("tags").put(CreateRequest.POLICY_LABEL, policy);
        assertEquals(expected, sent);

        RecordedRequest cmd = stub.requests.get(1);
        assertRecordedRequest(rec.get(2), cmd);
        ObjectNode expectedCmd = recordedBody(rec.get(2));
        expectedCmd.put("command", "python3").putArray("args").add("-c").add(code);
        assertEquals(expectedCmd, VercelStub.body(cmd));

        RecordedRequest stop = stub.requests.get(2);
        assertRecordedRequest(rec.get(3), stop);
        assertEquals(0, stop.getBodySize());
        assertEquals("0", stop.getHeaders().get("Content-Length"));

        assertEquals(RunStatus.EXITED, r.status());
        assertEquals(java.util.OptionalInt.of(0), r.exitCode());
        assertEquals("hello from stdout\ndone\n", r.stdout());
        assertEquals("warning on stderr\n", r.stderr());
        assertEquals("sbx_000002", r.sandboxId());
        assertEquals(Teardown.DESTROYED, r.teardown());
    }

    @Test
    void setupUnderItsOwnEgressThenLockDownOnTheLiveSession() {
        JsonNode rec = VercelStub.REC_B;
        stub.on("create", req -> VercelStub.created(rec.get(0), req));
        SandboxSpec spec = SandboxSpec.builder()
                .setupEgress(EgressPolicy.allowAll()).egress(EgressPolicy.denyAll())
                .setupCommand("npm install")
                .limits(Limits.builder().vcpus(2).lifetime(Duration.ofSeconds(120)).build()).build();
        RunResult r;
        try (SandboxRunner vercel = runner(b -> b.runtime("node24"))) {
            r = vercel.run(RunRequest.of(spec, Execution.of(Language.JAVASCRIPT, "console.log(1)")));
        }
        assertEquals(List.of("create", "cmd", "policy", "cmd", "stop"), stub.routes(),
                "the SDK's update() adds a PATCH of the durable record; a live session needs only the POST");
        RecordedRequest create = stub.requests.get(0);
        assertRecordedRequest(rec.get(0), create); // legacy runtime: POST /v2/sandboxes
        ObjectNode expected = recordedBody(rec.get(0));
        expected.put("name", VercelStub.body(create).path("name").asText()).put("persistent", false);
        String policy = VercelStub.body(create).path("tags").path(CreateRequest.POLICY_LABEL).asText();
        assertTrue(policy.startsWith("120s-"), policy); // the lifetime; the digest is of the code's egress
        expected.putObject("tags").put(CreateRequest.POLICY_LABEL, policy);
        assertEquals(expected, VercelStub.body(create));

        RecordedRequest setup = stub.requests.get(1);
        assertRecordedRequest(rec.get(1), setup);
        ObjectNode expectedSetup = recordedBody(rec.get(1));
        expectedSetup.remove("cwd"); // the session's working directory is the default
        expectedSetup.putObject("env"); // the spec's env lives on the sandbox, not per command
        expectedSetup.put("command", "bash").putArray("args").add("-c").add("npm install");
        expectedSetup.put("timeout", (int) Duration.ofMinutes(5).toMillis()); // the setup budget, enforced by Vercel
        assertEquals(expectedSetup, VercelStub.body(setup));

        RecordedRequest lock = stub.requests.get(2);
        assertRecordedRequest(rec.get(3), lock);
        assertEquals(rec.get(3).path("body"), VercelStub.body(lock));

        JsonNode code = VercelStub.body(stub.requests.get(3));
        assertEquals("node", code.path("command").asText());
        assertEquals("[\"-e\",\"console.log(1)\"]", code.path("args").toString());
        assertRecordedRequest(rec.get(5), stub.requests.get(4));
        assertEquals(RunStatus.EXITED, r.status());
    }

    @Test
    void largeCodeOrCodeWithNulGoesAsAnUploadedFile() throws Exception {
        String big = "print('x')\n" + "#".repeat(70_000) + "\n";
        String nul = "print(1)\0";
        try (SandboxRunner vercel = runner(); Sandbox sandbox = vercel.open(SandboxSpec.defaults())) {
            sandbox.exec(Execution.python(big));
            sandbox.exec(Execution.builder(nul).language(Language.BASH).build());
            String small = "print('€ \"quoted\" $(not a shell) `x`')";
            sandbox.exec(Execution.python(small));
            assertEquals(List.of("create", "write", "cmd", "write", "cmd", "cmd"), stub.routes());

            JsonNode recordedWrite = VercelStub.REC_A.get(1);
            List<RecordedRequest> writes = stub.all("write");
            String[] expectedPaths = {"/tmp/sandbox4j-" + sandbox.runId() + "-1.py", "/tmp/sandbox4j-" + sandbox.runId() + "-2.sh"};
            String[] codes = {big, nul};
            for (int i = 0; i < 2; i++) {
                RecordedRequest w = writes.get(i);
                assertRecordedRequest(recordedWrite, w);
                assertEquals("/", w.getHeaders().get("x-cwd"));
                List<TarReader.Member> entries = TarReader.read(w.getBody().toByteArray());
                assertEquals(1, entries.size());
                TarReader.Member m = entries.get(0);
                JsonNode sdk = recordedWrite.path("body").path("entries").get(0);
                assertEquals(expectedPaths[i].substring(1), m.name);
                assertEquals(sdk.path("mode").asText(), String.format("%04o", m.mode));
                assertEquals(sdk.path("uid").asInt(), m.uid);
                assertEquals(sdk.path("gid").asInt(), m.gid);
                assertEquals(sdk.path("uname").asText(), m.uname);
                assertEquals('0', m.type);
                assertEquals(codes[i], new String(m.content, StandardCharsets.UTF_8));
            }
            List<RecordedRequest> cmds = stub.all("cmd");
            assertEquals("[\"" + expectedPaths[0] + "\"]", VercelStub.body(cmds.get(0)).path("args").toString());
            assertEquals("bash", VercelStub.body(cmds.get(1)).path("command").asText());
            assertEquals("[\"" + expectedPaths[1] + "\"]", VercelStub.body(cmds.get(1)).path("args").toString());
            assertEquals(small, VercelStub.body(cmds.get(2)).path("args").get(1).asText(), "byte for byte, no shell");
        }
        assertEquals("stop", stub.routes().get(stub.routes().size() - 1));
    }

    @Test
    void inputFilesGoToTheWorkingDirectoryInOneUpload() throws Exception {
        SandboxSpec spec = SandboxSpec.builder().file("data/in.txt", "héllo").file("top.csv", "a,b\n").build();
        try (SandboxRunner vercel = runner()) {
            vercel.run(RunRequest.of(spec, Execution.python("print(open('data/in.txt').read())")));
        }
        assertEquals(List.of("create", "write", "cmd", "stop"), stub.routes());
        List<TarReader.Member> entries = TarReader.read(stub.first("write").getBody().toByteArray());
        assertEquals(List.of("vercel/sandbox/data/", "vercel/sandbox/data/in.txt", "vercel/sandbox/top.csv"),
                entries.stream().map(m -> m.name).toList());
        assertEquals('5', entries.get(0).type);
        assertEquals(0755, entries.get(0).mode);
        assertEquals("héllo", new String(entries.get(1).content, StandardCharsets.UTF_8));
    }

    @Test
    void envLabelsImageAndBrokeredHeadersGoInTheOneCreate() {
        EgressPolicy egress = EgressPolicy.builder().allowDomain("api.openai.com").allowDomain("*.pypi.org")
                .headerRule("api.openai.com", "Authorization", dev.sandbox4j.policy.SecretRef.of("k", () -> "sk-abc-123"))
                .build();
        SandboxSpec spec = SandboxSpec.builder().egress(egress).env("MODE", "test").label("team", "agents").build();
        try (SandboxRunner vercel = runner(b -> b.image("vercel/sandbox/python:3.14"))) {
            vercel.run(RunRequest.of(spec, Execution.python("print(1)")));
        }
        JsonNode create = VercelStub.body(stub.first("create"));
        assertEquals("/api/v3/sandboxes", stub.first("create").getUrl().encodedPath());
        assertEquals("vercel/sandbox/python:3.14", create.path("image").asText());
        assertEquals(VercelStub.parse("{\"MODE\":\"test\"}"), create.path("env"));
        assertEquals("agents", create.path("tags").path("team").asText());
        assertEquals(List.of("sandbox4j-policy", "team"), List.copyOf(VercelStub.parse(create.path("tags").toString())
                .properties().stream().map(java.util.Map.Entry::getKey).sorted().toList()));
        assertEquals(VercelStub.parse("{\"allow\":{\"api.openai.com\":[{\"transform\":[{\"headers\":"
                + "{\"Authorization\":\"sk-abc-123\"}}]}],\"*.pypi.org\":[]}}"), create.path("networkPolicy"));
        assertFalse(create.has("resources"), "provider-default vCPUs when none set");
        JsonNode cmd = VercelStub.body(stub.first("cmd"));
        assertEquals(VercelStub.parse("{}"), cmd.path("env"), "nothing of the host's environment");
    }

    /** Issue 13 item 5: a resolved header value leaves the redaction set with its sandbox. */
    @Test
    void brokeredHeaderValuesDoNotAccumulateAcrossRuns() {
        int[] n = {0};
        EgressPolicy egress = EgressPolicy.builder().allowDomain("api.openai.com")
                .headerRule("api.openai.com", "Authorization", dev.sandbox4j.policy.SecretRef.of("k", () -> "sk-abc-" + n[0]++))
                .build();
        try (VercelSandboxRunner vercel = runner()) {
            for (int i = 0; i < 10; i++) {
                vercel.run(RunRequest.of(SandboxSpec.builder().egress(egress).build(), Execution.python("print(1)")));
            }
            assertEquals(10, n[0]);
            assertEquals(0, ((dev.sandbox4j.vercel.internal.VercelDriver) vercel.lifecycle().driver()).scopedSecretCount());
        }
    }

    @Test
    void severalExecsReuseTheSession() {
        try (SandboxRunner vercel = runner(); Sandbox s = vercel.open(SandboxSpec.defaults())) {
            assertEquals(java.util.OptionalInt.of(0), s.exec(Execution.python("x = 1")).exitCode());
            assertEquals(java.util.OptionalInt.of(0), s.exec(Execution.python("print(2)")).exitCode());
            assertEquals("sbx_000002", s.id());
        }
        assertEquals(List.of("create", "cmd", "cmd", "stop"), stub.routes());
        stub.all("cmd").forEach(r -> assertEquals("/api/v2/sandboxes/sessions/sbx_000002/cmd", r.getUrl().encodedPath()));
    }

    @Test
    void oidcTokenScopesByItsClaims() {
        Base64.Encoder b64 = Base64.getUrlEncoder().withoutPadding();
        String jwt = b64.encodeToString("{\"alg\":\"RS256\"}".getBytes(StandardCharsets.UTF_8)) + "."
                + b64.encodeToString(("{\"owner_id\":\"team_FROM_OIDC\",\"project_id\":\"prj_FROM_OIDC\",\"exp\":"
                        + Instant.now().plusSeconds(3600).getEpochSecond() + "}").getBytes(StandardCharsets.UTF_8)) + ".sig";
        try (SandboxRunner vercel = VercelSandboxRunner.fromEnv(Map.of("VERCEL_OIDC_TOKEN", jwt,
                "VERCEL_API_URL", server.url("/api/").toString()))) {
            vercel.run(RunRequest.python("print(1)"));
        }
        RecordedRequest create = stub.first("create");
        assertEquals("team_FROM_OIDC", create.getUrl().queryParameter("teamId"));
        assertEquals("prj_FROM_OIDC", VercelStub.body(create).path("projectId").asText());
        assertEquals("Bearer " + jwt, create.getHeaders().get("Authorization"));
        stub.requests.forEach(r -> assertEquals("team_FROM_OIDC", r.getUrl().queryParameter("teamId"), r.getRequestLine()));
    }

    @Test
    void discoveredByNameWithVercelsOwnVariables() {
        Map<String, String> env = Map.of("VERCEL_TOKEN", TOKEN, "VERCEL_TEAM_ID", TEAM, "VERCEL_PROJECT_ID", PROJECT,
                "VERCEL_API_URL", server.url("/api").toString());
        try (SandboxRunner vercel = SandboxRunners.byName("vercel", env)) {
            assertEquals("vercel", vercel.name());
            assertEquals(java.util.OptionalInt.of(0), vercel.run(RunRequest.python("print(1)")).exitCode());
            assertFalse(vercel.toString().contains(TOKEN));
        }
        assertTrue(SandboxRunners.provider("vercel").orElseThrow().isConfigured(env));
        assertFalse(SandboxRunners.provider("vercel").orElseThrow().isConfigured(Map.of("VERCEL_TEAM_ID", TEAM)));
        SandboxConfigurationException e = assertThrows(SandboxConfigurationException.class,
                () -> SandboxRunners.byName("vercel", Map.of()));
        assertTrue(e.getMessage().contains("VERCEL_TOKEN") && e.getMessage().contains("VERCEL_TEAM_ID")
                && e.getMessage().contains("VERCEL_PROJECT_ID") && e.getMessage().contains("VERCEL_OIDC_TOKEN"), e.getMessage());
        e = assertThrows(SandboxConfigurationException.class,
                () -> VercelSandboxRunner.fromEnv(Map.of("VERCEL_TOKEN", TOKEN, "VERCEL_TEAM_ID", TEAM)));
        assertTrue(e.getMessage().contains("VERCEL_PROJECT_ID"), e.getMessage());
        assertFalse(e.getMessage().contains(TOKEN));
    }

    @Test
    void configurationMistakesAreClearTypedErrors() {
        SandboxConfigurationException e = assertThrows(SandboxConfigurationException.class,
                () -> runner(b -> b.image("vercel/sandbox/node:24").runtime("node24")));
        assertTrue(e.getMessage().contains("not both"), e.getMessage());
        e = assertThrows(SandboxConfigurationException.class, () -> runner(b -> b.baseUrl("ftp://x")));
        assertTrue(e.getMessage().contains("base URL"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> VercelSandboxRunner.builder().maxArgvBytes(200_000));
        // an access token without its ids falls back to an OIDC token when one is there
        String jwt = dev.sandbox4j.vercel.internal.VercelCredentialsTest.oidc("team_O", "prj_O",
                Instant.now().plusSeconds(600).getEpochSecond());
        try (SandboxRunner vercel = VercelSandboxRunner.fromEnv(Map.of("VERCEL_TOKEN", TOKEN, "VERCEL_OIDC_TOKEN", jwt,
                "VERCEL_API_URL", server.url("/api").toString()))) {
            assertTrue(vercel.toString().contains("team_O"), vercel.toString());
            assertFalse(vercel.toString().contains(jwt));
        }
    }

    @Test
    void vercelsPerCommandTimeoutIsReportedAsTimedOut() {
        List<JsonNode> lines = VercelStub.lines(VercelStub.REC_A.get(2));
        ObjectNode last = lines.get(lines.size() - 1).deepCopy();
        ((ObjectNode) last.path("command")).put("exitCode", 137).put("durationMs", 2_000);
        stub.on("cmd", VercelStub.ndjson(List.of(lines.get(0), lines.get(1), last)));
        ObjectNode failed = last.deepCopy();
        ((ObjectNode) failed.path("command")).put("exitCode", 1).put("durationMs", 50);
        stub.on("cmd", VercelStub.ndjson(List.of(lines.get(0), failed)));
        try (SandboxRunner vercel = runner(); Sandbox s = vercel.open(SandboxSpec.defaults())) {
            RunResult r = s.exec(Execution.builder("while True: pass").budget(Duration.ofSeconds(2)).build());
            assertEquals(RunStatus.TIMED_OUT, r.status());
            assertEquals("hello from stdout\n", r.stdout(), "output before the kill is kept");
            assertEquals(2_000, VercelStub.body(stub.first("cmd")).path("timeout").asLong());
            RunResult r2 = s.exec(Execution.builder("raise SystemExit(1)").budget(Duration.ofSeconds(2)).build());
            assertEquals(RunStatus.EXITED, r2.status());
            assertEquals(java.util.OptionalInt.of(1), r2.exitCode());
        }
        assertEquals(List.of("create", "cmd", "cmd", "stop"), stub.routes(), "Vercel killed it: no kill needed");
    }

    @Test
    void rulesVercelCannotEnforceAreRefusedBeforeAnyCall() {
        try (SandboxRunner vercel = runner()) {
            UnsupportedPolicyException e = assertThrows(UnsupportedPolicyException.class, () -> vercel.open(
                    SandboxSpec.builder().limits(Limits.builder().vcpus(3).memoryMib(1024).build()).build()));
            assertEquals(List.of("a memory limit (vercel cannot set one)", "3 vCPUs (vercel takes 1 or an even number)"),
                    e.violations());
            SandboxSpec.Builder six = SandboxSpec.builder();
            for (int i = 0; i < 6; i++) {
                six.label("l" + i, "v");
            }
            e = assertThrows(UnsupportedPolicyException.class, () -> vercel.open(six.build()));
            assertEquals(List.of("6 labels (vercel takes at most 5 tags, 1 of them taken by this library's policy, owner and expiry labels)"), e.violations());
        }
        assertEquals(0, server.getRequestCount());
        assertEquals(List.of(), stub.requests);
    }

    @Test
    void theTokenIsOnTheWireOnlyInTheAuthorizationHeader() {
        try (SandboxRunner vercel = runner()) {
            vercel.run(RunRequest.python("print(1)"));
        }
        for (RecordedRequest r : stub.requests) {
            assertFalse(r.getUrl().toString().contains(TOKEN));
            assertFalse(r.getBody() != null && r.getBody().utf8().contains(TOKEN));
            assertEquals("sandbox4j-vercel", r.getHeaders().get("User-Agent"));
        }
    }

    /**
     * Vercel's API lists nothing: a listing is the fixed script as its own command (bash, the script,
     * then the directory and a nonce as arguments), and only its nonce-framed stdout counts.
     */
    @Test
    void listingIsTheFixedScriptRunAsItsOwnCommand() {
        stub.on("cmd", r -> {
            JsonNode args = VercelStub.body(r).path("args");
            String nonce = args.path(4).asText();
            return VercelStub.ndjson(List.of(
                    HttpTransport.JSON.createObjectNode().set("command", HttpTransport.JSON.createObjectNode()
                            .put("id", "cmd_list").putNull("exitCode")),
                    HttpTransport.JSON.createObjectNode().put("stream", "stdout")
                            .put("data", "0123 begin\nf 9 forged\u0000\n0123 end 0\n" + nonce + " begin\nf 5 "),
                    HttpTransport.JSON.createObjectNode().put("stream", "stderr").put("data", "noise"),
                    HttpTransport.JSON.createObjectNode().put("stream", "stdout")
                            .put("data", "b.txt\u0000d 4096 c\u0000l 4 e\u0000\n" + nonce + " end 0\n"),
                    HttpTransport.JSON.createObjectNode().set("command", HttpTransport.JSON.createObjectNode()
                            .put("id", "cmd_list").put("exitCode", 0).put("durationMs", 3))));
        });
        try (SandboxRunner vercel = runner(); Sandbox sandbox = vercel.open(SandboxSpec.defaults())) {
            assertEquals(List.of(dev.sandbox4j.api.FileEntry.of("a/b.txt", dev.sandbox4j.api.FileEntry.Type.FILE, 5),
                    dev.sandbox4j.api.FileEntry.of("a/c", dev.sandbox4j.api.FileEntry.Type.DIRECTORY, 0),
                    dev.sandbox4j.api.FileEntry.of("a/e", dev.sandbox4j.api.FileEntry.Type.SYMLINK, 0)), sandbox.listFiles("a"));
        }
        JsonNode cmd = VercelStub.body(stub.all("cmd").get(0));
        assertEquals("bash", cmd.path("command").asText());
        assertEquals(List.of("-c", dev.sandbox4j.spi.ListingScript.SCRIPT, "sandbox4j-list", "a"),
                iterable(cmd.path("args").elements()).stream().limit(4).map(JsonNode::asText).toList());
        assertTrue(cmd.path("args").path(4).asText().matches("[0-9a-f]{32}"), cmd.toString());
        assertTrue(cmd.path("wait").asBoolean() && cmd.path("logs").asBoolean() && !cmd.path("sudo").asBoolean(), cmd.toString());
        assertEquals(60000, cmd.path("timeout").asLong());
    }
}
