package dev.sandbox4j.vercel.internal;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.MissingNode;
import dev.sandbox4j.http.StreamingJson;
import java.io.ByteArrayOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Reads Vercel's command NDJSON stream ({@code {"command":...}}, {@code {"stream":"stdout","data":"..."}},
 * ...) in bounded memory, whatever the sandbox prints, through {@link StreamingJson}.
 *
 * <p>A line is not read whole: the top-level object is scanned field by field. A {@code data} string
 * is decoded as it arrives and handed to the {@link Output} in chunks, so a gigabyte-long line costs
 * a few kilobytes and stops as soon as the output says so (the hard cap). Every other value (the
 * command record, an error) is kept up to {@code maxFieldBytes} and parsed as a tree; a larger
 * one is a {@link StreamFormatException}. Not thread-safe.
 */
public final class CommandStreamReader {
    /** Where decoded {@code data} bytes (UTF-8, as the server sent them) go. */
    @FunctionalInterface
    public interface Output {
        /** @return false to stop reading at once (the hard cap was reached) */
        boolean write(String stream, byte[] b, int off, int len);
    }

    /** The server sent something that is not the expected NDJSON. */
    public static final class StreamFormatException extends IOException {
        StreamFormatException(String message) {
            super(message);
        }

        StreamFormatException(StreamingJson.FormatException cause) {
            super(cause.getMessage(), cause);
        }
    }

    /** One object of the stream; its {@code data} string, if any, went to the output. */
    public static final class Line {
        private final Map<String, JsonNode> fields = new LinkedHashMap<>();
        private String stream;
        private boolean stopped;
        private long dataBytes;

        public JsonNode get(String key) {
            JsonNode n = fields.get(key);
            return n == null ? MissingNode.getInstance() : n;
        }

        /** The {@code stream} field: stdout, stderr, error, or null. */
        public String stream() {
            return stream;
        }

        /** True when the output asked to stop in the middle of this line. */
        public boolean stopped() {
            return stopped;
        }

        /** Decoded bytes of this line's {@code data} string. */
        public long dataBytes() {
            return dataBytes;
        }
    }

    /** Jackson's own nesting limit, which bounded the kept values before they were scanned here. */
    private static final int MAX_DEPTH = 1000;

    private final StreamingJson json;
    private final Output output;
    private final int maxFieldBytes;

    public CommandStreamReader(InputStream in, Output output, int maxFieldBytes) {
        this.json = StreamingJson.builder(in).maxFieldBytes(maxFieldBytes).maxDepth(MAX_DEPTH).build();
        this.output = output;
        this.maxFieldBytes = maxFieldBytes;
    }

    /**
     * The next object, or null at the end of the stream between objects.
     *
     * @throws EOFException when the stream ends inside an object
     * @throws StreamFormatException when it is not NDJSON of objects, or a non-data value is too large
     */
    public Line next() throws IOException {
        try {
            return read();
        } catch (StreamingJson.FormatException e) {
            throw new StreamFormatException(e);
        }
    }

    private Line read() throws IOException {
        if (!json.nextObject()) {
            return null;
        }
        Line line = new Line();
        Pending pending = new Pending();
        for (String key = json.nextField(); key != null; key = json.nextField()) {
            if (key.equals("data") && json.peekValue() == '"') {
                if (!readData(line, pending)) {
                    line.stopped = true;
                    return line;
                }
            } else {
                JsonNode value = json.capture();
                line.fields.put(key, value);
                if (key.equals("stream") && value.isTextual()) {
                    line.stream = value.asText();
                    if (!pending.flushTo(line, output)) {
                        line.stopped = true;
                        return line;
                    }
                }
            }
        }
        return line;
    }

    private static boolean isOutputStream(String stream) {
        return "stdout".equals(stream) || "stderr".equals(stream);
    }

    /** Streams a data string to the output, or holds it (bounded) until the stream key is known. */
    private boolean readData(Line line, Pending pending) throws IOException {
        if (isOutputStream(line.stream)) {
            String stream = line.stream;
            return json.streamBytes((b, off, len) -> {
                line.dataBytes += len;
                return output.write(stream, b, off, len);
            });
        }
        // "data" before "stream" (never seen from Vercel): keep a bounded copy for when the key comes.
        return json.streamBytes((b, off, len) -> {
            if (pending.bytes.size() + len > maxFieldBytes) {
                throw new StreamFormatException("a data string before its stream key exceeded " + maxFieldBytes + " bytes");
            }
            pending.bytes.write(b, off, len);
            return true;
        });
    }

    /** A data string that arrived before the stream key. */
    private static final class Pending {
        final ByteArrayOutputStream bytes = new ByteArrayOutputStream();

        boolean flushTo(Line line, Output output) {
            if (bytes.size() == 0 || !isOutputStream(line.stream)) {
                return true;
            }
            byte[] b = bytes.toByteArray();
            bytes.reset();
            line.dataBytes += b.length;
            return output.write(line.stream, b, 0, b.length);
        }
    }
}
