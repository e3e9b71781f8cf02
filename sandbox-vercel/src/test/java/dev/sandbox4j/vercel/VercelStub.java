package dev.sandbox4j.vercel;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.sandbox4j.http.HttpTransport;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;
import mockwebserver3.Dispatcher;
import mockwebserver3.MockResponse;
import mockwebserver3.MockResponseBody;
import mockwebserver3.RecordedRequest;
import mockwebserver3.SocketEffect;
import okio.BufferedSink;

/**
 * Vercel's API as the official SDK saw it (the recordings): each request is routed by method and path;
 * a scripted answer is served if one was queued for that route, else the recorded one.
 */
final class VercelStub extends Dispatcher {
    static final JsonNode REC_A = recording("vercel-a-deny-all-write-run-stop.json");
    static final JsonNode REC_B = recording("vercel-b-allow-all-install-lockdown.json");

    final List<RecordedRequest> requests = new CopyOnWriteArrayList<>();
    private final Map<String, Deque<Function<RecordedRequest, MockResponse>>> scripted = new ConcurrentHashMap<>();
    /** Released when the test ends: stalled bodies wait on it. */
    final CountDownLatch release = new CountDownLatch(1);
    /** Counted down when a stalled or endless body has sent its first line. */
    final CountDownLatch streaming = new CountDownLatch(1);
    /** Bytes an endless body managed to write before the client hung up. */
    final AtomicLong endlessBytes = new AtomicLong();

