package dev.sandbox4j.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.sandbox4j.api.exception.SandboxAuthenticationException;
import dev.sandbox4j.api.exception.SandboxException;
import dev.sandbox4j.api.exception.SandboxRateLimitException;
import dev.sandbox4j.spi.Secret;
import java.io.IOException;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicReference;
import mockwebserver3.MockResponse;
import mockwebserver3.MockWebServer;
import mockwebserver3.RecordedRequest;
import mockwebserver3.SocketEffect;
import okhttp3.Request;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class HttpTransportTest {
    private static final String KEY = "sk_test_9f8e7d6c5b4a";
    private MockWebServer server;
    private HttpTransport http;

    @BeforeEach
    void start() throws IOException {
        server = new MockWebServer();
        server.start();
        http = HttpTransport.builder("test")
                .baseUrl(server.url("/api/").toString())
                .secretHeader("Authorization", "Bearer ", Secret.of(KEY))
                .retryBaseDelay(Duration.ofMillis(1))
                .build();
    }

    @AfterEach
    void stop() {
        server.close();
    }

    private Request get(String path) {
        return http.request(http.url(path)).get().build();
    }

    private Request post(String path) {
        return http.request(http.url(path)).post(HttpTransport.jsonBody(Map.of("a", 1))).build();
    }

    /**
     * An asynchronous call on the default client (a WebSocket's reader, an enqueued call) runs on a
     * daemon thread: with OkHttp's own dispatcher the thread idles 60 s as a non-daemon, and a program
     * that used Daytona's followed session log waited a minute at exit (RestTraceSecretsTest's Daytona
     * child took 63 s for 4 s of work).
     */
    @Test
    void theDefaultClientRunsAsynchronousCallsOnDaemonThreads() throws Exception {
        server.enqueue(new MockResponse.Builder().body("{}").build());
        java.util.concurrent.CompletableFuture<Boolean> daemon = new java.util.concurrent.CompletableFuture<>();
        http.client().newCall(get("sandbox/async")).enqueue(new okhttp3.Callback() {
            @Override
            public void onFailure(okhttp3.Call call, IOException e) {
                daemon.completeExceptionally(e);
            }

            @Override
            public void onResponse(okhttp3.Call call, okhttp3.Response response) {
                response.close();
                daemon.complete(Thread.currentThread().isDaemon());
            }
        });
        assertTrue(daemon.get(30, java.util.concurrent.TimeUnit.SECONDS), "the callback's thread is not a daemon");
    }

    @Test
    void sendsAuthAndParsesJson() throws Exception {
        server.enqueue(new MockResponse.Builder().body("{\"id\":\"x\"}").build());
        JsonNode n = http.call(get("sandbox/x"), true);
        assertEquals("x", n.path("id").asText());
        RecordedRequest r = server.takeRequest();
        assertEquals("/api/sandbox/x", r.getUrl().encodedPath());
        assertEquals("Bearer " + KEY, r.getHeaders().get("Authorization"));
    }

    @Test
    void mapsErrorBodiesOfEachProviderShape() throws Exception {
        server.enqueue(new MockResponse.Builder().code(429).setHeader("Retry-After", "3")
                .body("{\"error\":{\"code\":\"rate_limited\",\"message\":\"slow down\"}}").build());
        SandboxException e = assertThrows(SandboxException.class, () -> http.call(post("v"), false));
        assertInstanceOf(SandboxRateLimitException.class, e);
        assertEquals("rate_limited", e.providerCode().orElseThrow());
        assertEquals(Duration.ofSeconds(3), e.retryAfter().orElseThrow());
        assertTrue(e.isRetriable());
        assertTrue(e.getMessage().contains("slow down"), e.getMessage());

        server.enqueue(new MockResponse.Builder().code(400)
                .body("{\"statusCode\":400,\"error\":\"Bad Request\",\"message\":[\"a must be set\",\"b too\"]}").build());
        e = assertThrows(SandboxException.class, () -> http.call(post("d"), false));
        assertEquals(400, e.httpStatus().orElseThrow());
        assertFalse(e.isRetriable());
        assertTrue(e.getMessage().endsWith("HTTP 400: a must be set, b too"), e.getMessage());

        // a provider's own shape comes from the adapter's ErrorBody
        HttpTransport withErrors = HttpTransport.builder("test").baseUrl(server.url("/api/").toString())
                .errorBody(n -> {
                    ErrorBody.Parsed p = ErrorBody.STANDARD.read(n);
                    return p.message() != null ? p : new ErrorBody.Parsed(p.code(), ErrorBody.text(n.path("errors")));
                }).build();
        server.enqueue(new MockResponse.Builder().code(400)
                .body("{\"errors\":[\"a.txt: create: permission denied\",\"b\"],\"files\":[]}").build());
        e = assertThrows(SandboxException.class, () -> withErrors.call(post("u"), false));
        assertTrue(e.getMessage().endsWith("HTTP 400: a.txt: create: permission denied, b"), e.getMessage());

        server.enqueue(new MockResponse.Builder().code(401)
                .body("{\"code\":401,\"message\":\"bad key " + KEY + "\"}").build());
        e = assertThrows(SandboxAuthenticationException.class, () -> http.call(get("e"), true));
        assertFalse(e.getMessage().contains(KEY), e.getMessage());
        assertTrue(e.getMessage().contains("bad key ***"), e.getMessage());

        HttpTransport withCodes = HttpTransport.builder("test").baseUrl(server.url("/api/").toString())
                .errorBody(n -> new ErrorBody.Parsed(ErrorBody.text(n.path("error_code")), ErrorBody.text(n.path("message"))))
                .build();
        server.enqueue(new MockResponse.Builder().code(503)
                .body("{\"code\":503,\"message\":\"no capacity\",\"error_code\":\"sandbox_capacity_unavailable\"}").build());
        e = assertThrows(SandboxException.class, () -> withCodes.call(post("f"), false));
        assertEquals("sandbox_capacity_unavailable", e.providerCode().orElseThrow());
    }

    @Test
    void retriesIdempotentCallsOnly() throws Exception {
        server.enqueue(new MockResponse.Builder().code(503).build());
        server.enqueue(new MockResponse.Builder().code(502).build());
        server.enqueue(new MockResponse.Builder().body("{}").build());
        http.call(get("x"), true);
        assertEquals(3, server.getRequestCount());

        server.enqueue(new MockResponse.Builder().code(503).build());
        SandboxException e = assertThrows(SandboxException.class, () -> http.call(post("y"), false));
        assertEquals(4, server.getRequestCount());
        assertTrue(e.isRetriable());
    }

    @Test
    void droppedPostIsAmbiguousButRefusedConnectionIsNot() throws Exception {
        server.enqueue(new MockResponse.Builder().onResponseStart(SocketEffect.ShutdownConnection.INSTANCE).build());
        SandboxException e = assertThrows(SandboxException.class, () -> http.call(post("c"), false));
        assertTrue(e.requestMayHaveSucceeded(), e.getMessage());

        HttpTransport dead = HttpTransport.builder("test").baseUrl("http://127.0.0.1:1/").build();
        e = assertThrows(SandboxException.class,
                () -> dead.call(dead.request(dead.url("c")).post(HttpTransport.jsonBody(Map.of())).build(), false));
        assertFalse(e.requestMayHaveSucceeded(), e.getMessage());
        assertTrue(e.isRetriable());
    }

    @Test
    void interruptCancelsABlockedCall() throws Exception {
        server.enqueue(new MockResponse.Builder().bodyDelay(1, java.util.concurrent.TimeUnit.HOURS).body("{}").build());
        AtomicReference<Throwable> thrown = new AtomicReference<>();
        CountDownLatch started = new CountDownLatch(1);
        Thread t = new Thread(() -> {
            started.countDown();
            try {
                http.execute(get("slow"), Duration.ofHours(1), r -> r.body().string());
            } catch (Throwable e) {
                thrown.set(e);
            }
        });
        t.start();
        started.await();
        server.takeRequest();
        t.interrupt();
        t.join(10_000);
        assertFalse(t.isAlive());
        assertInstanceOf(InterruptedException.class, thrown.get());
    }

    @Test
    void clientDeadlineEndsAStalledStream() {
        server.enqueue(new MockResponse.Builder().bodyDelay(1, java.util.concurrent.TimeUnit.HOURS).body("{}").build());
        assertThrows(ClientDeadlineException.class,
                () -> http.execute(get("slow"), Duration.ofMillis(300), r -> r.body().string()));
    }

    @Test
    void aDeadlineUnderAMillisecondOrZeroHasPassedAndIsNeverNone() {
        // OkHttp reads a timeout of 0 as none: in whole milliseconds half a millisecond would have been 0
        for (Duration d : new Duration[] {Duration.ofNanos(500_000), Duration.ZERO}) {
            server.enqueue(new MockResponse.Builder().bodyDelay(3, java.util.concurrent.TimeUnit.SECONDS).body("{}").build());
            long t0 = System.nanoTime();
            assertThrows(ClientDeadlineException.class, () -> http.execute(get("slow"), d, r -> r.body().string()), d.toString());
            assertTrue(System.nanoTime() - t0 < 2_500_000_000L, d + ": waited for the body instead of the deadline");
        }
    }

    @Test
    void theBuilderRefusesADeadlineOfNothingAndAResponseCapItCannotHold() {
        HttpTransport.Builder b = HttpTransport.builder("test");
        assertThrows(IllegalArgumentException.class, () -> b.unaryTimeout(Duration.ZERO));
        assertThrows(IllegalArgumentException.class, () -> b.unaryTimeout(Duration.ofSeconds(-1)));
        assertThrows(IllegalArgumentException.class, () -> b.unaryTimeout(null));
        assertThrows(IllegalArgumentException.class, () -> b.maxResponseBytes(Long.MAX_VALUE));
        b.maxResponseBytes(HttpTransport.Builder.MAX_RESPONSE_BYTES);
    }

    @Test
    void aDotSegmentCannotLeaveTheBasePath() {
        assertTrue(http.url("sandboxes/abc").encodedPath().endsWith("/api/sandboxes/abc"), http.url("sandboxes/abc").toString());
        assertThrows(IllegalArgumentException.class, () -> http.url("sandboxes/../../admin"));
        assertThrows(IllegalArgumentException.class, () -> http.url("sandboxes/./abc"));
        assertEquals("/api/sandboxes/a%20b", http.url("sandboxes/a b").encodedPath());
        assertThrows(IllegalArgumentException.class, () -> HttpTransport.pathSegment(".."));
        assertThrows(IllegalArgumentException.class, () -> HttpTransport.pathSegment(""));
        assertEquals("a/b", HttpTransport.pathSegment("a/b"), "a '/' is the caller's to encode (addPathSegment does)");
    }

    @Test
    void aSecretThatContainsAnotherIsRedactedWholeWhicheverCameFirst() {
        http.addSecret("abcd1234");
        http.addSecret("abcd1234efgh5678");
        assertEquals("x *** y ***", http.redact("x abcd1234efgh5678 y abcd1234"));
        try (HttpTransport.SecretScope scope = http.secretScope()) {
            scope.add("zz" + "abcd1234efgh5678" + "zz");
            assertEquals("<***>", http.redact("<zzabcd1234efgh5678zz>"), "a scope's longer secret is not cut by the transport's");
        }
    }

    @Test
    void streamIgnoresTheClientReadTimeoutButExecuteDoesNot() throws Exception {
        okhttp3.OkHttpClient impatient = new okhttp3.OkHttpClient.Builder()
                .readTimeout(Duration.ofMillis(100)).retryOnConnectionFailure(false).build();
        HttpTransport t = HttpTransport.builder("test").baseUrl(server.url("/api/").toString()).client(impatient).build();
        // A line, then silence longer than the read timeout, then the rest: a quiet remote command.
        // (chunked framing written by hand: MockWebServer sends a custom body as is)
        MockResponse quiet = new MockResponse.Builder().setHeader("Transfer-Encoding", "chunked")
                .body(new mockwebserver3.MockResponseBody() {
                    @Override
                    public long getContentLength() {
                        return -1;
                    }

                    @Override
                    public void writeTo(okio.BufferedSink sink) throws IOException {
                        sink.writeUtf8("6\r\nfirst\n\r\n").flush();
                        try {
                            Thread.sleep(400);
                        } catch (InterruptedException e) {
                            Thread.currentThread().interrupt();
                        }
                        sink.writeUtf8("7\r\nsecond\n\r\n0\r\n\r\n").flush();
                    }
                }).build();
        server.enqueue(quiet);
        assertEquals("first\nsecond\n",
                t.stream(t.request(t.url("s")).get().build(), Duration.ofSeconds(30), r -> r.body().string()));
        server.enqueue(quiet);
        assertThrows(IOException.class,
                () -> t.execute(t.request(t.url("s")).get().build(), Duration.ofSeconds(30), r -> r.body().string()));
    }

    @Test
    void secretNeverInToString() {
        assertFalse(Secret.of(KEY).toString().contains(KEY));
        assertFalse(http.toString().contains(KEY));
    }

    @Test
    void retryAfterParsesSecondsAndDates() {
        assertEquals(Duration.ofSeconds(7), HttpTransport.parseRetryAfter("7"));
        assertEquals(null, HttpTransport.parseRetryAfter("soon"));
        assertTrue(HttpTransport.parseRetryAfter("Wed, 21 Oct 2015 07:28:00 GMT").isZero());
    }

    @Test
    void anOversizedJsonBodyIsRefusedNotRead() throws Exception {
        HttpTransport small = HttpTransport.builder("test").baseUrl(server.url("/api/").toString())
                .maxResponseBytes(1024).build();
        String big = "{\"a\":\"" + "x".repeat(4096) + "\"}";
        String fits = "{\"a\":\"" + "x".repeat(1024 - 8) + "\"}";
        server.enqueue(new MockResponse.Builder().body(big).build());
        server.enqueue(new MockResponse.Builder().chunkedBody(big, 512).build()); // no Content-Length
        server.enqueue(new MockResponse.Builder().body(fits).build());
        Request create = small.request(small.url("c")).post(HttpTransport.jsonBody(Map.of("a", 1))).build();
        SandboxException e = assertThrows(SandboxException.class, () -> small.call(create, false));
        assertTrue(e.getMessage().contains("over 1024 bytes"), e.getMessage());
        assertTrue(e.requestMayHaveSucceeded(), "the server answered 2xx: whatever it created exists");
        assertFalse(e.isRetriable());
        assertThrows(SandboxException.class, () -> small.call(create, true));
        assertEquals(1024, fits.length());
        assertEquals(1024 - 8, small.call(create, true).path("a").asText().length());
        assertEquals(3, server.getRequestCount(), "a refused body is not retried");
    }

    @Test
    void aSecretThatCannotBeAHeaderValueIsRefusedWithoutEchoingIt() {
        // a key pasted with a trailing newline: OkHttp's own message would quote a non-Authorization header's value
        String key = "e2b_0123456789abcdef\n";
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> HttpTransport.builder("test")
                .baseUrl(server.url("/api/").toString()).secretHeader("X-API-KEY", "", Secret.of(key)));
        assertTrue(e.getMessage().contains("X-API-KEY"), e.getMessage());
        for (Throwable t = e; t != null; t = t.getCause()) {
            assertFalse(String.valueOf(t.getMessage()).contains("0123456789abcdef"), t.getMessage());
        }
    }
}
