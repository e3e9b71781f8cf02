package dev.sandbox4j.emulators.kubernetes;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.sandbox4j.emulators.InstantMachine;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The emulator's own rules: the controller's facts, the REST surface, the Pod Security check. */
class AgentSandboxEmulatorTest {
    private static final HttpClient HTTP = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

    @Test
    void nameHashIsFnv1a32AsTheControllerComputesIt() {
        assertEquals("811c9dc5", AgentSandboxEmulator.nameHash(""));
        assertEquals("e40c292c", AgentSandboxEmulator.nameHash("a"));
        assertEquals("bf9cf968", AgentSandboxEmulator.nameHash("foobar"));
    }

    @Test
    void labelSelectors() throws Exception {
        JsonNode labels = AgentSandboxEmulator.JSON.readTree("{\"a\":\"1\",\"b\":\"2\"}");
        assertTrue(AgentSandboxEmulator.matches("a=1,b", labels));
        assertTrue(AgentSandboxEmulator.matches("a==1,!c", labels));
        assertFalse(AgentSandboxEmulator.matches("a!=1", labels));
        assertFalse(AgentSandboxEmulator.matches("c", labels));
        assertFalse(AgentSandboxEmulator.matches("a=2", labels));
    }

    @Test
    void theRestrictedPodSecurityStandardIsChecked() throws Exception {
        JsonNode locked = AgentSandboxEmulator.JSON.readTree("{\"securityContext\":{\"runAsNonRoot\":true,"
                + "\"seccompProfile\":{\"type\":\"RuntimeDefault\"}},\"containers\":[{\"name\":\"c\",\"securityContext\":"
                + "{\"allowPrivilegeEscalation\":false,\"capabilities\":{\"drop\":[\"ALL\"]}}}]}");
        assertEquals(List.of(), AgentSandboxEmulator.restrictedViolations(locked));
        JsonNode open = AgentSandboxEmulator.JSON.readTree("{\"containers\":[{\"name\":\"c\"}]}");
        assertEquals(4, AgentSandboxEmulator.restrictedViolations(open).size(), AgentSandboxEmulator.restrictedViolations(open).toString());
    }

