package dev.sandbox4j.emulators.e2b;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import okhttp3.MediaType;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;

/**
 * Plain HTTP against the emulator, built from the wire reference (e2b.md) and the recordings of the
 * official SDK: no adapter classes. Every test ends with no live sandbox.
 */
abstract class WireTestSupport {
    static final String KEY = "e2b_0123456789abcdef0123456789abcdef01234567";
    static final ObjectMapper JSON = new ObjectMapper();
    static final MediaType APPLICATION_JSON = MediaType.get("application/json");
    static final MediaType CONNECT_JSON = MediaType.get("application/connect+json");

    ProcessWorkspace.Factory workspaces;
    E2bEmulator emulator;
    OkHttpClient http;

    @BeforeEach
    void startEmulator() throws IOException {
        workspaces = new ProcessWorkspace.Factory();
        emulator = E2bEmulator.builder().apiKey(KEY).machines(workspaces)
                .interpreterKeepalive(Duration.ofMillis(200)).build();
        http = new OkHttpClient.Builder().readTimeout(30, TimeUnit.SECONDS).retryOnConnectionFailure(false).build();
    }

    @AfterEach
    void noLeaks() {
        try {
            assertEquals(0, emulator.ledger().live(), "sandboxes left alive: " + emulator.ledger().liveIds());
        } finally {
            emulator.close();
            workspaces.opened.forEach(ProcessWorkspace::close);
        }
    }

    String url(String path) {
        return emulator.baseUrl() + path;
    }

    Request.Builder api(String path) {
        return new Request.Builder().url(url(path)).header("X-API-KEY", KEY);
    }

    Request.Builder envd(String sandboxId, String token, String path) {
        Request.Builder b = new Request.Builder().url(url(path))
                .header("E2b-Sandbox-Id", sandboxId).header("E2b-Sandbox-Port", "49983");
        if (token != null) {
            b.header("X-Access-Token", token);
        }
        return b;
    }

    static RequestBody json(String body) {
        return RequestBody.create(body, APPLICATION_JSON);
    }

    /** POST /v2/sandboxes; returns the 201 body. */
    JsonNode create(String body) throws IOException {
        try (Response r = http.newCall(api("/v2/sandboxes").post(json(body)).build()).execute()) {
            String text = r.body().string();
            assertEquals(201, r.code(), text);
            return JSON.readTree(text);
        }
    }

    int kill(String id) throws IOException {
        try (Response r = http.newCall(api("/sandboxes/" + id).delete().build()).execute()) {
            return r.code();
        }
    }

    /** The start request as the SDK frames it: one 0x00 envelope. */
    static RequestBody startBody(String json) {
        byte[] payload = json.getBytes(StandardCharsets.UTF_8);
        byte[] body = new byte[5 + payload.length];
        body[0] = 0;
        body[1] = (byte) (payload.length >>> 24);
        body[2] = (byte) (payload.length >>> 16);
        body[3] = (byte) (payload.length >>> 8);
        body[4] = (byte) payload.length;
        System.arraycopy(payload, 0, body, 5, payload.length);
        return RequestBody.create(body, CONNECT_JSON);
    }

    Request.Builder start(String sandboxId, String token, String json) {
        return envd(sandboxId, token, "/process.Process/Start").post(startBody(json))
                .header("Connect-Protocol-Version", "1");
    }

    /** One envelope: flags and JSON. */
    static final class Frame {
        final int flags;
        final long length;
        final JsonNode json;

        Frame(int flags, long length, JsonNode json) {
            this.flags = flags;
            this.length = length;
            this.json = json;
        }

        @Override
        public String toString() {
            return flags + ":" + json;
        }
    }

    /**
     * Up to {@code len} bytes, fewer only at EOF. Unlike {@code InputStream.readNBytes} it never asks
     * for zero bytes, which on OkHttp's stream blocks until more data arrives.
     */
    static byte[] readUpTo(InputStream in, int len) throws IOException {
        byte[] b = new byte[len];
        int off = 0;
        while (off < len) {
            int n = in.read(b, off, len - off);
            if (n < 0) {
                return java.util.Arrays.copyOf(b, off);
            }
            off += n;
        }
        return b;
    }

    /** Reads the next envelope, or null at a clean EOF between envelopes. */
    static Frame readFrame(InputStream in) throws IOException {
        byte[] head = readUpTo(in, 5);
        if (head.length == 0) {
            return null;
        }
        if (head.length < 5) {
            throw new IOException("truncated envelope header");
        }
        long len = ((head[1] & 0xffL) << 24) | ((head[2] & 0xffL) << 16) | ((head[3] & 0xffL) << 8) | (head[4] & 0xffL);
        if (len > 1 << 20) {
            return new Frame(head[0] & 0xff, len, null); // hostile: not read
        }
        byte[] payload = readUpTo(in, (int) len);
        if (payload.length < len) {
            throw new IOException("truncated envelope");
        }
        return new Frame(head[0] & 0xff, len, JSON.readTree(payload));
    }

    /** All envelopes until the end-of-stream one (inclusive) or EOF. */
    static List<Frame> readAll(InputStream in) throws IOException {
        List<Frame> frames = new ArrayList<>();
        Frame f;
        while ((f = readFrame(in)) != null) {
            frames.add(f);
            if (f.flags == 2) {
                break;
            }
        }
        return frames;
    }

    static String stdout(List<Frame> frames, String stream) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (Frame f : frames) {
            JsonNode d = f.json == null ? null : f.json.path("event").path("data").get(stream);
            if (d != null) {
                out.writeBytes(java.util.Base64.getDecoder().decode(d.asText()));
            }
        }
        return out.toString(StandardCharsets.UTF_8);
    }

    static JsonNode end(List<Frame> frames) {
        for (Frame f : frames) {
            if (f.json != null && f.json.path("event").has("end")) {
                return f.json.path("event").get("end");
            }
        }
        return null;
    }
}
