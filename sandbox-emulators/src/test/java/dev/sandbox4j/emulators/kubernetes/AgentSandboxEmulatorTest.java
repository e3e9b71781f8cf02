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
