package dev.sandbox4j.daytona;

import static org.junit.jupiter.api.Assertions.assertNotNull;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.sandbox4j.spi.CreateRequest;
import dev.sandbox4j.http.HttpTransport;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import mockwebserver3.Dispatcher;
import mockwebserver3.MockResponse;
import mockwebserver3.MockWebServer;
import mockwebserver3.RecordedRequest;
import okhttp3.Response;
import okhttp3.WebSocket;
import okhttp3.WebSocketListener;
import okio.ByteString;

/** A MockWebServer playing both the Daytona API ({@code /api}) and its toolbox proxy ({@code /toolbox}). */
final class DaytonaFake implements AutoCloseable {
    static final String KEY = "dtn_test_7c1e0f2a9b3d4e5f";
    final MockWebServer server = new MockWebServer();
    private final BlockingQueue<Function<RecordedRequest, MockResponse>> script = new LinkedBlockingQueue<>();
    /** The run id of the last create request seen. */
    volatile String runId;

    DaytonaFake() {
        server.setDispatcher(new Dispatcher() {
            @Override
            public MockResponse dispatch(RecordedRequest r) {
                if (isCreate(r)) {
                    runId = body(r).path("labels").path(CreateRequest.RUN_ID_LABEL).asText();
                }
                Function<RecordedRequest, MockResponse> next = script.poll();
                return next != null ? next.apply(r)
                        : new MockResponse.Builder().code(599).body("no scripted answer for " + r.getRequestLine()).build();
            }
        });
        try {
            server.start();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    String apiUrl() {
        return server.url("/api").toString();
    }

    String toolboxUrl() {
        return server.url("/toolbox").toString();
    }

    /** A runner pointed at this fake, with fast polls and retries. */
    DaytonaSandboxRunner.Builder runner() {
        return DaytonaSandboxRunner.builder().apiKey(KEY).apiUrl(apiUrl())
                .statusPollInterval(Duration.ofMillis(1))
                .retryBaseDelay(Duration.ofMillis(1))
                .teardownTimeout(Duration.ofSeconds(5))
                // one lookup round after an ambiguous create, as the scripted answers expect
                .lostCreateWindow(Duration.ofMillis(1));
    }

    /** A Sandbox DTO as the API returns it. */
    ObjectNode sandbox(String id, String state) {
        ObjectNode n = HttpTransport.JSON.createObjectNode();
        n.put("id", id).put("organizationId", "org-fake").put("name", id).put("user", "daytona");
        n.putObject("env");
        n.putObject("labels");
        n.put("public", false).put("networkBlockAll", false).put("target", "us")
                .put("cpu", 1).put("gpu", 0).put("memory", 1).put("disk", 3)
                .put("state", state).put("desiredState", "started")
                .put("toolboxProxyUrl", toolboxUrl());
        return n;
    }

    /** A JSON answer; a 200 to a create echoes the egress fields sent, as Daytona stores them as given. */
    void json(int code, Object body) {
        String text = body instanceof String s ? s : body.toString();
        script.add(r -> jsonResponse(code, code == 200 && isCreate(r) ? echoEgress(r, text) : text));
    }

    private static boolean isCreate(RecordedRequest r) {
        return r.getMethod().equals("POST") && r.getUrl().encodedPath().equals("/api/sandbox");
    }

    private static String echoEgress(RecordedRequest r, String answer) {
        try {
            ObjectNode n = (ObjectNode) HttpTransport.JSON.readTree(answer);
            JsonNode sent = body(r);
            for (String f : new String[] {"networkBlockAll", "networkAllowList", "domainAllowList"}) {
                if (sent.has(f)) {
                    n.set(f, sent.get(f));
                }
            }
            return n.toString();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static MockResponse jsonResponse(int code, Object body) {
        return new MockResponse.Builder().code(code).setHeader("Content-Type", "application/json")
                .body(body instanceof String s ? s : body.toString()).build();
    }

    /** Drops every answer still scripted (those a retried call did not use). */
    void clearScript() {
        script.clear();
    }

    void enqueue(MockResponse response) {
        script.add(r -> response);
    }

    /** An answer computed from the request (e.g. one that echoes the run id). */
    void answer(Function<RecordedRequest, MockResponse> f) {
        script.add(f);
    }

    /** A list answer holding one sandbox labelled with the last create's run id. */
    void listWithRunId(String id) {
        answer(r -> {
            ObjectNode sb = sandbox(id, "error");
            ((ObjectNode) sb.path("labels")).put(CreateRequest.RUN_ID_LABEL, runId);
            ObjectNode page = HttpTransport.JSON.createObjectNode();
            page.putArray("items").add(sb);
            page.putNull("nextCursor");
            return jsonResponse(200, page);
        });
    }

    /** The command id the scripted session execs answer with. */
    static final String CMD_ID = "cmd-7f3a";
    private static final java.util.regex.Pattern NONCE = java.util.regex.Pattern.compile("'(\u001fsandbox4j-end-[0-9a-f]{32}:)'");
    /** The end frames' nonce of the last session exec seen. */
    volatile String nonce;

    /**
     * The answers of one exec, a session command, in the order the driver asks for them: the
     * program's upload, the session (201), the exec ({@code 202 {"cmdId"}}), the log WebSocket (these
     * frames, then the command's end frame on stdout and on stderr, with {@code exitCode}; the socket
     * left open, as the daemon keeps it a second longer), the session's delete (204).
     */
    void sessionRun(int exitCode, byte[]... frames) {
        sessionStart();
        logEnded(exitCode, frames);
        sessionDeleted();
    }

    /** The upload, the session and the exec's 202 (the nonce noted): the first three answers of {@link #sessionRun}. */
    void sessionStart() {
        json(200, "{\"files\":[{\"path\":\"/tmp/sandbox4j/exec.py\",\"bytes\":1}]}");
        enqueue(new MockResponse.Builder().code(201).build());
        answer(r -> {
            java.util.regex.Matcher m = NONCE.matcher(body(r).path("command").asText());
            nonce = m.find() ? m.group(1) : null;
            return jsonResponse(202, "{\"cmdId\":\"" + CMD_ID + "\",\"output\":null,\"stdout\":null,\"stderr\":null,"
                    + "\"exitCode\":null}");
        });
    }

    /** The log WebSocket: {@code frames}, the end frames with {@code exitCode}, then nothing (left open). */
    void logEnded(int exitCode, byte[]... frames) {
        enqueue(new MockResponse.Builder().webSocketUpgrade(new WebSocketListener() {
            @Override
            public void onOpen(WebSocket ws, Response response) {
                for (byte[] f : frames) {
                    ws.send(ByteString.of(f));
                }
                String end = nonce + exitCode + "\n";
                ws.send(ByteString.of(stdout(end)));
                ws.send(ByteString.of(stderr(end)));
            }
        }).build());
    }

    /** The log WebSocket: {@code frames} as binary messages, then the daemon's 1000 close, no end frame. */
    void log(byte[]... frames) {
        enqueue(new MockResponse.Builder().webSocketUpgrade(new WebSocketListener() {
            @Override
            public void onOpen(WebSocket ws, Response response) {
                for (byte[] f : frames) {
                    ws.send(ByteString.of(f));
                }
                ws.close(1000, null);
            }
        }).build());
    }

    /** The log WebSocket of a command that never ends: {@code frames}, then nothing, the socket left open. */
    void logNeverEnding(byte[]... frames) {
        enqueue(new MockResponse.Builder().webSocketUpgrade(new WebSocketListener() {
            @Override
            public void onOpen(WebSocket ws, Response response) {
                for (byte[] f : frames) {
                    ws.send(ByteString.of(f));
                }
            }
        }).build());
    }

    /** {@code GET process/session/{s}/command/{c}}: the command with its exit code. */
    void command(int exitCode) {
        json(200, "{\"id\":\"" + CMD_ID + "\",\"command\":\"python3 -u /tmp/sandbox4j/exec.py < /dev/null\","
                + "\"exitCode\":" + exitCode + "}");
    }

    /** {@code DELETE process/session/{s}}: 204. */
    void sessionDeleted() {
        enqueue(new MockResponse.Builder().code(204).build());
    }

    /** Log bytes as the daemon's labeler writes a stdout line: {@code 01 01 01} then the line. */
    static byte[] stdout(String line) {
        return labelled((byte) 1, line);
    }

    /** Log bytes as the daemon's labeler writes a stderr line: {@code 02 02 02} then the line. */
    static byte[] stderr(String line) {
        return labelled((byte) 2, line);
    }

    private static byte[] labelled(byte mark, String line) {
        byte[] text = line.getBytes(StandardCharsets.UTF_8);
        byte[] out = new byte[text.length + 3];
        out[0] = mark;
        out[1] = mark;
        out[2] = mark;
        System.arraycopy(text, 0, out, 3, text.length);
        return out;
    }

    RecordedRequest take() {
        try {
            RecordedRequest r = server.takeRequest(10, TimeUnit.SECONDS);
            assertNotNull(r, "expected another request");
            return r;
        } catch (InterruptedException e) {
            throw new AssertionError(e);
        }
    }

    /** The next request, or null when none arrives soon. */
    RecordedRequest poll() {
        try {
            return server.takeRequest(200, TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            throw new AssertionError(e);
        }
    }

    static JsonNode body(RecordedRequest r) {
        try {
            return HttpTransport.JSON.readTree(r.getBody().utf8());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** A recording from {@code /work/shared/providers/recordings}, with its port placeholders pointing here. */
    JsonNode recording(String name) {
        try (InputStream in = DaytonaFake.class.getResourceAsStream("/recordings/" + name + ".json")) {
            String text = new String(in.readAllBytes(), StandardCharsets.UTF_8)
                    .replace("<TOOLBOX_PORT>", String.valueOf(server.getPort()))
                    .replace("<API_PORT>", String.valueOf(server.getPort()));
            return HttpTransport.JSON.readTree(text);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Override
    public void close() {
        server.close();
    }
}
