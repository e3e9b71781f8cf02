package dev.sandbox4j.e2b.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sandbox4j.api.exception.SandboxException;
import dev.sandbox4j.api.SandboxSpec;
import dev.sandbox4j.spi.CreateRequest;
import dev.sandbox4j.spi.Secret;
import java.time.Duration;
import mockwebserver3.MockResponse;
import mockwebserver3.MockWebServer;
import okhttp3.HttpUrl;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** envd URLs without E2B_SANDBOX_URL, and the lifetime rounding. */
class E2bDriverTest {
    private MockWebServer api;

    @BeforeEach
    void start() throws Exception {
        api = new MockWebServer();
        api.start();
    }

    @AfterEach
    void stop() {
        api.close();
    }

    private E2bDriver driver(HttpUrl sandboxUrl) {
        return new E2bDriver(new E2bSettings(Secret.of("e2b_test_key_123456"), api.url("/"), "e2b.app", sandboxUrl,
                "base", false, null, Duration.ofSeconds(5), Duration.ofSeconds(10), Duration.ofMillis(1),
                1 << 20, 4 << 20, 64 * 1024));
    }

    private static MockResponse created(String domain) {
        return new MockResponse.Builder().code(201).setHeader("Content-Type", "application/json")
                .body("{\"sandboxID\":\"iabc123def456ghi789jk\",\"templateID\":\"t\",\"clientID\":\"c\",\"envdVersion\":\"0.6.13\","
                        + "\"envdAccessToken\":\"tok_abcdef123456\",\"domain\":" + (domain == null ? "null" : "\"" + domain + "\"") + "}")
                .build();
    }

    @Test
    void envdUrlsUseTheDirectHostOfTheSandboxDomain() throws Exception {
        api.enqueue(created(null));
        E2bHandle h = driver(null).create(CreateRequest.of("run0000000000001", SandboxSpec.defaults()));
        assertEquals(HttpUrl.get("https://49983-iabc123def456ghi789jk.e2b.app/"), h.envdUrl());
        assertEquals(HttpUrl.get("https://49999-iabc123def456ghi789jk.e2b.app/"), h.interpreterUrl());

        api.enqueue(created("eu.e2b.example"));
        h = driver(null).create(CreateRequest.of("run0000000000001", SandboxSpec.defaults()));
        assertEquals("49983-iabc123def456ghi789jk.eu.e2b.example", h.envdUrl().host());

        api.enqueue(created(null));
        h = driver(HttpUrl.get("http://127.0.0.1:9/emulator/")).create(CreateRequest.of("run0000000000001", SandboxSpec.defaults()));
        assertEquals("http://127.0.0.1:9/emulator/", h.envdUrl().toString());
        assertTrue(h.toString().contains("iabc123def456ghi789jk") && !h.toString().contains("tok_"), h.toString());
    }

    @Test
    void anUnusableAnswerIsAmbiguousSoTheLifecycleLooksItUp() {
        api.enqueue(new MockResponse.Builder().code(201).body("{\"sandboxID\":\"x.evil.com/#\"}").build());
        SandboxException e = assertThrows(SandboxException.class,
                () -> driver(null).create(CreateRequest.of("run0000000000001", SandboxSpec.defaults())));
        assertTrue(e.requestMayHaveSucceeded());
        api.enqueue(created("evil.com/x?"));
        e = assertThrows(SandboxException.class,
                () -> driver(null).create(CreateRequest.of("run0000000000001", SandboxSpec.defaults())));
        assertTrue(e.requestMayHaveSucceeded());
    }

    @Test
    void lifetimeIsWholeSecondsRoundedUp() {
        assertEquals(60, E2bDriver.seconds(Duration.ofSeconds(60)));
        assertEquals(2, E2bDriver.seconds(Duration.ofMillis(1500)));
        assertEquals(1, E2bDriver.seconds(Duration.ofMillis(1)));
        assertEquals(Integer.MAX_VALUE, E2bDriver.seconds(Duration.ofDays(100_000)));
    }

    @Test
    void theApisErrorCodeFieldIsTheProviderCode() throws Exception {
        dev.sandbox4j.http.ErrorBody.Parsed p = E2bDriver.ERROR_BODY.read(dev.sandbox4j.http.HttpTransport.JSON.readTree(
                "{\"code\":503,\"message\":\"no capacity\",\"error_code\":\"sandbox_capacity_unavailable\"}"));
        org.junit.jupiter.api.Assertions.assertEquals("sandbox_capacity_unavailable", p.code());
        org.junit.jupiter.api.Assertions.assertEquals("no capacity", p.message());
    }
}
