package dev.sandbox4j.emulators.kubernetes;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.sandbox4j.emulators.InstantMachine;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * The late-create knob: the connection drops, and the Sandbox is stored after the client's read-back by
 * name (which so answers 404 and cannot settle the create), or within {@link AgentSandboxEmulator#LATE_LOOK_WAIT}
 * of the drop when no read-back comes. Before, a late create could be stored a millisecond after the drop,
 * so how many of them a runner's read-back resolved depended on the machine's load (issue 29: the
 * Kubernetes campaign's hung-lookup knob fired 7 times where 8 were required, at load 11).
 */
class AgentSandboxLateCreateTest {
    private static final HttpClient HTTP = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

    private static String sandbox(String name) {
        return "{\"apiVersion\":\"agents.x-k8s.io/v1beta1\",\"kind\":\"Sandbox\",\"metadata\":{\"name\":\"" + name + "\"},"
                + "\"spec\":{\"podTemplate\":{\"spec\":{\"securityContext\":{\"runAsNonRoot\":true,\"runAsUser\":1000,"
                + "\"seccompProfile\":{\"type\":\"RuntimeDefault\"}},\"containers\":[{\"name\":\"c\",\"image\":\"i\","
                + "\"securityContext\":{\"allowPrivilegeEscalation\":false,\"capabilities\":{\"drop\":[\"ALL\"]}}}]}}}}";
    }

    private static void postDropped(AgentSandboxEmulator e, String name) {
        String base = e.url() + "/apis/agents.x-k8s.io/v1beta1/namespaces/ns/sandboxes";
        assertThrows(IOException.class, () -> HTTP.send(HttpRequest.newBuilder(URI.create(base))
                .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(sandbox(name))).build(),
                HttpResponse.BodyHandlers.ofString()), "the late create's connection drops");
    }

    private static Object awaitStored(AgentSandboxEmulator e, String name, Duration within) throws InterruptedException {
        long until = System.nanoTime() + within.toNanos();
        while (e.object("sandboxes", "ns", name) == null && System.nanoTime() < until) {
            Thread.sleep(5);
        }
        return e.object("sandboxes", "ns", name);
    }

    @Test
    void aLateCreateIsStoredOnlyAfterTheClientsReadBackByName() throws Exception {
        try (AgentSandboxEmulator e = AgentSandboxEmulator.start(InstantMachine.FACTORY)) {
            e.faults().lateCreate(1, Duration.ofMillis(4)); // dropped within 2 ms, due within 4 ms
            postDropped(e, "late1");
            Thread.sleep(300);
            assertNull(e.object("sandboxes", "ns", "late1"), "stored before the client looked");
            HttpResponse<String> read = HTTP.send(HttpRequest.newBuilder(URI.create(e.url()
                    + "/apis/agents.x-k8s.io/v1beta1/namespaces/ns/sandboxes/late1")).build(), HttpResponse.BodyHandlers.ofString());
            assertEquals(404, read.statusCode(), read.body());
            assertNotNull(awaitStored(e, "late1", Duration.ofSeconds(1)), "stored once the read-back was answered");
        }
    }

    @Test
    void withoutAReadBackALateCreateIsStoredWithinTheWait() throws Exception {
        try (AgentSandboxEmulator e = AgentSandboxEmulator.start(InstantMachine.FACTORY)) {
            e.faults().lateCreate(1, Duration.ofMillis(4));
            postDropped(e, "late2");
            assertNotNull(awaitStored(e, "late2", AgentSandboxEmulator.LATE_LOOK_WAIT.plusSeconds(1)), "a client that never looks");
        }
    }
}
