package dev.sandbox4j.docker.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.sandbox4j.api.exception.SandboxException;
import dev.sandbox4j.policy.EgressPolicy;
import dev.sandbox4j.policy.UnsupportedPolicyException;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import mockwebserver3.MockResponse;
import mockwebserver3.MockWebServer;
import mockwebserver3.RecordedRequest;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The lock-down of an allow-all setup on a network the engine can disconnect ({@code bridge}), against a
 * scripted engine on loopback (the machine's engine here has no bridge network: its allow-all is the host's):
 * the kill helper first, then {@code POST /networks/bridge/disconnect} for the container, then an inspect
 * that must show it on no network; a disconnect that did not take, or one the engine refused, fails the
 * lock-down (the lifecycle then tears the sandbox down).
 */
class LockDownWireTest {
    private static final String ID = "c0ffee";
    private MockWebServer engine;
    private DockerDriver driver;

    @BeforeEach
    void start() throws IOException {
        engine = new MockWebServer();
        engine.start();
        DockerSettings s = new DockerSettings(DockerSettings.Endpoint.parse("tcp://127.0.0.1:" + engine.getPort()), "img",
                "1000:1000", "0:0", "bridge", 64 << 20, 64 << 20, 64, 65536, Duration.ofSeconds(2), Duration.ofSeconds(2));
        driver = new DockerDriver(s);
    }

    @AfterEach
    void stop() {
        engine.close();
    }

    private void answer(String body) {
        engine.enqueue(new MockResponse.Builder().code(200).setHeader("Content-Type", "application/json").body(body).build());
    }

    /** The kill helper's exec: created, its stream empty, exit 0 (no process of the code's uid left). */
    private void killHelperFindsNothing() {
        answer("{\"Id\":\"kill1\"}");
        engine.enqueue(new MockResponse.Builder().code(200).setHeader("Content-Type", "application/vnd.docker.raw-stream")
                .body("").build());
        answer("{\"Running\":false,\"ExitCode\":0}");
    }

    private static String inspect(String networks) {
        return "{\"Id\":\"" + ID + "\",\"State\":{\"Running\":true},\"NetworkSettings\":{\"Networks\":{" + networks + "}}}";
    }

    private List<RecordedRequest> requests() throws InterruptedException {
        List<RecordedRequest> out = new ArrayList<>();
        RecordedRequest r;
        while ((r = engine.takeRequest(100, TimeUnit.MILLISECONDS)) != null) {
            out.add(r);
        }
        return out;
    }

    private static List<String> lines(List<RecordedRequest> rs) {
        List<String> out = new ArrayList<>();
        // the client pins the API version in the path (/v1.41/...)
        rs.forEach(r -> out.add(r.getMethod() + " " + r.getUrl().encodedPath().replaceFirst("^/v1\\.[0-9]+", "")));
        return out;
    }

    private static DockerHandle allowAllHandle() {
        return new DockerHandle("sandbox4j-run1", "run1", ID, EgressPolicy.allowAll());
    }

    @Test
    void theContainerIsKilledClearDisconnectedAndShownOnNoNetwork() throws Exception {
        killHelperFindsNothing();
        answer(inspect("\"bridge\":{\"NetworkID\":\"n1\"}"));
        answer("");
        answer(inspect(""));
        DockerHandle h = allowAllHandle();
        driver.updateEgress(h, EgressPolicy.denyAll());
        List<RecordedRequest> rs = requests();
        assertEquals(List.of("POST /containers/" + ID + "/exec", "POST /exec/kill1/start", "GET /exec/kill1/json",
                "GET /containers/" + ID + "/json", "POST /networks/bridge/disconnect", "GET /containers/" + ID + "/json"),
                lines(rs));
        JsonNode kill = DockerApi.MAPPER.readTree(rs.get(0).getBody().string(java.nio.charset.StandardCharsets.UTF_8));
        assertEquals(ContainerSpec.SUPERVISOR_USER, kill.path("User").asText(), "the kill helper runs as the supervisor");
        JsonNode disconnect = DockerApi.MAPPER.readTree(rs.get(4).getBody().string(java.nio.charset.StandardCharsets.UTF_8));
        assertEquals(ID, disconnect.path("Container").asText());
        assertTrue(disconnect.path("Force").asBoolean());
        assertTrue(h.egress().isDenyAll(), "the handle records the code's egress");
    }

