package dev.sandbox4j.e2b;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Deque;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import mockwebserver3.Dispatcher;
import mockwebserver3.MockResponse;
import mockwebserver3.MockResponseBody;
import mockwebserver3.RecordedRequest;
import mockwebserver3.SocketEffect;
import okio.Buffer;
import okio.BufferedSink;

/**
 * A small E2B imitation for wire tests: the API, envd and the code interpreter on one server (as
 * E2B_SANDBOX_URL allows). It records every request, keeps a ledger of live sandboxes (for the leak
 * check), and has knobs for failures. Responses follow the reference and the recordings; it shares
 * no code with the adapter.
 */
final class FakeE2b extends Dispatcher {
    static final ObjectMapper JSON = new ObjectMapper();
    static final String TOKEN = "envd_tok_5e3a9c1f27b84d06a1";

    final List<RecordedRequest> requests = new CopyOnWriteArrayList<>();
    final Map<String, ObjectNode> live = new LinkedHashMap<>();
    final AtomicInteger ids = new AtomicInteger();
    /**
     * Consumed one per create: a status (429, 500, ... with nothing created), a MockResponse, or, with
     * the sandbox created: "lost" (answer dropped), "created-500", "created-slow" (answer after 10 s).
     */
    final Deque<Object> createFaults = new ConcurrentLinkedDeque<>();
    /** Consumed one per kill: a status, or -1 to drop the connection. */
    final Deque<Integer> deleteFaults = new ConcurrentLinkedDeque<>();
    final Deque<MockResponse> networkResponses = new ConcurrentLinkedDeque<>();
    /** Answers to GET /sandboxes/{id}; by default the egress of the last accepted network update. */
    final Deque<MockResponse> detailResponses = new ConcurrentLinkedDeque<>();
    private volatile JsonNode lastNetworkUpdate;
    final Deque<Function<RecordedRequest, MockResponse>> starts = new ConcurrentLinkedDeque<>();
    final Deque<Function<RecordedRequest, MockResponse>> executes = new ConcurrentLinkedDeque<>();
    /** Extra sandboxes the list endpoint returns whatever the filter (a server ignoring it). */
    final List<ObjectNode> strangers = new CopyOnWriteArrayList<>();
    final CountDownLatch streamStarted = new CountDownLatch(1);
    final CountDownLatch release = new CountDownLatch(1);
    volatile String domain;
    volatile String retryAfter = "0";

    @Override
    public MockResponse dispatch(RecordedRequest r) {
        requests.add(r);
        String path = r.getUrl().encodedPath();
        String method = r.getMethod();
        if (method.equals("POST") && path.equals("/v2/sandboxes")) {
            return create(r);
        }
        if (method.equals("GET") && path.equals("/v2/sandboxes")) {
            return list(r);
        }
        if (method.equals("DELETE") && path.startsWith("/sandboxes/")) {
            return delete(path.substring("/sandboxes/".length()));
        }
        if (method.equals("PUT") && path.endsWith("/network")) {
            MockResponse m = networkResponses.poll();
            if (m == null) {
                lastNetworkUpdate = read(r);
            }
            return m != null ? m : new MockResponse.Builder().code(204).build();
        }
        if (method.equals("GET") && path.startsWith("/sandboxes/")) {
            MockResponse m = detailResponses.poll();
            return m != null ? m : detail(path.substring("/sandboxes/".length()));
        }
        if (method.equals("POST") && path.equals("/process.Process/Start")) {
            Function<RecordedRequest, MockResponse> f = starts.poll();
            return f != null ? f.apply(r) : connect(defaultRun());
        }
        if (method.equals("POST") && path.equals("/process.Process/SendSignal")) {
            return json(200, "{}");
        }
        if (method.equals("POST") && path.equals("/files")) {
            return json(200, "[{\"path\":\"/home/user/x\",\"name\":\"x\",\"type\":\"file\"},"
                    + "{\"path\":\"/home/user/y\",\"name\":\"y\",\"type\":\"file\"},"
                    + "{\"path\":\"/home/user/z\",\"name\":\"z\",\"type\":\"file\"}]");
        }
        if (method.equals("POST") && path.equals("/execute")) {
            Function<RecordedRequest, MockResponse> f = executes.poll();
            return f != null ? f.apply(r) : ndjson(List.of("{\"type\": \"end_of_execution\"}"));
        }
        return json(404, "{\"code\":404,\"message\":\"no route " + method + " " + path + "\"}");
    }

