package dev.sandbox4j.emulators.vercel;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * Plain HTTP requests built from vercel.md (no adapter classes), with the headers the official SDK
 * sends: bearer token, JSON content type on every request, {@code teamId} in every query.
 */
final class Wire {
    static final ObjectMapper JSON = new ObjectMapper();
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    private final String base;
    final String token;
    final String teamId;

    Wire(VercelEmulator emulator, String token, String teamId) {
        this.base = emulator.baseUrl() + "/api";
        this.token = token;
        this.teamId = teamId;
    }

    static final class Response {
        final int status;
        final String contentType;
        final String body;
        final HttpResponse<?> raw;

        Response(HttpResponse<?> raw, String body) {
            this.raw = raw;
            this.status = raw.statusCode();
            this.contentType = raw.headers().firstValue("content-type").orElse(null);
            this.body = body;
        }

        JsonNode json() throws IOException {
            return JSON.readTree(body);
        }
    }

    String url(String path, String extraQuery) {
        String q = teamId == null ? "" : "teamId=" + teamId;
        if (extraQuery != null) {
            q = q.isEmpty() ? extraQuery : q + "&" + extraQuery;
        }
        return base + path + (q.isEmpty() ? "" : "?" + q);
    }

    HttpRequest.Builder request(String path, String extraQuery) {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(url(path, extraQuery)))
                .timeout(Duration.ofSeconds(60))
                .header("content-type", "application/json")
                .header("user-agent", "vercel/sandbox/3.5.0 (Node.js/v20.20.2; linux/x64)");
        if (token != null) {
            b.header("authorization", "Bearer " + token);
        }
        return b;
    }

    Response send(HttpRequest request) throws IOException, InterruptedException {
        HttpResponse<String> r = http.send(request, HttpResponse.BodyHandlers.ofString());
        return new Response(r, r.body());
    }

    Response post(String path, String json) throws IOException, InterruptedException {
        return post(path, null, json);
    }

    Response post(String path, String query, String json) throws IOException, InterruptedException {
        return send(request(path, query).POST(HttpRequest.BodyPublishers.ofString(json)).build());
    }

    /** A body-less POST, as the SDK sends stop (content-length 0, JSON content type all the same). */
    Response postEmpty(String path) throws IOException, InterruptedException {
        return send(request(path, null).POST(HttpRequest.BodyPublishers.noBody()).build());
    }

    Response get(String path, String query) throws IOException, InterruptedException {
        return send(request(path, query).GET().build());
    }

    Response method(String method, String path, String query, String json) throws IOException, InterruptedException {
        return send(request(path, query).method(method, json == null
                ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(json)).build());
    }

    Response upload(String sessionId, String cwd, byte[] gzip) throws IOException, InterruptedException {
        HttpRequest.Builder b = request("/v2/sandboxes/sessions/" + sessionId + "/fs/write", null)
                .setHeader("content-type", "application/gzip");
        if (cwd != null) {
            b.header("x-cwd", cwd);
        }
        return send(b.POST(HttpRequest.BodyPublishers.ofByteArray(gzip)).build());
    }

    /** Opens a streaming response (NDJSON). */
    HttpResponse<InputStream> stream(HttpRequest request) throws IOException, InterruptedException {
        return http.send(request, HttpResponse.BodyHandlers.ofInputStream());
    }

    /** Reads every NDJSON line to the end of the stream. */
    static List<JsonNode> lines(InputStream in) throws IOException {
        List<JsonNode> out = new ArrayList<>();
        try (BufferedReader r = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8))) {
            String line;
            while ((line = r.readLine()) != null) {
                out.add(JSON.readTree(line));
            }
        }
        return out;
    }
}