    @Test
    void aSandboxBecomesReadyWithThePodAndGoesWithIt() throws Exception {
        try (AgentSandboxEmulator e = AgentSandboxEmulator.start(InstantMachine.FACTORY)) {
            String base = e.url() + "/apis/agents.x-k8s.io/v1beta1/namespaces/ns/sandboxes";
            String body = "{\"apiVersion\":\"agents.x-k8s.io/v1beta1\",\"kind\":\"Sandbox\",\"metadata\":{\"name\":\"s1\","
                    + "\"labels\":{\"k\":\"v\"}},\"spec\":{\"podTemplate\":{\"metadata\":{\"labels\":{\"app\":\"x\"}},\"spec\":"
                    + "{\"securityContext\":{\"runAsNonRoot\":true,\"runAsUser\":1000,\"seccompProfile\":{\"type\":\"RuntimeDefault\"}},"
                    + "\"containers\":[{\"name\":\"c\",\"image\":\"i\",\"securityContext\":{\"allowPrivilegeEscalation\":false,"
                    + "\"capabilities\":{\"drop\":[\"ALL\"]}}}]}}}}";
            HttpResponse<String> created = HTTP.send(HttpRequest.newBuilder(URI.create(base))
                    .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(body)).build(),
                    HttpResponse.BodyHandlers.ofString());
            assertEquals(201, created.statusCode(), created.body());
            assertEquals(409, HTTP.send(HttpRequest.newBuilder(URI.create(base)).POST(HttpRequest.BodyPublishers.ofString(body))
                    .build(), HttpResponse.BodyHandlers.ofString()).statusCode());
            JsonNode ready = null;
            long until = System.nanoTime() + 10_000_000_000L;
            while (System.nanoTime() < until) {
                JsonNode s = AgentSandboxEmulator.JSON.readTree(HTTP.send(HttpRequest.newBuilder(URI.create(base + "/s1")).build(),
                        HttpResponse.BodyHandlers.ofString()).body());
                if (s.path("status").path("conditions").path(0).path("status").asText().equals("True")) {
                    ready = s;
                    break;
                }
                Thread.sleep(10);
            }
            assertTrue(ready != null, "Ready within 10 s");
            JsonNode c = ready.path("status").path("conditions").path(0);
            assertEquals("Ready", c.path("type").asText());
            assertEquals("DependenciesReady", c.path("reason").asText());
            assertEquals("Pod is Ready", c.path("message").asText());
            assertEquals("agents.x-k8s.io/sandbox-name-hash=" + AgentSandboxEmulator.nameHash("s1"), ready.path("status").path("selector").asText());
            JsonNode pod = e.object("pods", "ns", "s1");
            assertEquals("x", pod.path("metadata").path("labels").path("app").asText());
            assertEquals(1, AgentSandboxEmulator.JSON.readTree(HTTP.send(HttpRequest.newBuilder(URI.create(base + "?labelSelector=k%3Dv"))
                    .build(), HttpResponse.BodyHandlers.ofString()).body()).path("items").size());
            assertEquals(0, AgentSandboxEmulator.JSON.readTree(HTTP.send(HttpRequest.newBuilder(URI.create(base + "?labelSelector=k%3Dw"))
                    .build(), HttpResponse.BodyHandlers.ofString()).body()).path("items").size());
            assertEquals(200, HTTP.send(HttpRequest.newBuilder(URI.create(base + "/s1")).DELETE().build(),
                    HttpResponse.BodyHandlers.ofString()).statusCode());
            assertEquals(404, HTTP.send(HttpRequest.newBuilder(URI.create(base + "/s1")).DELETE().build(),
                    HttpResponse.BodyHandlers.ofString()).statusCode());
            assertEquals(0, e.objects());
            assertEquals(0, e.runningPods());
        }
    }

    /**
     * {@code alterLabel} changes a label of a stored Sandbox as a GET then reads it (false for no such
     * Sandbox and once its pod is gone); the answer delay holds a GET, the create delay a create, which
     * still takes effect after a client gave up on it.
     */
    @Test
    void alterLabelAndTheAnswerAndCreateDelays() throws Exception {
        try (AgentSandboxEmulator e = AgentSandboxEmulator.start(InstantMachine.FACTORY)) {
            String base = e.url() + "/apis/agents.x-k8s.io/v1beta1/namespaces/ns/sandboxes";
            assertEquals(201, HTTP.send(HttpRequest.newBuilder(URI.create(base)).POST(HttpRequest.BodyPublishers.ofString(
                    sandbox("s1"))).build(), HttpResponse.BodyHandlers.ofString()).statusCode());
            assertEquals("True", ready(e, "s1").path("status").asText());
            String version = e.object("sandboxes", "ns", "s1").path("metadata").path("resourceVersion").asText();
            assertTrue(e.alterLabel("s1", "sandbox4j-policy", "changed"));
            JsonNode read = AgentSandboxEmulator.JSON.readTree(HTTP.send(HttpRequest.newBuilder(URI.create(base + "/s1")).build(),
                    HttpResponse.BodyHandlers.ofString()).body());
            assertEquals("changed", read.path("metadata").path("labels").path("sandbox4j-policy").asText());
            assertFalse(version.equals(read.path("metadata").path("resourceVersion").asText()), "a patch moves the resourceVersion");
            assertFalse(e.alterLabel("s2", "k", "v"), "no such Sandbox");

            e.faults().slow(java.time.Duration.ofMillis(600));
            long t0 = System.nanoTime();
            assertEquals(200, HTTP.send(HttpRequest.newBuilder(URI.create(base + "/s1")).build(),
                    HttpResponse.BodyHandlers.ofString()).statusCode());
            assertTrue(System.nanoTime() - t0 >= 600_000_000L, "the answer delay held the GET");
            e.faults().slow(java.time.Duration.ZERO);

            e.faults().createDelay(java.time.Duration.ofMillis(800));
            HttpRequest create = HttpRequest.newBuilder(URI.create(base)).timeout(java.time.Duration.ofMillis(200))
                    .POST(HttpRequest.BodyPublishers.ofString(sandbox("s3"))).build();
            try {
                HTTP.send(create, HttpResponse.BodyHandlers.ofString());
                throw new AssertionError("a create held 800 ms answered within the client's 200 ms");
            } catch (java.net.http.HttpTimeoutException expected) {
                // the client gave up; the create goes on
            }
            assertTrue(e.object("sandboxes", "ns", "s3") == null, "held before anything is stored");
            assertEquals("True", ready(e, "s3").path("status").asText(), "stored and started once the delay ended");
            e.faults().createDelay(java.time.Duration.ZERO);

            assertEquals(200, HTTP.send(HttpRequest.newBuilder(URI.create(base + "/s1")).DELETE().build(),
                    HttpResponse.BodyHandlers.ofString()).statusCode());
            assertFalse(e.alterLabel("s1", "k", "v"), "a deleted Sandbox");
        }
    }

    /** A locked-down Sandbox named {@code name}, as the JSON a client POSTs. */
    private static String sandbox(String name) {
        return "{\"apiVersion\":\"agents.x-k8s.io/v1beta1\",\"kind\":\"Sandbox\",\"metadata\":{\"name\":\"" + name + "\"},"
                + "\"spec\":{\"podTemplate\":{\"spec\":{\"securityContext\":{\"runAsNonRoot\":true,\"runAsUser\":1000,"
                + "\"seccompProfile\":{\"type\":\"RuntimeDefault\"}},\"containers\":[{\"name\":\"c\",\"image\":\"i\","
                + "\"securityContext\":{\"allowPrivilegeEscalation\":false,\"capabilities\":{\"drop\":[\"ALL\"]}}}]}}}}";
    }

    private static JsonNode ready(AgentSandboxEmulator e, String name) throws InterruptedException {
        long until = System.nanoTime() + 10_000_000_000L;
        while (System.nanoTime() < until) {
            JsonNode s = e.object("sandboxes", "ns", name);
            JsonNode c = s == null ? null : s.path("status").path("conditions").path(0);
            if (c != null && !c.isMissingNode()) {
                return c;
            }
            Thread.sleep(5);
        }
        throw new AssertionError("no Ready condition on " + name + " within 10 s");
    }

    @Test
    void heldSandboxesStayPendingUntilReleasedAndOnlyAsManyAsAsked() throws Exception {
        try (AgentSandboxEmulator e = AgentSandboxEmulator.start(InstantMachine.FACTORY)) {
            String base = e.url() + "/apis/agents.x-k8s.io/v1beta1/namespaces/ns/sandboxes";
            e.holdPending(1);
            for (String name : List.of("held", "free")) {
                assertEquals(201, HTTP.send(HttpRequest.newBuilder(URI.create(base)).POST(HttpRequest.BodyPublishers
                        .ofString(sandbox(name))).build(), HttpResponse.BodyHandlers.ofString()).statusCode());
                ready(e, name); // one at a time: the first to start is the one held
            }
            assertEquals("True", ready(e, "free").path("status").asText(), "only one Sandbox held");
            JsonNode c = ready(e, "held");
            assertEquals("False", c.path("status").asText());
            assertEquals("DependenciesNotReady", c.path("reason").asText());
            assertEquals("Pod exists with phase: Pending", c.path("message").asText());
            assertEquals("Pending", e.object("pods", "ns", "held").path("status").path("phase").asText());
            assertEquals(1, e.heldPending());
            assertEquals(1, e.runningPods(), "no machine for the held pod");
            Thread.sleep(100);
            assertEquals("False", ready(e, "held").path("status").asText(), "still held a while later");

            assertEquals(1, e.releasePending());
            assertEquals("True", ready(e, "held").path("status").asText(), "Ready when releasePending returns");
            assertEquals("Running", e.object("pods", "ns", "held").path("status").path("phase").asText());
            assertEquals(0, e.heldPending());
            assertEquals(2, e.runningPods());

            e.holdPending(1);
            assertEquals(201, HTTP.send(HttpRequest.newBuilder(URI.create(base)).POST(HttpRequest.BodyPublishers
                    .ofString(sandbox("gone"))).build(), HttpResponse.BodyHandlers.ofString()).statusCode());
            assertEquals("False", ready(e, "gone").path("status").asText());
            assertEquals(200, HTTP.send(HttpRequest.newBuilder(URI.create(base + "/gone")).DELETE().build(),
                    HttpResponse.BodyHandlers.ofString()).statusCode());
            assertEquals(null, e.object("pods", "ns", "gone"), "the held pod goes with its Sandbox");
            assertEquals(0, e.heldPending());
            assertEquals(0, e.releasePending(), "nothing to start once deleted");
        }
    }
}
