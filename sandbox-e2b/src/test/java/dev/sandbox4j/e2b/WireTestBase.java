package dev.sandbox4j.e2b;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.io.InputStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import mockwebserver3.MockResponse;
import mockwebserver3.MockWebServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;

/** One MockWebServer serving the API, envd and the code interpreter (E2B_SANDBOX_URL), with a leak check. */
abstract class WireTestBase {
    static final String KEY = "e2b_0a1b2c3d4e5f6a7b8c9d0e1f2a3b4c5d6e7f8a9b";
    FakeE2b fake;
    MockWebServer server;
    E2bSandboxRunner runner;

    @BeforeEach
    void startServer() throws IOException {
        fake = new FakeE2b();
        server = new MockWebServer();
        server.setDispatcher(fake);
        server.start();
        runner = builder().build();
    }

    E2bSandboxRunner.Builder builder() {
        return E2bSandboxRunner.builder()
                .apiKey(KEY)
                .apiUrl(server.url("/").toString())
                .sandboxUrl(server.url("/").toString())
                .retryBaseDelay(Duration.ofMillis(1))
                .lostCreateWindow(Duration.ofMillis(1)) // one lookup round, as scripted
                .teardownTimeout(Duration.ofSeconds(10));
    }

    @AfterEach
    void stopServer() {
        fake.release.countDown();
        server.close();
        assertEquals(0, fake.leaks(), "sandboxes left running: " + fake.live.keySet());
    }

    static JsonNode recording(String name) throws IOException {
        try (InputStream in = WireTestBase.class.getResourceAsStream("/recordings/" + name)) {
            return FakeE2b.JSON.readTree(in);
        }
    }

    /** The recorded response frames of a Start call, re-encoded as envelopes. */
    static MockResponse recordedStream(JsonNode startEntry) throws IOException {
        List<byte[]> frames = new ArrayList<>();
        for (JsonNode f : startEntry.path("response").path("frames")) {
            frames.add(FakeE2b.frame(f.path("flags").asInt(), FakeE2b.JSON.writeValueAsString(f.path("json"))));
        }
        return FakeE2b.connect(frames);
    }

    static MockResponse recordedNdjson(JsonNode executeEntry) {
        List<String> lines = new ArrayList<>();
        executeEntry.path("response").path("lines").forEach(l -> lines.add(l.asText()));
        return FakeE2b.ndjson(lines);
    }
}
