package dev.sandbox4j.emulators.daytona;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;

/** Plain HTTP requests built from the Daytona reference, with the headers the official SDK sends. */
final class Wire {
    static final ObjectMapper JSON = new ObjectMapper();
    final HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(10)).build();
    final DaytonaEmulator emulator;
    final String key;

    Wire(DaytonaEmulator emulator) {
        this.emulator = emulator;
        this.key = emulator.apiKey();
    }

    /** A response: status, headers and the body as text and, when it parses, as JSON. */
    static final class Answer {
        final int status;
        final HttpResponse<String> raw;
        final JsonNode json;

        Answer(HttpResponse<String> raw) {
            this.status = raw.statusCode();
            this.raw = raw;
            JsonNode j;
            try {
                j = raw.body().isEmpty() ? null : JSON.readTree(raw.body());
            } catch (IOException e) {
                j = null;
            }
            this.json = j;
        }

        String text() {
            return raw.body();
        }

        @Override
        public String toString() {
            return status + " " + raw.body();
        }
    }

    HttpRequest.Builder api(String path) {
        return sdkHeaders(HttpRequest.newBuilder(URI.create(emulator.apiUrl() + path)));
    }

    HttpRequest.Builder toolbox(String id, String path) {
        return sdkHeaders(HttpRequest.newBuilder(URI.create(emulator.toolboxProxyUrl() + "/" + id + path)));
    }

    HttpRequest.Builder sdkHeaders(HttpRequest.Builder b) {
        return b.header("Authorization", "Bearer " + key)
                .header("Accept", "application/json")
                .header("X-Daytona-Source", "sdk-typescript-legacy")
                .header("X-Daytona-SDK-Version", "0.218.0")
                .header("User-Agent", "sdk-typescript-legacy/0.218.0")
                .timeout(Duration.ofSeconds(60));
    }

    Answer send(HttpRequest request) throws IOException, InterruptedException {
        return new Answer(client.send(request, HttpResponse.BodyHandlers.ofString()));
    }

    Answer post(HttpRequest.Builder b, String json) throws IOException, InterruptedException {
        return send(b.header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(json)).build());
    }

    Answer create(String json) throws IOException, InterruptedException {
        return post(api("/sandbox"), json);
    }

    /** Creates a sandbox and returns its id (fails the test on anything but 200). */
    String createOk(String json) throws IOException, InterruptedException {
        Answer a = create(json);
        if (a.status != 200) {
            throw new AssertionError("create answered " + a);
        }
        return a.json.get("id").asText();
    }

    Answer get(String path) throws IOException, InterruptedException {
        return send(api(path).GET().build());
    }

    /** A GET of a toolbox (or API) request builder. */
    Answer get0(HttpRequest.Builder b) throws IOException, InterruptedException {
        return send(b.GET().build());
    }

    Answer delete(String id) throws IOException, InterruptedException {
        return send(api("/sandbox/" + id).DELETE().build());
    }

    Answer codeRun(String id, String json) throws IOException, InterruptedException {
        return post(toolbox(id, "/process/code-run"), json);
    }

    Answer execute(String id, String json) throws IOException, InterruptedException {
        return post(toolbox(id, "/process/execute"), json);
    }

    /** {@code files/bulk-upload} with the part layout the SDK sends (path part first, then the file). */
    Answer upload(String id, String path, byte[] content) throws IOException, InterruptedException {
        String boundary = "--------------------------e77e36d5697a6f7dc2dea6cc";
        byte[] body = multipart(boundary, path, content);
        return send(toolbox(id, "/files/bulk-upload")
                .header("Content-Type", "multipart/form-data; boundary=" + boundary)
                .header("Accept", "*/*")
                .POST(HttpRequest.BodyPublishers.ofByteArray(body)).build());
    }

    static byte[] multipart(String boundary, String path, byte[] content) {
        String name = path.substring(path.lastIndexOf('/') + 1);
        String head = "--" + boundary + "\r\n"
                + "Content-Disposition: form-data; name=\"files[0].path\"\r\n\r\n"
                + path + "\r\n"
                + "--" + boundary + "\r\n"
                + "Content-Disposition: form-data; name=\"files[0].file\"; filename=\"" + name + "\"\r\n"
                + "Content-Type: application/octet-stream\r\n\r\n";
        String tail = "\r\n--" + boundary + "--\r\n";
        byte[] h = head.getBytes(StandardCharsets.UTF_8);
        byte[] t = tail.getBytes(StandardCharsets.UTF_8);
        byte[] all = new byte[h.length + content.length + t.length];
        System.arraycopy(h, 0, all, 0, h.length);
        System.arraycopy(content, 0, all, h.length, content.length);
        System.arraycopy(t, 0, all, h.length + content.length, t.length);
        return all;
    }

    static String encode(String s) {
        return URLEncoder.encode(s, StandardCharsets.UTF_8);
    }

    static String quoteJson(String s) {
        try {
            return JSON.writeValueAsString(s);
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }
}