    /** The sandbox as E2B's GET shows it, with the egress of the last network update echoed back. */
    private MockResponse detail(String id) {
        ObjectNode d = com.fasterxml.jackson.databind.node.JsonNodeFactory.instance.objectNode();
        d.put("sandboxID", id).put("templateID", "base").put("state", "running");
        JsonNode u = lastNetworkUpdate;
        if (u != null) {
            ObjectNode n = d.putObject("network");
            if (u.has("allowOut")) {
                n.set("allowOut", u.get("allowOut"));
            }
            if (u.has("denyOut")) {
                n.set("denyOut", u.get("denyOut"));
            }
            d.put("allowInternetAccess", u.path("allow_internet_access").asBoolean(true));
        }
        return json(200, d.toString());
    }

    private MockResponse create(RecordedRequest r) {
        Object fault = createFaults.poll();
        if (fault instanceof Integer status) {
            MockResponse.Builder b = new MockResponse.Builder().code(status)
                    .setHeader("Content-Type", "application/json")
                    .body("{\"code\":" + status + ",\"message\":\"simulated " + status + "\"}");
            if (status == 429) {
                b.setHeader("Retry-After", retryAfter);
            }
            return b.build();
        }
        if (fault instanceof MockResponse m) {
            return m;
        }
        JsonNode body = read(r);
        String id = "isbx" + ids.incrementAndGet() + "fake0000000";
        ObjectNode sandbox = JSON.createObjectNode();
        sandbox.put("sandboxID", id);
        sandbox.put("templateID", body.path("templateID").asText());
        sandbox.set("metadata", body.path("metadata").deepCopy());
        synchronized (live) {
            live.put(id, sandbox);
        }
        if ("lost".equals(fault)) {
            return new MockResponse.Builder().onResponseStart(SocketEffect.ShutdownConnection.INSTANCE).build();
        }
        if ("created-500".equals(fault)) {
            return json(500, "{\"code\":500,\"message\":\"simulated failure after placement\"}");
        }
        if ("created-slow".equals(fault)) {
            return new MockResponse.Builder().headersDelay(10, TimeUnit.SECONDS).code(201).body("{}").build();
        }
        ObjectNode out = JSON.createObjectNode();
        out.put("alias", body.path("templateID").asText());
        out.put("clientID", "6532622b");
        out.put("envdVersion", "0.6.13");
        out.put("sandboxID", id);
        out.put("templateID", "rki5dems9wqfm4r03t7g");
        out.put("envdAccessToken", TOKEN);
        out.putNull("trafficAccessToken");
        if (domain == null) {
            out.putNull("domain");
        } else {
            out.put("domain", domain);
        }
        return json(201, out.toString());
    }

    private MockResponse list(RecordedRequest r) {
        String query = r.getUrl().queryParameter("metadata");
        ArrayNode out = JSON.createArrayNode();
        synchronized (live) {
            for (ObjectNode s : live.values()) {
                String[] kv = query == null ? new String[0] : query.split("=", 2);
                if (kv.length == 2 && kv[1].equals(s.path("metadata").path(kv[0]).asText(null))) {
                    out.add(s);
                }
            }
        }
        strangers.forEach(out::add);
        return json(200, out.toString());
    }

    private MockResponse delete(String id) {
        Integer fault = deleteFaults.poll();
        if (fault != null && fault < 0) {
            return new MockResponse.Builder().onResponseStart(SocketEffect.ShutdownConnection.INSTANCE).build();
        }
        if (fault != null) {
            return json(fault, "{\"code\":" + fault + ",\"message\":\"simulated kill failure\"}");
        }
        synchronized (live) {
            if (live.remove(id) == null) {
                return json(404, "{\"code\":404,\"message\":\"Sandbox \\\"" + id + "\\\" doesn't exist or you don't have access to it\"}");
            }
        }
        return new MockResponse.Builder().code(204).build();
    }

    int leaks() {
        synchronized (live) {
            return live.size();
        }
    }

    List<RecordedRequest> requests(String method, String path) {
        List<RecordedRequest> out = new ArrayList<>();
        for (RecordedRequest r : requests) {
            if (r.getMethod().equals(method) && r.getUrl().encodedPath().equals(path)) {
                out.add(r);
            }
        }
        return out;
    }

    List<String> requestLines() {
        List<String> out = new ArrayList<>();
        for (RecordedRequest r : requests) {
            out.add(r.getMethod() + " " + r.getUrl().encodedPath());
        }
        return out;
    }

    // ------------------------------------------------------------ helpers to build answers