    @Test
    void aDisconnectThatDidNotTakeFailsTheLockDown() throws Exception {
        killHelperFindsNothing();
        answer(inspect("\"bridge\":{}"));
        answer("");
        answer(inspect("\"bridge\":{}"));
        DockerHandle h = allowAllHandle();
        SandboxException e = assertThrows(SandboxException.class, () -> driver.updateEgress(h, EgressPolicy.denyAll()));
        assertTrue(e.getMessage().contains("still reports it on network(s) [bridge]"), e.getMessage());
        assertTrue(h.egress().isAllowAll(), "the handle keeps the egress that was not locked down");
    }

    @Test
    void aDisconnectTheEngineRefusesFailsTheLockDown() throws Exception {
        killHelperFindsNothing();
        answer(inspect("\"bridge\":{}"));
        engine.enqueue(new MockResponse.Builder().code(500).body("{\"message\":\"boom\"}").build());
        SandboxException e = assertThrows(SandboxException.class, () -> driver.updateEgress(allowAllHandle(),
                EgressPolicy.denyAll()));
        assertTrue(e.getMessage().contains("did not disconnect it from network bridge"), e.getMessage());
        List<String> calls = lines(requests());
        assertEquals("POST /networks/bridge/disconnect", calls.get(calls.size() - 1), "sent once, nothing after: " + calls);
    }

    @Test
    void aKillThatCannotShowTheSetupGoneKillsTheContainerAndFailsTheLockDown() throws Exception {
        answer("{\"Id\":\"kill1\"}");
        engine.enqueue(new MockResponse.Builder().code(200).setHeader("Content-Type", "application/vnd.docker.raw-stream")
                .body("").build());
        answer("{\"Running\":false,\"ExitCode\":1}"); // survivors after its rounds
        answer(""); // the container's kill
        DockerHandle h = allowAllHandle();
        assertThrows(SandboxException.class, () -> driver.updateEgress(h, EgressPolicy.denyAll()));
        List<String> calls = lines(requests());
        assertTrue(calls.contains("POST /containers/" + ID + "/kill"), calls.toString());
        assertFalse(calls.stream().anyMatch(c -> c.contains("/networks/")), "nothing after a kill that failed: " + calls);
        assertEquals(DockerHandle.State.GONE, h.state());
    }

    @Test
    void whatCannotBeLockedDownIsRefusedBeforeAnyCall() {
        DockerSettings host = new DockerSettings(DockerSettings.Endpoint.parse("tcp://127.0.0.1:" + engine.getPort()), "img",
                "1000:1000", "0:0", "host", 64 << 20, 64 << 20, 64, 65536, Duration.ofSeconds(2), Duration.ofSeconds(2));
        DockerDriver onHost = new DockerDriver(host);
        assertThrows(UnsupportedPolicyException.class, () -> onHost.checkLockDown(EgressPolicy.allowAll(), EgressPolicy.denyAll()));
        assertThrows(UnsupportedPolicyException.class, () -> driver.checkLockDown(EgressPolicy.denyAll(), EgressPolicy.allowAll()));
        driver.checkLockDown(EgressPolicy.allowAll(), EgressPolicy.denyAll());
        driver.checkLockDown(EgressPolicy.allowAll(), EgressPolicy.allowOnly("pypi.org"));
        onHost.checkLockDown(EgressPolicy.allowOnly("pypi.org"), EgressPolicy.denyAll());
        assertEquals(0, engine.getRequestCount());
        assertTrue(DockerDriver.disconnectable("bridge") && DockerDriver.disconnectable("my-net"));
        assertFalse(DockerDriver.disconnectable("host") || DockerDriver.disconnectable("none")
                || DockerDriver.disconnectable("container:abc"));
    }
}
