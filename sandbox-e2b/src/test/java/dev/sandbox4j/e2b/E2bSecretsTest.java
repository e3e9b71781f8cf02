package dev.sandbox4j.e2b;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.sandbox4j.api.Execution;
import dev.sandbox4j.api.RunRequest;
import dev.sandbox4j.api.RunResult;
import dev.sandbox4j.api.Sandbox;
import dev.sandbox4j.api.exception.SandboxException;
import dev.sandbox4j.api.SandboxSpec;
import dev.sandbox4j.policy.EgressPolicy;
import dev.sandbox4j.policy.HeaderRule;
import dev.sandbox4j.policy.SecretRef;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;
import mockwebserver3.RecordedRequest;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The API key, the envd token and brokered header values stay out of logs, messages and toString(). */
class E2bSecretsTest extends WireTestBase {
    private static final String HEADER_SECRET = "sk_live_brokered_51Hc0ffee";
    private final ByteArrayOutputStream captured = new ByteArrayOutputStream();
    private final List<String> texts = new ArrayList<>();
    private PrintStream originalErr;

    @BeforeEach
    void capture() {
        originalErr = System.err;
        System.setErr(new PrintStream(captured, true, StandardCharsets.UTF_8));
    }

    @AfterEach
    void restore() {
        System.setErr(originalErr);
    }

    /** Issue 13 item 5: resolved header values leave the redaction set with their sandbox. */
    @Test
    void perSandboxSecretsDoNotAccumulateAcrossRuns() {
        int[] n = {0};
        EgressPolicy brokered = EgressPolicy.builder().allowDomain("api.stripe.com")
                .headerRule(HeaderRule.of("api.stripe.com", "Authorization",
                        SecretRef.of("stripe", () -> HEADER_SECRET + (n[0]++)), "Bearer "))
                .build();
        SandboxSpec spec = SandboxSpec.builder().egress(brokered).build();
        for (int i = 0; i < 20; i++) {
            runner.run(RunRequest.of(spec, Execution.python("print(1)")));
        }
        fake.createFaults.add(FakeE2b.json(400, "{\"code\":400,\"message\":\"bad\"}"));
        collect(() -> runner.run(RunRequest.of(spec, Execution.python("1"))));
        assertEquals(21, n[0], "each create resolved its own value");
        assertEquals(0, ((dev.sandbox4j.e2b.internal.E2bDriver) runner.lifecycle().driver()).scopedSecretCount());
    }

    @Test
    void secretsAppearNowhereButOnTheWireWhereTheyBelong() {
        EgressPolicy brokered = EgressPolicy.builder().allowDomain("api.stripe.com")
                .headerRule(HeaderRule.of("api.stripe.com", "Authorization", SecretRef.of("stripe", () -> HEADER_SECRET), "Bearer "))
                .build();
        SandboxSpec spec = SandboxSpec.builder().egress(brokered).env("MODE", "test").build();
        try (Sandbox s = runner.open(spec)) {
            texts.add(s.toString());
            RunResult r = s.exec(Execution.python("print(1)"));
            texts.add(r.toString());
            // envd echoes the token in an error message
            fake.starts.add(req -> FakeE2b.connect(List.of(FakeE2b.frame(0, FakeE2b.start(5)),
                    FakeE2b.frame(2, "{\"error\":{\"code\":\"internal\",\"message\":\"bad token " + FakeE2b.TOKEN + "\"}}"))));
            collect(() -> s.exec(Execution.python("print(2)")));
            fake.starts.add(req -> FakeE2b.json(401, "{\"code\":401,\"message\":\"token " + FakeE2b.TOKEN + " rejected\"}"));
            collect(() -> s.exec(Execution.python("print(3)")));
            fake.starts.add(req -> FakeE2b.json(502, "{\"message\":\"proxy saw " + FakeE2b.TOKEN + "\",\"code\":502}"));
            collect(() -> s.exec(Execution.python("print(4)")));
        }
        // the API echoes the key and the brokered value in errors
        fake.createFaults.add(FakeE2b.json(401, "{\"code\":401,\"message\":\"Invalid API key " + KEY + "\"}"));
        collect(() -> runner.run(RunRequest.python("1")));
        fake.createFaults.add(FakeE2b.json(400, "{\"code\":400,\"message\":\"network rule value Bearer " + HEADER_SECRET + " invalid\"}"));
        collect(() -> runner.run(RunRequest.of(spec, Execution.python("1"))));
        fake.createFaults.add(FakeE2b.json(500, "{\"code\":500,\"message\":\"boom " + KEY + "\"}"));
        collect(() -> runner.run(RunRequest.python("1")));
        texts.add(runner.toString());
        texts.add(E2bSandboxRunner.builder().apiKey(KEY).toString());
        texts.add(runner.lifecycle().driver().toString());
        texts.add(captured.toString(StandardCharsets.UTF_8));

        assertTrue(captured.size() > 0, "debug logging was captured");
        assertEquals(6, texts.stream().filter(t -> t.startsWith("EXC ")).count(), "every failure was a typed exception");
        for (String t : texts) {
            assertFalse(t.contains(KEY), "API key leaked: " + t);
            assertFalse(t.contains(FakeE2b.TOKEN), "envd token leaked: " + t);
            assertFalse(t.contains(HEADER_SECRET), "brokered secret leaked: " + t);
        }

        // on the wire: the key only on the control plane, the token only on envd, the secret only in create
        for (RecordedRequest r : fake.requests) {
            boolean controlPlane = r.getUrl().encodedPath().startsWith("/v2/") || r.getUrl().encodedPath().startsWith("/sandboxes");
            assertEquals(controlPlane, r.getHeaders().get("x-api-key") != null, r.getRequestLine());
            if (controlPlane) {
                assertNull(r.getHeaders().get("x-access-token"), r.getRequestLine());
            } else {
                assertEquals(FakeE2b.TOKEN, r.getHeaders().get("x-access-token"), r.getRequestLine());
                assertFalse(r.getBody().utf8().contains(HEADER_SECRET), r.getRequestLine());
            }
        }
        JsonNode create = FakeE2b.read(fake.requests.get(0));
        assertEquals("Bearer " + HEADER_SECRET, create.path("network").path("rules").path("api.stripe.com").get(0)
                .path("transform").path("headers").path("Authorization").asText());
        assertEquals(E2bWireTest.tree("{'MODE':'test'}"), create.path("envVars"), "the sandbox gets only the spec's env");
    }

    @Test
    void handleToStringHoldsNoToken() {
        try (Sandbox s = runner.open(SandboxSpec.defaults())) {
            assertFalse(s.toString().contains(FakeE2b.TOKEN));
        }
    }

    private void collect(Supplier<?> call) {
        try {
            call.get();
            texts.add("no exception");
        } catch (SandboxException | IllegalArgumentException e) {
            StringBuilder sb = new StringBuilder("EXC ");
            for (Throwable t = e; t != null; t = t.getCause()) {
                sb.append(t).append(" | ");
            }
            texts.add(sb.toString());
        }
    }

    @Test
    void aMissingKeyIsNamedAndABadOneNotEchoed() {
        SandboxException e = assertThrows(SandboxException.class, () -> E2bSandboxRunner.builder().build());
        assertTrue(e.getMessage().contains("E2B_API_KEY"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> E2bSandboxRunner.builder().apiKey("  "));
    }
}
