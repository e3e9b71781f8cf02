package dev.sandbox4j.e2b;

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
import dev.sandbox4j.policy.EgressPolicy;
import dev.sandbox4j.policy.Language;
import dev.sandbox4j.policy.Limits;
import dev.sandbox4j.policy.UnsupportedPolicyException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import mockwebserver3.RecordedRequest;
import org.junit.jupiter.api.Test;

/** Exact requests against the recordings, and the happy paths of a sandbox's life. */
class E2bWireTest extends WireTestBase {

    @Test
    void smallRunIsThreeRequestsShapedLikeTheRecording() throws Exception {
        JsonNode rec = recording("e2b-a-command.json");
        fake.starts.add(r -> {
            try {
                return recordedStream(rec.get(2));
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        });
        SandboxSpec spec = SandboxSpec.builder().limits(Limits.builder().lifetime(Duration.ofSeconds(60)).build()).build();
        Sandbox sandbox = runner.open(spec);
        RunResult r;
        try {
            r = sandbox.exec(Execution.builder("print('hi')").budget(Duration.ofSeconds(30)).build());
        } finally {
            sandbox.close();
        }

        assertEquals("hello from main.py\n", r.stdout());
        assertEquals("warning: something\n", r.stderr());
        assertEquals(RunStatus.EXITED, r.status());
        assertEquals(0, r.exitCode().orElseThrow(), "an end event without exitCode means 0");
        assertEquals(Teardown.DESTROYED, sandbox.teardown());
        String id = sandbox.id();
        assertEquals(List.of("POST /v2/sandboxes", "POST /process.Process/Start", "DELETE /sandboxes/" + id),
                fake.requestLines(), "create, start, kill: 3 requests (E2B's SDK uses 4)");

        // create: the recorded body plus our metadata
        RecordedRequest create = fake.requests.get(0);
        ObjectNode expected = rec.get(0).path("body").path("decoded").deepCopy();
        String policy = CreateRequest.of(sandbox.runId(), spec).labels().get(CreateRequest.POLICY_LABEL);
        assertTrue(policy.matches("60s-[0-9a-f]{16}"), policy);
        expected.putObject("metadata").put(CreateRequest.RUN_ID_LABEL, sandbox.runId())
                .put(CreateRequest.POLICY_LABEL, policy);
        assertEquals(expected, FakeE2b.read(create));
        assertRecordedHeaders(rec.get(0), create, List.of("content-type", "x-api-key"));
        assertEquals(KEY, create.getHeaders().get("x-api-key"));

        // start: Connect envelope, headers as the SDK sends them, argv instead of a shell line
        RecordedRequest start = fake.requests.get(1);
        assertRecordedHeaders(rec.get(2), start, List.of("connect-protocol-version", "connect-timeout-ms",
                "content-type", "e2b-sandbox-port", "keepalive-ping-interval", "x-access-token"));
        assertEquals(id, start.getHeaders().get("e2b-sandbox-id"));
        assertEquals(FakeE2b.TOKEN, start.getHeaders().get("x-access-token"));
        assertNull(start.getHeaders().get("connect-accept-encoding"));
        assertNull(start.getHeaders().get("x-api-key"), "the API key stays on the control plane");
        byte[] body = start.getBody().toByteArray();
        assertEquals(0, body[0]);
        assertEquals(body.length - 5, ((body[1] & 0xff) << 24) | ((body[2] & 0xff) << 16) | ((body[3] & 0xff) << 8) | (body[4] & 0xff));
        assertEquals(startJson("python3", "-c", "print('hi')"), FakeE2b.startMessage(start));
        assertEquals("{\"process\":{\"cmd\":\"python3\",\"args\":[\"-c\",\"print('hi')\"]},\"stdin\":false}",
                new String(body, 5, body.length - 5, StandardCharsets.UTF_8), "the SDK's key order");

        // kill
        RecordedRequest kill = fake.requests.get(2);
        assertRecordedHeaders(rec.get(3), kill, List.of("x-api-key"));
        assertEquals(0, kill.getBodySize());
        assertNull(kill.getHeaders().get("x-access-token"), "the envd token stays on envd");
    }

    @Test
    void runUsesBudgetPlusMarginAsLifetimeRoundedUpToSeconds() {
        runner.run(RunRequest.builder("print(1)").budget(Duration.ofMillis(1500)).build());
        JsonNode create = FakeE2b.read(fake.requests.get(0));
        assertEquals(32, create.path("timeout").asInt(), "1.5 s + 30 s margin, rounded up");
        assertEquals("1500", fake.requests.get(1).getHeaders().get("connect-timeout-ms"));
        assertEquals("base", create.path("templateID").asText());
        assertFalse(create.path("allow_internet_access").asBoolean());
        assertTrue(create.path("metadata").path(CreateRequest.RUN_ID_LABEL).asText().matches("[a-z0-9]{16}"));
    }

    @Test
    void severalExecsReuseOneSandboxAndItsToken() {
        try (Sandbox s = runner.open(SandboxSpec.defaults())) {
            s.exec(Execution.python("x = 1"));
            s.exec(Execution.of(Language.BASH, "ls"));
            s.exec(Execution.of(Language.JAVASCRIPT, "console.log(1)"));
        }
        List<RecordedRequest> starts = fake.requests("POST", "/process.Process/Start");
        assertEquals(3, starts.size());
        assertEquals(5, fake.requests.size(), "one create, three starts, one kill");
        for (RecordedRequest r : starts) {
            assertEquals(FakeE2b.TOKEN, r.getHeaders().get("x-access-token"));
            assertEquals("isbx1fake0000000", r.getHeaders().get("e2b-sandbox-id"));
        }
        assertEquals(tree("{'process':{'cmd':'bash','args':['-c','ls']},'stdin':false}"), FakeE2b.startMessage(starts.get(1)));
        assertEquals(tree("{'process':{'cmd':'node','args':['-e','console.log(1)']},'stdin':false}"),
                FakeE2b.startMessage(starts.get(2)));
    }

    @Test
    void codeReachesTheInterpreterByteForByte() {
        String code = "print(\"it's $(whoami) `id` ; rm -rf / \\\\n\")\n# ü 😀 '\"\n\tx = '''\n'''";
        runner.run(RunRequest.python(code));
        JsonNode msg = FakeE2b.startMessage(fake.requests("POST", "/process.Process/Start").get(0));
        assertEquals("python3", msg.path("process").path("cmd").asText());
        assertEquals(code, msg.path("process").path("args").get(1).asText());
    }

    @Test
    void longCodeAndCodeWithNulGoByFileAndAFixedCommand() {
        String longCode = "x = 1\n".repeat(20_000);
        runner.run(RunRequest.python(longCode));
        List<RecordedRequest> uploads = fake.requests("POST", "/files");
        assertEquals(1, uploads.size());
        String path = uploads.get(0).getUrl().queryParameter("path");
        assertTrue(path.matches("/tmp/sandbox4j/code-[a-z0-9]+\\.py"), path);
        assertEquals(FakeE2b.TOKEN, uploads.get(0).getHeaders().get("x-access-token"));
        assertTrue(uploads.get(0).getHeaders().get("content-type").startsWith("multipart/form-data"));
        String multipart = uploads.get(0).getBody().string(StandardCharsets.UTF_8);
        assertTrue(multipart.contains("name=\"file\""));
        assertTrue(multipart.contains("\r\n\r\n" + longCode + "\r\n--"), "the code bytes, unchanged");
        JsonNode msg = FakeE2b.startMessage(fake.requests("POST", "/process.Process/Start").get(0));
        assertEquals(tree("{'process':{'cmd':'python3','args':['" + path + "']},'stdin':false}"), msg);

        runner.run(RunRequest.builder("echo a\0b").language(Language.BASH).build());
        String second = fake.requests("POST", "/files").get(1).getUrl().queryParameter("path");
        assertTrue(second.endsWith(".sh"), second);
        assertTrue(fake.requests("POST", "/files").get(1).getBody().string(StandardCharsets.UTF_8).contains("echo a\0b"));
        JsonNode msg2 = FakeE2b.startMessage(fake.requests("POST", "/process.Process/Start").get(1));
        assertEquals("bash", msg2.path("process").path("cmd").asText());
        assertEquals(second, msg2.path("process").path("args").get(0).asText());
    }

    @Test
    void filesEnvAndLabelsGoWhereTheSpecSays() {
        SandboxSpec spec = SandboxSpec.builder()
                .file("data/in.txt", "hello")
                .file("b.csv", "1,2")
                .env("FOO", "bar")
                .label("team", "search")
                .build();
        runner.run(RunRequest.of(spec, Execution.python("print(open('data/in.txt').read())")));
        assertEquals(List.of("POST /v2/sandboxes", "POST /files", "POST /process.Process/Start", "DELETE /sandboxes/isbx1fake0000000"),
                fake.requestLines());
        JsonNode create = FakeE2b.read(fake.requests.get(0));
        assertEquals(tree("{'FOO':'bar'}"), create.path("envVars"), "only the spec's environment");
        assertEquals("search", create.path("metadata").path("team").asText());
        RecordedRequest files = fake.requests.get(1);
        assertNull(files.getUrl().queryParameter("path"), "each part names its own relative path");
        String body = files.getBody().string(StandardCharsets.UTF_8);
        assertTrue(body.contains("name=\"file\"; filename=\"data/in.txt\""), body);
        assertTrue(body.contains("name=\"file\"; filename=\"b.csv\""), body);
        assertTrue(body.contains("\r\n\r\nhello\r\n"));
    }

    @Test
    void setupRunsUnderItsEgressThenTheLockDownPrecedesTheCode() {
        SandboxSpec spec = SandboxSpec.builder()
                .setupEgress(EgressPolicy.allowOnly("pypi.org", "files.pythonhosted.org"))
                .setupCommand("pip install requests")
                .egress(EgressPolicy.denyAll())
                .build();
        runner.run(RunRequest.of(spec, Execution.python("import requests")));
        String id = "isbx1fake0000000";
        assertEquals(List.of("POST /v2/sandboxes", "POST /process.Process/Start", "PUT /sandboxes/" + id + "/network",
                "GET /sandboxes/" + id, "POST /process.Process/Start", "DELETE /sandboxes/" + id), fake.requestLines());
        JsonNode create = FakeE2b.read(fake.requests.get(0));
        assertEquals(tree("{'allowOut':['pypi.org','files.pythonhosted.org'],'denyOut':['0.0.0.0/0']}"), create.path("network"));
        assertEquals(tree("{'process':{'cmd':'bash','args':['-c','pip install requests']},'stdin':false}"),
                FakeE2b.startMessage(fake.requests.get(1)));
        assertEquals(tree("{'denyOut':['0.0.0.0/0'],'allow_internet_access':false}"), FakeE2b.read(fake.requests.get(2)));
        assertEquals(KEY, fake.requests.get(2).getHeaders().get("x-api-key"));
    }

    @Test
    void refusedPoliciesMakeNoCallAtAll() {
        RunRequest ipv6 = RunRequest.builder("print(1)")
                .egress(EgressPolicy.builder().allowCidr("2001:db8::/32").build()).build();
        assertThrows(UnsupportedPolicyException.class, () -> runner.run(ipv6));
        RunRequest denyOverDomain = RunRequest.builder("print(1)")
                .egress(EgressPolicy.builder().allowDomain("example.com").denyCidr("93.184.216.0/24").build()).build();
        assertThrows(UnsupportedPolicyException.class, () -> runner.run(denyOverDomain));
        RunRequest cpus = RunRequest.builder("print(1)").spec(SandboxSpec.builder()
                .limits(Limits.builder().vcpus(4).build()).build()).build();
        assertThrows(UnsupportedPolicyException.class, () -> runner.run(cpus));
        assertEquals(0, fake.requests.size());
    }

    @Test
    void aScopedHeaderRuleIsRefusedBeforeAnyCallAndAnUnscopedOneIsNot() {
        // E2B's network.rules set a header on every request to the host: a scope would be dropped
        SandboxSpec scoped = SandboxSpec.builder().egress(EgressPolicy.builder().allowDomain("api.example.com")
                .headerRule(dev.sandbox4j.policy.HeaderRule.builder("api.example.com", "Authorization",
                        dev.sandbox4j.policy.SecretRef.of("key", () -> "sk-never-sent")).methods("GET").pathPrefix("/v1/").build())
                .build()).build();
        UnsupportedPolicyException e = assertThrows(UnsupportedPolicyException.class, () -> runner.open(scoped));
        assertEquals(List.of("header rule for 'api.example.com' scoped to methods [GET] and paths under '/v1/' (e2b cannot"
                + " enforce HEADER_RULE_SCOPES: the header would go on every request to the host)"), e.violations());
        assertEquals(0, fake.requests.size());
        assertTrue(runner.capabilities().supports(dev.sandbox4j.policy.Capabilities.Egress.HEADER_RULES));
        assertEquals(List.of(), runner.capabilities().violations(EgressPolicy.builder().allowDomain("api.example.com")
                .headerRule(dev.sandbox4j.policy.HeaderRule.of("api.example.com", "Authorization",
                        dev.sandbox4j.policy.SecretRef.of("key", () -> "sk-never-sent"))).build(), Limits.defaults()));
    }

    @Test
    void setupCommandFailureTearsDownBeforeAnyCode() {
        fake.starts.add(r -> FakeE2b.connect(List.of(FakeE2b.frame(0, FakeE2b.start(7)),
                FakeE2b.frame(0, FakeE2b.stderr("E: no such package\n")),
                FakeE2b.frame(0, FakeE2b.end(100, "exit status 100")), FakeE2b.frame(2, "{}"))));
        SandboxSpec spec = SandboxSpec.builder().setupEgress(EgressPolicy.allowAll()).setupCommand("apt-get install nope").build();
        SandboxException e = assertThrows(SandboxException.class, () -> runner.open(spec));
        assertTrue(e.getMessage().contains("no such package"), e.getMessage());
        assertEquals(List.of("POST /v2/sandboxes", "POST /process.Process/Start", "DELETE /sandboxes/isbx1fake0000000"),
                fake.requestLines());
    }

    @Test
    void exitCodesAndStderrComeBackSeparately() {
        fake.starts.add(r -> FakeE2b.connect(List.of(FakeE2b.frame(0, FakeE2b.start(9)),
                FakeE2b.frame(0, FakeE2b.keepalive()),
                FakeE2b.frame(0, FakeE2b.stdout("out\n")), FakeE2b.frame(0, FakeE2b.stderr("err\n")),
                FakeE2b.frame(0, FakeE2b.end(2, "exit status 2")), FakeE2b.frame(2, "{}"))));
        RunResult r = runner.run(RunRequest.python("import sys; sys.exit(2)"));
        assertEquals(RunStatus.EXITED, r.status());
        assertEquals(2, r.exitCode().orElseThrow());
        assertEquals("out\n", r.stdout());
        assertEquals("err\n", r.stderr());
    }

    @Test
    void utf8SplitAcrossChunksIsJoined() {
        byte[] smile = "😀\n".getBytes(StandardCharsets.UTF_8);
        String a = java.util.Base64.getEncoder().encodeToString(java.util.Arrays.copyOfRange(smile, 0, 2));
        String b = java.util.Base64.getEncoder().encodeToString(java.util.Arrays.copyOfRange(smile, 2, smile.length));
        fake.starts.add(r -> FakeE2b.connect(List.of(FakeE2b.frame(0, FakeE2b.start(9)),
                FakeE2b.frame(0, "{\"event\":{\"data\":{\"stdout\":\"" + a + "\"}}}"),
                FakeE2b.frame(0, "{\"event\":{\"data\":{\"stdout\":\"" + b + "\"}}}"),
                FakeE2b.frame(0, FakeE2b.end(null, "exit status 0")), FakeE2b.frame(2, "{}"))));
        assertEquals("😀\n", runner.run(RunRequest.python("print('😀')")).stdout());
    }

    static void assertRecordedHeaders(JsonNode recorded, RecordedRequest actual, List<String> names) {
        for (String name : names) {
            String want = null;
            for (JsonNode h : recorded.path("headers")) {
                if (h.get(0).asText().equalsIgnoreCase(name)) {
                    want = h.get(1).asText();
                }
            }
            String got = actual.getHeaders().get(name);
            assertTrue(want != null, "the recording has no " + name);
            assertTrue(got != null, "missing header " + name);
            if (!want.startsWith("***masked***")) {
                assertEquals(want, got, name);
            } else {
                assertTrue(want.contains("len=") && !got.isEmpty(), name);
            }
        }
    }

    static JsonNode startJson(String cmd, String... args) {
        ObjectNode n = FakeE2b.JSON.createObjectNode();
        ObjectNode p = n.putObject("process");
        p.put("cmd", cmd);
        com.fasterxml.jackson.databind.node.ArrayNode a = p.putArray("args");
        for (String arg : args) {
            a.add(arg);
        }
        n.put("stdin", false);
        return n;
    }

    static JsonNode tree(String singleQuoted) {
        try {
            return FakeE2b.JSON.readTree(singleQuoted.replace('\'', '"'));
        } catch (Exception e) {
            throw new IllegalArgumentException(singleQuoted, e);
        }
    }
}