    static JsonNode recording(String file) {
        try (InputStream in = VercelStub.class.getResourceAsStream("/recordings/" + file)) {
            return HttpTransport.JSON.readTree(in);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** create, get, cmd, kill, write, policy, stop, or other. */
    static String route(RecordedRequest r) {
        String p = r.getUrl().encodedPath();
        String m = r.getMethod();
        if (m.equals("POST") && p.matches("/api/v[23]/sandboxes")) {
            return "create";
        }
        if (m.equals("GET") && p.matches("/api/v2/sandboxes/[^/]+") && !p.endsWith("/sessions")) {
            return "get";
        }
        if (m.equals("POST") && p.matches("/api/v2/sandboxes/sessions/[^/]+/cmd")) {
            return "cmd";
        }
        if (m.equals("POST") && p.matches("/api/v2/sandboxes/sessions/[^/]+/cmd/[^/]+/kill")) {
            return "kill";
        }
        if (m.equals("POST") && p.endsWith("/fs/write")) {
            return "write";
        }
        if (m.equals("POST") && p.endsWith("/network-policy")) {
            return "policy";
        }
        if (m.equals("POST") && p.endsWith("/stop")) {
            return "stop";
        }
        return "other";
    }

    VercelStub on(String route, Function<RecordedRequest, MockResponse> answer) {
        scripted.computeIfAbsent(route, k -> new ArrayDeque<>()).add(answer);
        return this;
    }

    VercelStub on(String route, MockResponse answer) {
        return on(route, r -> answer);
    }

    @Override
    public MockResponse dispatch(RecordedRequest request) {
        requests.add(request);
        String route = route(request);
        Deque<Function<RecordedRequest, MockResponse>> q = scripted.get(route);
        Function<RecordedRequest, MockResponse> f;
        synchronized (this) {
            f = q == null ? null : q.poll();
        }
        return f != null ? f.apply(request) : recorded(route, request);
    }

    private static MockResponse recorded(String route, RecordedRequest request) {
        switch (route) {
            case "create":
                return created(REC_A.get(0), request);
            case "cmd":
                return ndjson(lines(REC_A.get(2)));
            case "stop":
                return json(200, REC_A.get(3).path("response").path("body"));
            case "kill":
                return json(200, "{\"command\":{\"id\":\"cmd_000003\",\"exitCode\":137}}");
            case "write":
                return json(200, "{}");
            case "policy":
                return json(200, REC_B.get(3).path("response").path("body"));
            case "get":
                return json(404, "{\"error\":{\"code\":\"not_found\",\"message\":\"Sandbox not found\"}}");
            default:
                return json(404, "{\"error\":{\"code\":\"not_found\",\"message\":\"No route\"}}");
        }
    }

    /** The recorded create answer, with the sandbox named as the request asked. */
    static MockResponse created(JsonNode exchange, RecordedRequest request) {
        ObjectNode body = exchange.path("response").path("body").deepCopy();
        String name = body(request).path("name").asText("sbx-1");
        ((ObjectNode) body.path("sandbox")).put("name", name);
        return json(200, body);
    }

    static List<JsonNode> lines(JsonNode exchange) {
        List<JsonNode> out = new ArrayList<>();
        exchange.path("response").path("ndjsonLines").forEach(out::add);
        return out;
    }

    static JsonNode body(RecordedRequest r) {
        try {
            return r.getBody() == null || r.getBody().size() == 0 ? HttpTransport.JSON.nullNode()
                    : HttpTransport.JSON.readTree(r.getBody().utf8());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static MockResponse json(int code, Object body) {
        return new MockResponse.Builder().code(code).setHeader("Content-Type", "application/json")
                .body(body.toString()).build();
    }

    static MockResponse ndjson(List<JsonNode> lines) {
        StringBuilder sb = new StringBuilder();
        lines.forEach(l -> sb.append(l).append('\n'));
        return new MockResponse.Builder().setHeader("Content-Type", "application/x-ndjson").body(sb.toString()).build();
    }

    static JsonNode parse(String json) {
        try {
            return HttpTransport.JSON.readTree(json);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** What a streamed body does after its lines. */
    enum Then { STALL, STALL_AFTER_FILL, DROP, ENDLESS_STDOUT }

    /** A chunked NDJSON body that sends {@code lines}, then stalls, drops the connection, or prints forever. */
    MockResponse stream(List<JsonNode> lines, Then then) {
        MockResponse.Builder b = new MockResponse.Builder()
                .setHeader("Content-Type", "application/x-ndjson")
                .setHeader("Transfer-Encoding", "chunked") // framing written by hand below
                .body(new MockResponseBody() {
                    @Override
                    public long getContentLength() {
                        return -1;
                    }

                    @Override
                    public void writeTo(BufferedSink sink) throws IOException {
                        for (JsonNode l : lines) {
                            chunk(sink, (l + "\n").getBytes(StandardCharsets.UTF_8));
                        }
                        sink.flush();
                        if (then == Then.STALL_AFTER_FILL) {
                            // More than loopback socket buffers hold: once written, the client has read
                            // (and so parsed) everything before it.
                            chunk(sink, "{\"stream\":\"stdout\",\"data\":\"".getBytes(StandardCharsets.UTF_8));
                            byte[] a = "A".repeat(64 * 1024).getBytes(StandardCharsets.US_ASCII);
                            for (int i = 0; i < 256; i++) {
                                chunk(sink, a);
                            }
                            chunk(sink, "\"}\n".getBytes(StandardCharsets.UTF_8));
                            sink.flush();
                        }
                        streaming.countDown();
                        switch (then) {
                            case STALL:
                            case STALL_AFTER_FILL:
                                try {
                                    release.await(60, TimeUnit.SECONDS);
                                } catch (InterruptedException e) {
                                    Thread.currentThread().interrupt();
                                }
                                return;
                            case DROP:
                                return; // no final chunk: the connection is shut down after this
                            default:
                                chunk(sink, "{\"stream\":\"stdout\",\"data\":\"".getBytes(StandardCharsets.UTF_8));
                                byte[] a = "A".repeat(64 * 1024).getBytes(StandardCharsets.US_ASCII);
                                for (long sent = 0; sent < (1L << 30); sent += a.length) { // a gigabyte-long line
                                    chunk(sink, a);
                                    sink.flush();
                                    endlessBytes.addAndGet(a.length);
                                }
                        }
                    }
                });
        if (then == Then.DROP) {
            b.onResponseEnd(SocketEffect.ShutdownConnection.INSTANCE);
        }
        return b.build();
    }

    private static void chunk(BufferedSink sink, byte[] data) throws IOException {
        sink.writeUtf8(Integer.toHexString(data.length)).writeUtf8("\r\n").write(data).writeUtf8("\r\n");
    }

    List<String> routes() {
        return requests.stream().map(VercelStub::route).toList();
    }

    RecordedRequest first(String route) {
        return requests.stream().filter(r -> route(r).equals(route)).findFirst()
                .orElseThrow(() -> new AssertionError("no " + route + " request in " + routes()));
    }

    List<RecordedRequest> all(String route) {
        return requests.stream().filter(r -> route(r).equals(route)).toList();
    }
}
