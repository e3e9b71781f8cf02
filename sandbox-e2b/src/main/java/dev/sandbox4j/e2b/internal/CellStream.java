package dev.sandbox4j.e2b.internal;

import com.fasterxml.jackson.databind.JsonNode;
import dev.sandbox4j.spi.OutputSink;
import dev.sandbox4j.http.HttpTransport;
import java.io.IOException;
import okhttp3.Response;
import okio.Buffer;
import okio.BufferedSource;

/**
 * Reads the code interpreter's {@code /execute} NDJSON stream: {@code stdout}/{@code stderr} text,
 * {@code result} (each format a typed result, in order: PNG, JPEG, PDF, SVG, HTML, Markdown, LaTeX, JSON,
 * JavaScript, text; its text also kept on stdout), {@code error} (the traceback on stderr and a non-zero
 * status), {@code keepalive}, and {@code end_of_execution}. Lines are read with a length cap: a longer line
 * (a gigabyte of output in one message) ends the reading like the hard cap, without buffering it.
 */
final class CellStream {
    private final OutputSink sink;
    private final long maxLineBytes;
    private volatile boolean failed;
    private volatile boolean finished;
    private volatile boolean capped;

    CellStream(OutputSink sink, long maxLineBytes) {
        this.sink = sink;
        this.maxLineBytes = maxLineBytes;
    }

    Void read(Response response) throws IOException {
        BufferedSource source = response.body().source();
        while (true) {
            long newline = source.indexOf((byte) '\n', 0, maxLineBytes + 1);
            boolean terminated = newline >= 0;
            if (!terminated) {
                if (source.request(maxLineBytes + 1)) {
                    // more output in one message than we buffer: stop here, as at the hard cap
                    capped = true;
                    return null;
                }
                if (source.exhausted()) {
                    return null;
                }
                newline = source.getBuffer().size(); // a last line without its newline
            }
            Buffer line = new Buffer();
            source.readFully(line, newline);
            if (terminated) {
                source.skip(1);
            }
            if (line.size() == 0) {
                continue;
            }
            if (!line(parse(line.readByteArray()))) {
                capped = true;
                return null; // closing the stream makes the server interrupt the kernel
            }
            if (finished) {
                return null;
            }
        }
    }

    /** False when the sink reached its hard cap. */
    private boolean line(JsonNode n) {
        String type = n.path("type").asText("");
        switch (type) {
            case "stdout":
                return sink.stdout(n.path("text").asText(""));
            case "stderr":
                return sink.stderr(n.path("text").asText(""));
            case "result": {
                typed(n);
                JsonNode text = n.path("text");
                if (text.isTextual()) {
                    String t = text.asText();
                    return sink.stdout(t.endsWith("\n") ? t : t + "\n");
                }
                return true;
            }
            case "error": {
                failed = true;
                String traceback = n.path("traceback").asText("");
                if (traceback.isEmpty()) {
                    traceback = n.path("name").asText("Error") + ": " + n.path("value").asText("");
                }
                return sink.stderr(traceback.endsWith("\n") ? traceback : traceback + "\n");
            }
            case "end_of_execution":
                finished = true;
                return true;
            default:
                // keepalive, number_of_executions and future types carry no output
                return true;
        }
    }

    /** The formats of one result, each a typed result in this order; the text also stays on stdout. */
    private static final String[][] FORMATS = {
            {"png", "image/png", "base64"}, {"jpeg", "image/jpeg", "base64"}, {"pdf", "application/pdf", "base64"},
            {"svg", "image/svg+xml", "text"}, {"html", "text/html", "text"}, {"markdown", "text/markdown", "text"},
            {"latex", "text/x-latex", "text"}, {"json", "application/json", "json"},
            {"javascript", "text/javascript", "text"}, {"text", "text/plain", "text"}};

    private void typed(JsonNode n) {
        boolean main = n.path("is_main_result").asBoolean(false);
        for (String[] f : FORMATS) {
            JsonNode v = n.get(f[0]);
            if (v == null || v.isNull()) {
                continue;
            }
            byte[] bytes;
            switch (f[2]) {
                case "base64":
                    if (!v.isTextual()) {
                        continue;
                    }
                    try {
                        bytes = java.util.Base64.getMimeDecoder().decode(v.asText());
                    } catch (IllegalArgumentException e) {
                        continue; // not base64: nothing typed to keep
                    }
                    break;
                case "json":
                    bytes = v.toString().getBytes(java.nio.charset.StandardCharsets.UTF_8);
                    break;
                default:
                    if (!v.isTextual()) {
                        continue;
                    }
                    bytes = v.asText().getBytes(java.nio.charset.StandardCharsets.UTF_8);
            }
            sink.result(f[1], bytes, bytes.length, main);
        }
    }

    private static JsonNode parse(byte[] line) throws StreamRefusedException {
        try {
            JsonNode n = HttpTransport.JSON.readTree(line);
            if (n == null || !n.isObject()) {
                throw new StreamRefusedException("code interpreter line is not a JSON object");
            }
            return n;
        } catch (StreamRefusedException e) {
            throw e;
        } catch (IOException e) {
            throw new StreamRefusedException("code interpreter line is not JSON");
        }
    }

    boolean failed() {
        return failed;
    }

    boolean finished() {
        return finished;
    }

    boolean capped() {
        return capped;
    }
}
