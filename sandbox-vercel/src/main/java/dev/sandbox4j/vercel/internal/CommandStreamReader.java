package dev.sandbox4j.vercel.internal;

import com.fasterxml.jackson.databind.JsonNode;
import dev.sandbox4j.http.HttpTransport;
import java.io.ByteArrayOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Reads Vercel's command NDJSON stream ({@code {"command":...}}, {@code {"stream":"stdout","data":"..."}},
 * ...) in bounded memory, whatever the sandbox prints.
 *
 * <p>A line is not read whole: the top-level object is scanned field by field. A {@code data} string
 * is decoded as it arrives and handed to the {@link Output} in chunks, so a gigabyte-long line costs
 * a few kilobytes and stops as soon as the output says so (the hard cap). Every other value (the
 * command record, an error) is kept up to {@code maxFieldBytes} and then parsed with Jackson; a larger
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
    }

    /** One object of the stream; its {@code data} string, if any, went to the output. */
    public static final class Line {
        private final Map<String, JsonNode> fields = new LinkedHashMap<>();
        private String stream;
        private boolean stopped;
        private long dataBytes;

        public JsonNode get(String key) {
            JsonNode n = fields.get(key);
            return n == null ? com.fasterxml.jackson.databind.node.MissingNode.getInstance() : n;
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

    private static final int CHUNK = 8192;
    private static final int MAX_KEY_BYTES = 256;

    private final InputStream in;
    private final Output output;
    private final int maxFieldBytes;
    private final byte[] buf = new byte[16384];
    private int pos;
    private int lim;

    public CommandStreamReader(InputStream in, Output output, int maxFieldBytes) {
        this.in = in;
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
        int c = skipWhitespace();
        if (c < 0) {
            return null;
        }
        if (c != '{') {
            throw new StreamFormatException("expected a JSON object, found '" + printable(c) + "'");
        }
        pos++;
        Line line = new Line();
        Pending pending = new Pending();
        if (skipWhitespace() == '}') {
            pos++;
            return line;
        }
        while (true) {
            if (expectNext() != '"') {
                throw new StreamFormatException("expected a field name");
            }
            pos++;
            String key = readKey();
            if (expectNext() != ':') {
                throw new StreamFormatException("expected ':' after \"" + key + "\"");
            }
            pos++;
            c = expectNext();
            if (key.equals("data") && c == '"') {
                pos++;
                if (!readData(line, pending)) {
                    line.stopped = true;
                    return line;
                }
            } else {
                JsonNode value = HttpTransport.JSON.readTree(captureValue(key));
                line.fields.put(key, value);
                if (key.equals("stream") && value.isTextual()) {
                    line.stream = value.asText();
                    if (!pending.flushTo(line, output)) {
                        line.stopped = true;
                        return line;
                    }
                }
            }
            c = expectNext();
            pos++;
            if (c == '}') {
                return line;
            }
            if (c != ',') {
                throw new StreamFormatException("expected ',' or '}' in an object, found '" + printable(c) + "'");
            }
        }
    }

    private static boolean isOutputStream(String stream) {
        return "stdout".equals(stream) || "stderr".equals(stream);
    }

    /** Streams a data string to the output, or holds it (bounded) until the stream key is known. */
    private boolean readData(Line line, Pending pending) throws IOException {
        if (isOutputStream(line.stream)) {
            Chunker chunker = new Chunker(line.stream, line);
            return readString(chunker) && chunker.flush();
        }
        // "data" before "stream" (never seen from Vercel): keep a bounded copy for when the key comes.
        return readString((b, off, len) -> {
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

    @FunctionalInterface
    private interface ByteSink {
        boolean put(byte[] b, int off, int len) throws IOException;
    }

    /** Batches small pieces (escapes) into chunks for the output. */
    private final class Chunker implements ByteSink {
        private final String stream;
        private final Line line;
        private final byte[] chunk = new byte[CHUNK];
        private int n;

        Chunker(String stream, Line line) {
            this.stream = stream;
            this.line = line;
        }

        @Override
        public boolean put(byte[] b, int off, int len) {
            if (n + len > CHUNK && !flush()) {
                return false;
            }
            if (len >= CHUNK) {
                line.dataBytes += len;
                return output.write(stream, b, off, len);
            }
            System.arraycopy(b, off, chunk, n, len);
            n += len;
            return true;
        }

        boolean flush() {
            if (n == 0) {
                return true;
            }
            int len = n;
            n = 0;
            line.dataBytes += len;
            return output.write(stream, chunk, 0, len);
        }
    }

    /** Decodes a JSON string body (after its opening quote) into UTF-8 bytes; false when the sink stops. */
    private boolean readString(ByteSink sink) throws IOException {
        byte[] tmp = new byte[4];
        int pendingHigh = -1;
        while (true) {
            if (pos == lim && !fill()) {
                throw new EOFException("the stream ended inside a string");
            }
            int start = pos;
            while (pos < lim && buf[pos] != '"' && buf[pos] != '\\') {
                pos++;
            }
            if (pos > start) {
                if (pendingHigh >= 0) {
                    pendingHigh = -1;
                    if (!sink.put(tmp, 0, utf8(0xFFFD, tmp))) {
                        return false;
                    }
                }
                if (!sink.put(buf, start, pos - start)) {
                    return false;
                }
            }
            if (pos == lim) {
                continue;
            }
            byte c = buf[pos++];
            if (c == '"') {
                return pendingHigh < 0 || sink.put(tmp, 0, utf8(0xFFFD, tmp));
            }
            int e = read();
            int cp;
            switch (e) {
                case '"': cp = '"'; break;
                case '\\': cp = '\\'; break;
                case '/': cp = '/'; break;
                case 'b': cp = '\b'; break;
                case 'f': cp = '\f'; break;
                case 'n': cp = '\n'; break;
                case 'r': cp = '\r'; break;
                case 't': cp = '\t'; break;
                case 'u': cp = readHex4(); break;
                case -1: throw new EOFException("the stream ended inside an escape");
                default: throw new StreamFormatException("invalid escape '\\" + printable(e) + "'");
            }
            if (Character.isHighSurrogate((char) cp) && e == 'u') {
                if (pendingHigh >= 0 && !sink.put(tmp, 0, utf8(0xFFFD, tmp))) {
                    return false;
                }
                pendingHigh = cp;
                continue;
            }
            if (Character.isLowSurrogate((char) cp) && e == 'u') {
                cp = pendingHigh >= 0 ? Character.toCodePoint((char) pendingHigh, (char) cp) : 0xFFFD;
                pendingHigh = -1;
            } else if (pendingHigh >= 0) {
                pendingHigh = -1;
                if (!sink.put(tmp, 0, utf8(0xFFFD, tmp))) {
                    return false;
                }
            }
            if (!sink.put(tmp, 0, utf8(cp, tmp))) {
                return false;
            }
        }
    }

    private int readHex4() throws IOException {
        int v = 0;
        for (int i = 0; i < 4; i++) {
            int h = read();
            int d = Character.digit(h < 0 ? -1 : h, 16);
            if (h < 0) {
                throw new EOFException("the stream ended inside an escape");
            }
            if (d < 0) {
                throw new StreamFormatException("invalid \\u escape");
            }
            v = v * 16 + d;
        }
        return v;
    }

    private static int utf8(int cp, byte[] out) {
        if (cp < 0x80) {
            out[0] = (byte) cp;
            return 1;
        }
        if (cp < 0x800) {
            out[0] = (byte) (0xC0 | cp >> 6);
            out[1] = (byte) (0x80 | cp & 0x3F);
            return 2;
        }
        if (cp < 0x10000) {
            out[0] = (byte) (0xE0 | cp >> 12);
            out[1] = (byte) (0x80 | cp >> 6 & 0x3F);
            out[2] = (byte) (0x80 | cp & 0x3F);
            return 3;
        }
        out[0] = (byte) (0xF0 | cp >> 18);
        out[1] = (byte) (0x80 | cp >> 12 & 0x3F);
        out[2] = (byte) (0x80 | cp >> 6 & 0x3F);
        out[3] = (byte) (0x80 | cp & 0x3F);
        return 4;
    }

    private String readKey() throws IOException {
        ByteArrayOutputStream key = new ByteArrayOutputStream();
        readString((b, off, len) -> {
            if (key.size() + len > MAX_KEY_BYTES) {
                throw new StreamFormatException("a field name exceeded " + MAX_KEY_BYTES + " bytes");
            }
            key.write(b, off, len);
            return true;
        });
        return key.toString(StandardCharsets.UTF_8);
    }

    /** The raw bytes of one JSON value (not a data string), at most {@code maxFieldBytes}. */
    private byte[] captureValue(String key) throws IOException {
        ByteArrayOutputStream raw = new ByteArrayOutputStream();
        int depth = 0;
        boolean inString = false;
        boolean escaped = false;
        while (true) {
            int c = peek();
            if (c < 0) {
                throw new EOFException("the stream ended inside the value of \"" + key + "\"");
            }
            if (!inString && depth == 0 && raw.size() > 0 && (c == ',' || c == '}' || c == ']' || isWhitespace(c))) {
                return raw.toByteArray(); // end of a number or literal
            }
            pos++;
            if (raw.size() >= maxFieldBytes) {
                throw new StreamFormatException("the value of \"" + key + "\" exceeded " + maxFieldBytes + " bytes");
            }
            raw.write(c);
            if (inString) {
                if (escaped) {
                    escaped = false;
                } else if (c == '\\') {
                    escaped = true;
                } else if (c == '"') {
                    inString = false;
                    if (depth == 0) {
                        return raw.toByteArray();
                    }
                }
            } else if (c == '"') {
                inString = true;
            } else if (c == '{' || c == '[') {
                depth++;
            } else if (c == '}' || c == ']') {
                depth--;
                if (depth < 0) {
                    throw new StreamFormatException("unbalanced '" + (char) c + "' in the value of \"" + key + "\"");
                }
                if (depth == 0) {
                    return raw.toByteArray();
                }
            }
        }
    }

    private int expectNext() throws IOException {
        int c = skipWhitespace();
        if (c < 0) {
            throw new EOFException("the stream ended inside an object");
        }
        return c;
    }

    /** Skips whitespace (newlines included) and peeks at the next byte; -1 at the end. */
    private int skipWhitespace() throws IOException {
        while (true) {
            int c = peek();
            if (c < 0 || !isWhitespace(c)) {
                return c;
            }
            pos++;
        }
    }

    private static boolean isWhitespace(int c) {
        return c == ' ' || c == '\n' || c == '\r' || c == '\t';
    }

    private int peek() throws IOException {
        if (pos == lim && !fill()) {
            return -1;
        }
        return buf[pos] & 0xff;
    }

    private int read() throws IOException {
        int c = peek();
        if (c >= 0) {
            pos++;
        }
        return c;
    }

    private boolean fill() throws IOException {
        int n = in.read(buf, 0, buf.length);
        pos = 0;
        lim = Math.max(n, 0);
        return n > 0;
    }

    private static String printable(int c) {
        return c < 0 ? "end of stream" : c >= 0x20 && c < 0x7f ? String.valueOf((char) c) : String.format("0x%02x", c);
    }
}