    static JsonNode read(RecordedRequest r) {
        try {
            return JSON.readTree(r.getBody().utf8());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The JSON inside the single Connect envelope of a Start request. */
    static JsonNode startMessage(RecordedRequest r) {
        byte[] b = r.getBody().toByteArray();
        int len = ((b[1] & 0xff) << 24) | ((b[2] & 0xff) << 16) | ((b[3] & 0xff) << 8) | (b[4] & 0xff);
        if (b[0] != 0 || len != b.length - 5) {
            throw new AssertionError("not one uncompressed envelope: " + b.length + " bytes, length " + len);
        }
        try {
            return JSON.readTree(new String(b, 5, len, StandardCharsets.UTF_8));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static MockResponse json(int status, String body) {
        return new MockResponse.Builder().code(status).setHeader("Content-Type", "application/json").body(body).build();
    }

    static byte[] frame(int flags, String json) {
        byte[] p = json.getBytes(StandardCharsets.UTF_8);
        byte[] out = new byte[5 + p.length];
        out[0] = (byte) flags;
        out[1] = (byte) (p.length >>> 24);
        out[2] = (byte) (p.length >>> 16);
        out[3] = (byte) (p.length >>> 8);
        out[4] = (byte) p.length;
        System.arraycopy(p, 0, out, 5, p.length);
        return out;
    }

    static String start(int pid) {
        return "{\"event\":{\"start\":{\"pid\":" + pid + "}}}";
    }

    static String stdout(String text) {
        return "{\"event\":{\"data\":{\"stdout\":\"" + b64(text) + "\"}}}";
    }

    static String stderr(String text) {
        return "{\"event\":{\"data\":{\"stderr\":\"" + b64(text) + "\"}}}";
    }

    static String end(Integer exitCode, String status) {
        return "{\"event\":{\"end\":{" + (exitCode == null ? "" : "\"exitCode\":" + exitCode + ",")
                + "\"exited\":true,\"status\":\"" + status + "\"}}}";
    }

    static String keepalive() {
        return "{\"event\":{\"keepalive\":{}}}";
    }

    static String b64(String text) {
        return Base64.getEncoder().encodeToString(text.getBytes(StandardCharsets.UTF_8));
    }

    static List<byte[]> defaultRun() {
        return List.of(frame(0, start(412)), frame(0, stdout("ok\n")), frame(0, end(null, "exit status 0")),
                frame(2, "{}"));
    }

    /** A complete Connect stream response. */
    static MockResponse connect(List<byte[]> frames) {
        Buffer b = new Buffer();
        frames.forEach(b::write);
        return new MockResponse.Builder().code(200).setHeader("Content-Type", "application/connect+json").body(b).build();
    }

    /** A Connect stream that sends {@code frames}, then stalls until released (or 30 s pass). */
    MockResponse stalling(List<byte[]> frames) {
        return stalling("application/connect+json", frames);
    }

    MockResponse stalling(String contentType, List<byte[]> frames) {
        return new MockResponse.Builder().code(200).setHeader("Content-Type", contentType)
                .body(new MockResponseBody() {
                    @Override
                    public long getContentLength() {
                        return -1;
                    }

                    @Override
                    public void writeTo(BufferedSink sink) throws IOException {
                        for (byte[] f : frames) {
                            sink.write(f);
                        }
                        sink.flush();
                        streamStarted.countDown();
                        try {
                            release.await(30, TimeUnit.SECONDS);
                        } catch (InterruptedException e) {
                            Thread.currentThread().interrupt();
                        }
                    }
                }).build();
    }

    /** A stream that writes {@code head}, then {@code frame} until the client stops reading (at most {@code max} times). */
    static MockResponse endless(String contentType, byte[] head, byte[] frame, int max) {
        return new MockResponse.Builder().code(200).setHeader("Content-Type", contentType)
                .body(new MockResponseBody() {
                    @Override
                    public long getContentLength() {
                        return -1;
                    }

                    @Override
                    public void writeTo(BufferedSink sink) throws IOException {
                        sink.write(head);
                        for (int i = 0; i < max; i++) {
                            sink.write(frame);
                            sink.flush();
                        }
                    }
                }).build();
    }

    /** Writes {@code head}, then ends the response abruptly (a dropped stream). */
    static MockResponse dropping(String contentType, byte[] head) {
        Buffer b = new Buffer().write(head);
        return new MockResponse.Builder().code(200).setHeader("Content-Type", contentType).body(b)
                .onResponseEnd(SocketEffect.ShutdownConnection.INSTANCE)
                .setHeader("Content-Length", head.length + 100).build();
    }

    static MockResponse ndjson(List<String> lines) {
        StringBuilder sb = new StringBuilder();
        lines.forEach(l -> sb.append(l).append('\n'));
        return new MockResponse.Builder().code(200).body(sb.toString()).build();
    }
}
