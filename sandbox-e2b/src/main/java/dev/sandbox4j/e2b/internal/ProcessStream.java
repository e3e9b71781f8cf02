package dev.sandbox4j.e2b.internal;

import com.fasterxml.jackson.databind.JsonNode;
import dev.sandbox4j.spi.OutputSink;
import dev.sandbox4j.http.HttpTransport;
import java.io.IOException;
import java.util.Base64;
import okhttp3.MediaType;
import okhttp3.Response;

/**
 * Reads the server stream of envd's {@code process.Process/Start}: start, data (base64 stdout and
 * stderr pushed into the sink as they arrive), keepalive and end events, then the end-of-stream
 * message. Runs on an HTTP worker thread; the driver reads the state afterwards, also after a
 * failure (the pid, to kill the process).
 */
final class ProcessStream {
    private final OutputSink sink;
    private final int maxFrameBytes;
    private volatile Long pid;
    private volatile boolean started;
    private volatile boolean ended;
    private volatile int exitCode;
    private volatile String status;
    private volatile boolean capped;
    private volatile boolean endOfStream;
    private volatile String errorCode;
    private volatile String errorMessage;

    ProcessStream(OutputSink sink, int maxFrameBytes) {
        this.sink = sink;
        this.maxFrameBytes = maxFrameBytes;
    }

    /** Reads until the end-of-stream message, the end of the body, or the sink's hard cap. */
    Void read(Response response) throws IOException {
        MediaType type = response.body().contentType();
        if (type == null || !"connect+json".equals(type.subtype())) {
            throw new StreamRefusedException("expected application/connect+json, got " + type);
        }
        ConnectFrames.Reader reader = new ConnectFrames.Reader(response.body().source(), maxFrameBytes);
        ConnectFrames.Frame frame;
        while ((frame = reader.next()) != null) {
            JsonNode message = parse(frame.payload());
            if (frame.isEndStream()) {
                JsonNode error = message.path("error");
                if (error.isObject()) {
                    errorCode = text(error.path("code"), "unknown");
                    errorMessage = text(error.path("message"), "");
                }
                endOfStream = true;
                return null;
            }
            if (!event(message.path("event"))) {
                capped = true;
                return null; // closing the body stops the stream; the driver kills the process
            }
        }
        return null;
    }

    /** False when the sink reached its hard cap. */
    private boolean event(JsonNode event) throws StreamRefusedException {
        if (event.has("start")) {
            JsonNode p = event.path("start").path("pid");
            pid = p.canConvertToLong() ? p.asLong() : null;
            started = true;
        } else if (event.has("data")) {
            JsonNode data = event.path("data");
            JsonNode out = data.path("stdout");
            JsonNode err = data.path("stderr");
            if (out.isTextual()) {
                byte[] b = decode(out.asText());
                return sink.stdout(b, 0, b.length);
            }
            if (err.isTextual()) {
                byte[] b = decode(err.asText());
                return sink.stderr(b, 0, b.length);
            }
            // pty output only comes for PTY starts, which we never make
        } else if (event.has("end")) {
            JsonNode end = event.path("end");
            // protojson omits zero values: no exitCode means 0
            JsonNode code = end.path("exitCode");
            exitCode = code.canConvertToInt() ? code.asInt() : 0;
            status = text(end.path("status"), "");
            ended = true;
        }
        // keepalive and unknown events carry nothing for us
        return true;
    }

    private static JsonNode parse(byte[] payload) throws StreamRefusedException {
        try {
            JsonNode n = HttpTransport.JSON.readTree(payload);
            if (n == null || !n.isObject()) {
                throw new StreamRefusedException("envelope payload is not a JSON object");
            }
            return n;
        } catch (StreamRefusedException e) {
            throw e;
        } catch (IOException e) {
            throw new StreamRefusedException("envelope payload is not JSON");
        }
    }

    /** proto3 JSON bytes: standard base64, though the URL-safe alphabet and missing padding are allowed. */
    static byte[] decode(String base64) throws StreamRefusedException {
        try {
            if (base64.indexOf('-') >= 0 || base64.indexOf('_') >= 0) {
                return Base64.getUrlDecoder().decode(base64);
            }
            return Base64.getDecoder().decode(base64);
        } catch (IllegalArgumentException e) {
            throw new StreamRefusedException("output chunk is not base64");
        }
    }

    private static String text(JsonNode n, String otherwise) {
        return n.isValueNode() ? n.asText() : otherwise;
    }

    Long pid() {
        return pid;
    }

    boolean started() {
        return started;
    }

    boolean ended() {
        return ended;
    }

    int exitCode() {
        return exitCode;
    }

    String status() {
        return status;
    }

    boolean capped() {
        return capped;
    }

    boolean endOfStream() {
        return endOfStream;
    }

    String errorCode() {
        return errorCode;
    }

    String errorMessage() {
        return errorMessage;
    }
}
