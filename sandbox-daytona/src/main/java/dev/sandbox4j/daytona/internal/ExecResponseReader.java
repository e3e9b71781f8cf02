package dev.sandbox4j.daytona.internal;

import com.fasterxml.jackson.databind.JsonNode;
import dev.sandbox4j.http.StreamingJson;
import java.io.IOException;
import java.io.InputStream;

/**
 * Reads Daytona's exec answer, {@code {"exitCode":0,"result":"...","artifacts":{...}}}, in bounded
 * memory through {@link StreamingJson}: the {@code result} string is decoded as it arrives and pushed
 * to a sink in chunks, so a gigabyte of output never sits in memory. Other members are skipped
 * without being kept. What the daemon writes (Go's encoding/json) reads as it did through the former
 * char-level reader; only input Go never writes differs: a lone surrogate escape becomes U+FFFD (it
 * was a lone char, '?' once encoded), an exit code with a leading zero and a field name over 256
 * bytes are refused (they were read as 1 and truncated).
 */
final class ExecResponseReader {
    /** Where the decoded {@code result} text goes; false means the hard cap was reached: stop reading. */
    @FunctionalInterface
    interface TextSink {
        boolean accept(CharSequence text);
    }

    /** What was read. {@code exitCode} is null when absent or not reached before the cap. */
    static final class Parsed {
        final Integer exitCode;
        final boolean capped;

        Parsed(Integer exitCode, boolean capped) {
            this.exitCode = exitCode;
            this.capped = capped;
        }
    }

    /** The longest number kept (an exit code) or literal skipped. */
    private static final int MAX_NUMBER = 32;
    private static final int MAX_DEPTH = 64;

    private ExecResponseReader() {
    }

    /**
     * Reads one exec answer, pushing {@code result} into {@code sink}. Stops at once (without reading
     * the rest) when the sink returns false.
     *
     * @throws IOException when the body is not the expected JSON object or ends early
     */
    static Parsed read(InputStream body, TextSink sink) throws IOException {
        StreamingJson json = StreamingJson.builder(body).maxFieldBytes(MAX_NUMBER).maxDepth(MAX_DEPTH).build();
        try {
            if (!json.nextObject()) {
                throw malformed("expected '{' but found end of body", null);
            }
            return object(json, sink);
        } catch (StreamingJson.FormatException | StreamingJson.TruncatedException e) {
            throw malformed(e.getMessage(), e);
        }
    }

    private static Parsed object(StreamingJson json, TextSink sink) throws IOException {
        Integer exitCode = null;
        Integer code = null;
        boolean resultSeen = false;
        for (String key = json.nextField(); key != null; key = json.nextField()) {
            int v = json.peekValue();
            if (key.equals("result") && v == '"' && !resultSeen) {
                resultSeen = true;
                if (!json.streamText(sink::accept)) {
                    return new Parsed(exitCode != null ? exitCode : code, true);
                }
            } else if (key.equals("exitCode") && isNumberStart(v)) {
                exitCode = integer(json.capture());
            } else if (key.equals("code") && isNumberStart(v)) {
                code = integer(json.capture()); // what daemons older than exitCode sent (the SDK falls back to it too)
            } else {
                json.skip();
            }
        }
        return new Parsed(exitCode != null ? exitCode : code, false);
    }

    private static boolean isNumberStart(int c) {
        return c == '-' || (c >= '0' && c <= '9');
    }

    private static Integer integer(JsonNode n) throws IOException {
        if (!n.isInt()) {
            throw malformed("exit code '" + n + "' is not an integer", null);
        }
        return n.intValue();
    }

    private static IOException malformed(String what, Throwable cause) {
        return new IOException("malformed exec response: " + what, cause);
    }
}
