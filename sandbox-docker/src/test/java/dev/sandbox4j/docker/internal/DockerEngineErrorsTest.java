package dev.sandbox4j.docker.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.sandbox4j.api.exception.SandboxAuthenticationException;
import dev.sandbox4j.api.exception.SandboxException;
import dev.sandbox4j.api.exception.SandboxNotFoundException;
import dev.sandbox4j.api.exception.SandboxRateLimitException;
import dev.sandbox4j.http.ClientDeadlineException;
import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import mockwebserver3.MockResponse;
import mockwebserver3.MockWebServer;
import mockwebserver3.SocketEffect;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The engine client on {@code sandbox-http}'s transport (issue 32): the engine's error statuses reach the
 * caller as the REST adapters' subtypes, a call that may have run something is sent once whatever
 * happened to its answer, lookups are retried, and every call has a deadline. An engine over TCP
 * (MockWebServer on loopback), as {@code DOCKER_HOST=tcp://...} reaches one; the Unix socket path is the
 * same client with another socket factory (every other test of this module goes through it).
 */
class DockerEngineErrorsTest {
    private MockWebServer engine;
    private DockerApi api;

    @BeforeEach
    void start() throws IOException {
        engine = new MockWebServer();
        engine.start();
        DockerSettings s = new DockerSettings(DockerSettings.Endpoint.parse("tcp://127.0.0.1:" + engine.getPort()), "img",
                "1000:1000", "0:0", "bridge", 64 << 20, 64 << 20, 64, 65536, Duration.ofSeconds(1), Duration.ofSeconds(1));
        api = new DockerApi(s);
    }

    @AfterEach
    void stop() {
        engine.close();
    }

    private void answer(int status, String body) {
        engine.enqueue(new MockResponse.Builder().code(status).body(body).build());
    }

    private static ObjectNode body() {
        return DockerApi.MAPPER.createObjectNode().put("Image", "img");
    }

    @Test
    void errorStatusesOfACreateAreTheRestAdaptersSubtypesAndNoneIsSentTwice() throws Exception {
        answer(401, "{\"message\":\"unauthorized\"}");
        assertInstanceOf(SandboxAuthenticationException.class, assertThrows(SandboxException.class,
                () -> api.createContainer("c1", body())));
        answer(403, "{\"message\":\"forbidden\"}");
        assertInstanceOf(SandboxAuthenticationException.class, assertThrows(SandboxException.class,
                () -> api.createContainer("c2", body())));
        answer(404, "{\"message\":\"No such image: img\"}");
        SandboxException missing = assertThrows(SandboxException.class, () -> api.createContainer("c3", body()));
        assertInstanceOf(SandboxNotFoundException.class, missing);
        assertTrue(missing.getMessage().contains("No such image"), missing.getMessage());
        engine.enqueue(new MockResponse.Builder().code(429).setHeader("Retry-After", "3").body("{}").build());
        SandboxException limited = assertThrows(SandboxException.class, () -> api.createContainer("c4", body()));
        assertInstanceOf(SandboxRateLimitException.class, limited);
        assertTrue(limited.isRetriable());
        assertEquals(Duration.ofSeconds(3), limited.retryAfter().orElseThrow());
        answer(409, "{\"message\":\"Conflict. The container name is already in use\"}");
        SandboxException conflict = assertThrows(SandboxException.class, () -> api.createContainer("c5", body()));
        assertEquals(409, conflict.httpStatus().getAsInt());
        assertTrue(conflict.isRetriable());
        assertFalse(conflict.requestMayHaveSucceeded());
        answer(500, "{\"message\":\"boom\"}");
        SandboxException failed = assertThrows(SandboxException.class, () -> api.createContainer("c6", body()));
        assertTrue(failed.requestMayHaveSucceeded(), "a 5xx to a create is an unknown outcome");
        assertEquals(6, engine.getRequestCount(), "a create was sent more than once");
    }

    @Test
    void aCreateWhoseAnswerIsLostGarbledOrLateIsAnUnknownOutcomeSentOnce() throws Exception {
        engine.enqueue(new MockResponse.Builder().onResponseStart(SocketEffect.ShutdownConnection.INSTANCE).build());
        SandboxException lost = assertThrows(SandboxException.class, () -> api.createContainer("c1", body()));
        assertTrue(lost.requestMayHaveSucceeded(), lost.getMessage());
        answer(201, "{\"Id\":");
        SandboxException garbled = assertThrows(SandboxException.class, () -> api.createContainer("c2", body()));
        assertTrue(garbled.requestMayHaveSucceeded(), garbled.getMessage());
        answer(201, "{}");
        assertTrue(assertThrows(SandboxException.class, () -> api.createContainer("c3", body())).requestMayHaveSucceeded());
        // held past the 1 s request deadline: the call ends with an unknown outcome, not a hang
        engine.enqueue(new MockResponse.Builder().headersDelay(5, TimeUnit.SECONDS).code(201).body("{\"Id\":\"late\"}").build());
        SandboxException late = assertThrows(SandboxException.class, () -> api.createContainer("c4", body()));
        assertTrue(late.requestMayHaveSucceeded(), late.getMessage());
        assertEquals(4, engine.getRequestCount());
    }

    @Test
    void aStartAndAnExecStartAreNeverResentAndA5xxToAnExecStartMayHaveRunCode() throws Exception {
        answer(500, "{\"message\":\"start failed\"}");
        assertTrue(assertThrows(SandboxException.class, () -> api.start("c1")).requestMayHaveSucceeded());
        answer(304, "");
        api.start("c1"); // already started: fine
        answer(503, "{\"message\":\"busy\"}");
        SandboxException exec = assertThrows(SandboxException.class,
                () -> api.execStart("e1", Duration.ofSeconds(5), in -> in.read()));
        assertTrue(exec.codeMayHaveRun(), exec.getMessage());
        answer(404, "{\"message\":\"No such exec instance\"}");
        assertInstanceOf(SandboxNotFoundException.class, assertThrows(SandboxException.class,
                () -> api.execStart("e2", Duration.ofSeconds(5), in -> in.read())));
        assertEquals(4, engine.getRequestCount());
    }

    @Test
    void anExecStreamIsBoundedByItsOwnDeadlineNotByAReadTimeout() throws Exception {
        // silent for 1.5 s (longer than the 1 s control deadline), then output: read whole
        engine.enqueue(new MockResponse.Builder().bodyDelay(1500, TimeUnit.MILLISECONDS).body("out").build());
        String read = api.execStart("e1", Duration.ofSeconds(60), in -> new String(in.readAllBytes()));
        assertEquals("out", read);
        // silent past its own deadline: ended
        engine.enqueue(new MockResponse.Builder().bodyDelay(30, TimeUnit.SECONDS).body("never").build());
        assertThrows(ClientDeadlineException.class, () -> api.execStart("e2", Duration.ofMillis(300), in -> in.readAllBytes()));
    }

    @Test
    void lookupsAreRetriedAndNotFoundIsAnAnswer() throws Exception {
        answer(503, "{\"message\":\"busy\"}");
        answer(200, "{\"State\":{\"Running\":true}}");
        assertEquals(Boolean.TRUE, api.running("c1"));
        answer(404, "{\"message\":\"No such container\"}");
        assertNull(api.inspect("c2"));
        answer(404, "{\"message\":\"No such container\"}");
        assertFalse(api.remove("c3"));
        answer(401, "{\"message\":\"unauthorized\"}");
        assertInstanceOf(SandboxAuthenticationException.class, assertThrows(SandboxException.class,
                () -> api.listByLabel("k", null)));
        engine.enqueue(new MockResponse.Builder().headersDelay(5, TimeUnit.SECONDS).body("[]").build());
        engine.enqueue(new MockResponse.Builder().body("[]").build());
        assertEquals(0, api.listByLabel("k", null).size(), "a hung lookup is retried after its deadline");
        assertEquals(7, engine.getRequestCount());
    }
}
