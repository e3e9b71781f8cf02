package dev.sandbox4j.e2b.internal;

import com.fasterxml.jackson.databind.JsonNode;
import dev.sandbox4j.api.spi.OutputSink;
import dev.sandbox4j.http.HttpTransport;
import java.io.IOException;
import okhttp3.Response;
import okio.Buffer;
import okio.BufferedSource;

/**
 * Reads the code interpreter's {@code /execute} NDJSON stream: {@code stdout}/{@code stderr} text,
 * {@code result} (its text kept on stdout), {@code error} (the traceback on stderr and a non-zero
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
