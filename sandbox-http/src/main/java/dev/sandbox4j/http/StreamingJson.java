package dev.sandbox4j.http;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectReader;
import java.io.ByteArrayOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.CharsetDecoder;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;

/**
 * Reads JSON objects one after another (NDJSON, or a single object) in bounded memory, field by field,
 * for answers whose string values may be larger than the heap (a command's output). Jackson's
 * streaming parser cannot do this: it buffers a whole string value before handing it out.
 *
 * <p>{@link #nextObject()} enters the next top-level object; {@link #nextField()} gives its field names
 * one by one, and after each name the caller takes the value exactly once, in one of three ways:
 * <ul>
 * <li>{@link #streamBytes} or {@link #streamText}: a string value, decoded as it arrives (escapes,
 * surrogate pairs; a lone surrogate escape becomes U+FFFD) and handed to a sink in chunks of a few
 * kilobytes, whatever its length. A sink returning false stops the reader at once, inside the string;
 * </li>
 * <li>{@link #capture()}: any value, kept up to {@link Builder#maxFieldBytes} bytes and parsed as a
 * {@link JsonNode};</li>
 * <li>{@link #skip()}: any value, read and dropped: nothing is kept, containers nest at most
 * {@link Builder#maxDepth} deep, a number or literal is at most {@code maxFieldBytes} long, a string may
 * have any length.</li>
 * </ul>
 * {@link #peekValue()} tells which kind of value comes. A field name is at most
 * {@link Builder#maxKeyBytes} bytes.
 *
 * <p>Input that is not JSON of that shape, or that passes a limit, is a {@link FormatException}; input
 * that ends inside an object is a {@link TruncatedException} (an {@link EOFException}); an
 * {@link IOException} of the stream itself passes through as it is. After any of them, or after a sink
 * stopped, the reader refuses further use ({@link IllegalStateException}). Not thread-safe.
 *
 * @since 0.1.0
 */
public final class StreamingJson {
    /** Where a streamed string's decoded bytes (UTF-8, as the server sent them) go. */
    @FunctionalInterface
    public interface ByteSink {
        /**
         * Takes the next piece of the string.
         *
         * @param b the bytes; valid only during the call (the array is reused)
         * @param off where the piece starts in {@code b}
         * @param len the piece's length, at most 16 KiB
         * @return false to stop reading at once
         * @throws IOException to fail the read
         */
        boolean write(byte[] b, int off, int len) throws IOException;
    }

    /** Where a streamed string's decoded text goes. */
    @FunctionalInterface
    public interface TextSink {
        /**
         * Takes the next piece of the string: at most 8192 chars, never half of a surrogate pair.
         *
         * @param text the piece; valid only during the call (the buffer is reused)
         * @return false to stop reading at once
         * @throws IOException to fail the read
         */
        boolean accept(CharSequence text) throws IOException;
    }

    /** The input is not JSON of the expected shape, or passes one of the reader's limits. */
    public static final class FormatException extends IOException {
        FormatException(String message) {
            super(message);
        }

        FormatException(String message, Throwable cause) {
            super(message, cause);
        }
    }

    /** The input ended inside an object. */
    public static final class TruncatedException extends EOFException {
        TruncatedException(String message) {
            super(message);
        }
    }

    /** The reader's limits; every one has a default. */
    public static final class Builder {
        private final InputStream in;
        private int maxFieldBytes = 1 << 20;
        private int maxKeyBytes = 256;
        private int maxDepth = 64;

        private Builder(InputStream in) {
            if (in == null) {
                throw new NullPointerException("in");
            }
            this.in = in;
        }

        /**
         * The longest value {@link #capture()} keeps, and the longest number or literal {@link #skip()}
         * passes over, in bytes (default 1 MiB).
         *
         * @param bytes at least 1
         * @return this builder
         */
        public Builder maxFieldBytes(int bytes) {
            this.maxFieldBytes = positive(bytes, "maxFieldBytes");
            return this;
        }

        /**
         * The longest field name of a top-level object, in bytes of UTF-8 (default 256).
         *
         * @param bytes at least 1
         * @return this builder
         */
        public Builder maxKeyBytes(int bytes) {
            this.maxKeyBytes = positive(bytes, "maxKeyBytes");
            return this;
        }

        /**
         * How many containers may nest inside one field's value, the value itself counted (default 64).
         *
         * @param depth at least 1
         * @return this builder
         */
        public Builder maxDepth(int depth) {
            this.maxDepth = positive(depth, "maxDepth");
            return this;
        }

        /**
         * The reader.
         *
         * @return a reader at the start of the input
         */
        public StreamingJson build() {
            return new StreamingJson(this);
        }

        private static int positive(int n, String what) {
            if (n < 1) {
                throw new IllegalArgumentException(what + " must be at least 1, got " + n);
            }
            return n;
        }
    }

    /**
     * A reader of {@code in} with the default limits, to be set on the builder.
     *
     * @param in the input; read in blocks, never closed here
     * @return a builder
     */
    public static Builder builder(InputStream in) {
        return new Builder(in);
    }

    private enum State { BETWEEN_OBJECTS, FIRST_FIELD, AFTER_VALUE, VALUE, UNUSABLE }

    private static final int CHUNK = 8192;
    /** The read buffer starts at this size and grows (x4) while reads fill it, up to {@link #MAX_BUF}. */
    private static final int FIRST_BUF = 1024;
    private static final int MAX_BUF = 16384;
    private static final ObjectReader TREE = HttpTransport.JSON.readerFor(JsonNode.class)
            .with(DeserializationFeature.FAIL_ON_TRAILING_TOKENS);

    private final InputStream in;
    private final int maxFieldBytes;
    private final int maxKeyBytes;
    private final int maxDepth;
    private byte[] buf = new byte[FIRST_BUF]; // allocation in proportion to the answer, not preallocated
    private byte[] chunk; // made when a first escape is batched
    private final byte[] utf8 = new byte[4];
    private final boolean[] objectAt;
    private int pos;
    private int lim;
    private State state = State.BETWEEN_OBJECTS;
    private String key;

    private StreamingJson(Builder b) {
        this.in = b.in;
        this.maxFieldBytes = b.maxFieldBytes;
        this.maxKeyBytes = b.maxKeyBytes;
        this.maxDepth = b.maxDepth;
        this.objectAt = new boolean[b.maxDepth];
    }

    /**
     * Enters the next top-level object.
     *
     * @return false at the end of the input (only whitespace was left)
     * @throws FormatException when something other than an object comes
     * @throws IOException when the input fails
     */
    public boolean nextObject() throws IOException {
        require(State.BETWEEN_OBJECTS, "nextObject() inside an object");
        state = State.UNUSABLE;
        int c = skipWhitespace();
        if (c < 0) {
            state = State.BETWEEN_OBJECTS;
            return false;
        }
        if (c != '{') {
            throw new FormatException("expected a JSON object, found '" + printable(c) + "'");
        }
        pos++;
        state = State.FIRST_FIELD;
        return true;
    }

    /**
     * The next field's name in the current object; its value must then be taken (streamed, captured or
     * skipped) before the next call.
     *
     * @return the name, escapes decoded; null when the object closed
     * @throws FormatException when the object is malformed or the name too long
     * @throws TruncatedException when the input ends inside the object
     * @throws IOException when the input fails
     */
    public String nextField() throws IOException {
        if (state != State.FIRST_FIELD && state != State.AFTER_VALUE) {
            throw new IllegalStateException(state == State.VALUE ? "the value of \"" + key + "\" was not taken"
                    : "nextField() outside an object");
        }
        boolean first = state == State.FIRST_FIELD;
        state = State.UNUSABLE;
        int c = expectNext();
        if (c == '}') {
            pos++;
            state = State.BETWEEN_OBJECTS;
            return null;
        }
        if (!first) {
            if (c != ',') {
                throw new FormatException("expected ',' or '}' in an object, found '" + printable(c) + "'");
            }
            pos++;
            c = expectNext();
        }
        if (c != '"') {
            throw new FormatException("expected a field name");
        }
        pos++;
        String name = readKey();
        if (expectNext() != ':') {
            throw new FormatException("expected ':' after \"" + name + "\"");
        }
        pos++;
        expectNext();
        key = name;
        state = State.VALUE;
        return name;
    }

    /**
     * The first byte of the current field's value, not consumed: {@code '"'} for a string, <code>'{'</code>
     * or {@code '['} for a container, anything else for a number or literal (or garbage).
     *
     * @return the byte, 0 to 255
     */
    public int peekValue() {
        require(State.VALUE, "peekValue() without a field");
        return buf[pos] & 0xff;
    }

    /**
     * Streams the current field's value, which must be a string, to {@code sink} as UTF-8 bytes.
     *
     * @param sink where the pieces go
     * @return false when the sink stopped the read (the reader is then unusable)
     * @throws FormatException when the value is not a string, or has a bad escape
     * @throws TruncatedException when the input ends inside the string
     * @throws IOException when the input or the sink fails
     */
    public boolean streamBytes(ByteSink sink) throws IOException {
        return stream(new Chunker(sink));
    }

    /**
     * Streams the current field's value, which must be a string, to {@code sink} as text: UTF-8 decoded
     * as it arrives, a malformed sequence becoming U+FFFD, no character split between two pieces.
     *
     * @param sink where the pieces go
     * @return false when the sink stopped the read (the reader is then unusable)
     * @throws FormatException when the value is not a string, or has a bad escape
     * @throws TruncatedException when the input ends inside the string
     * @throws IOException when the input or the sink fails
     */
    public boolean streamText(TextSink sink) throws IOException {
        return stream(new Utf8Text(sink));
    }

    /**
     * The current field's value as a tree, kept up to {@code maxFieldBytes} bytes.
     *
     * @return the value
     * @throws FormatException when the value is not JSON, is larger, or nests deeper than the limits
     * @throws TruncatedException when the input ends inside the value
     * @throws IOException when the input fails
     */
    public JsonNode capture() throws IOException {
        require(State.VALUE, "capture() without a field");
        state = State.UNUSABLE;
        ByteArrayOutputStream raw = new ByteArrayOutputStream();
        scanValue(raw);
        JsonNode value;
        try {
            value = TREE.readValue(raw.toByteArray());
        } catch (JsonProcessingException e) {
            throw new FormatException("the value of \"" + key + "\" is not JSON: " + e.getOriginalMessage(), e);
        }
        state = State.AFTER_VALUE;
        return value;
    }

    /**
     * Reads the current field's value and drops it, keeping nothing.
     *
     * @throws FormatException when the value is malformed, nests deeper than {@code maxDepth}, or has a
     *         number or literal longer than {@code maxFieldBytes}
     * @throws TruncatedException when the input ends inside the value
     * @throws IOException when the input fails
     */
    public void skip() throws IOException {
        require(State.VALUE, "skip() without a field");
        state = State.UNUSABLE;
        scanValue(null);
        state = State.AFTER_VALUE;
    }

    private void require(State wanted, String misuse) {
        if (state != wanted) {
            throw new IllegalStateException(state == State.UNUSABLE ? "the reader stopped or failed before" : misuse);
        }
    }

    /** The current value, a string, decoded into {@code pieces}; false when the sink stopped. */
    private boolean stream(Pieces pieces) throws IOException {
        require(State.VALUE, "a stream without a field");
        state = State.UNUSABLE;
        if (buf[pos] != '"') {
            throw new FormatException("the value of \"" + key + "\" is not a string");
        }
        pos++;
        boolean more = readString(pieces) && pieces.end();
        state = more ? State.AFTER_VALUE : State.UNUSABLE;
        return more;
    }

    /** Takes a string's decoded bytes and hands them on; told when the string ends. */
    private interface Pieces extends ByteSink {
        /** @return false when the sink stopped */
        boolean end() throws IOException;
    }

    /** Batches small pieces (escapes) into chunks; a long run of plain bytes goes through as it is. */
    private final class Chunker implements Pieces {
        private final ByteSink sink;
        private int n;

        Chunker(ByteSink sink) {
            this.sink = sink;
        }

        @Override
        public boolean write(byte[] b, int off, int len) throws IOException {
            if (n + len > CHUNK && !end()) {
                return false;
            }
            if (len >= CHUNK) {
                return sink.write(b, off, len);
            }
            if (chunk == null) {
                chunk = new byte[CHUNK];
            }
            System.arraycopy(b, off, chunk, n, len);
            n += len;
            return true;
        }

        @Override
        public boolean end() throws IOException {
            if (n == 0) {
                return true;
            }
            int len = n;
            n = 0;
            return sink.write(chunk, 0, len);
        }
    }

    /** UTF-8 to text across pieces: a character cut between two pieces waits for its other bytes. */
    private static final class Utf8Text implements Pieces {
        private final TextSink sink;
        private final CharsetDecoder decoder = StandardCharsets.UTF_8.newDecoder()
                .onMalformedInput(CodingErrorAction.REPLACE)
                .onUnmappableCharacter(CodingErrorAction.REPLACE);
        private final ByteBuffer bytes = ByteBuffer.allocate(CHUNK);
        private final CharBuffer text = CharBuffer.allocate(CHUNK);

        Utf8Text(TextSink sink) {
            this.sink = sink;
        }

        @Override
        public boolean write(byte[] b, int off, int len) throws IOException {
            while (len > 0) {
                int n = Math.min(len, bytes.remaining());
                bytes.put(b, off, n);
                off += n;
                len -= n;
                bytes.flip();
                boolean more = decode(false);
                bytes.compact(); // keeps the first bytes of a character cut at the end
                if (!more) {
                    return false;
                }
            }
            return true;
        }

        /** A trailing partial character becomes U+FFFD; the rest is handed over. */
        @Override
        public boolean end() throws IOException {
            bytes.flip();
            if (!decode(true)) {
                return false;
            }
            while (decoder.flush(text).isOverflow()) {
                if (!handOver()) {
                    return false;
                }
            }
            return text.position() == 0 || handOver();
        }

        private boolean decode(boolean endOfInput) throws IOException {
            while (decoder.decode(bytes, text, endOfInput).isOverflow()) { // REPLACE: never an error
                if (!handOver()) {
                    return false;
                }
            }
            return true;
        }

        private boolean handOver() throws IOException {
            text.flip();
            boolean more = sink.accept(text);
            text.clear();
            return more;
        }
    }

    /** Decodes a string body (after its opening quote) into UTF-8 bytes; false when the sink stops. */
    private boolean readString(ByteSink sink) throws IOException {
        int pendingHigh = -1;
        while (true) {
            if (pos == lim && !fill()) {
                throw new TruncatedException("the stream ended inside a string");
            }
            int start = pos;
            while (pos < lim && buf[pos] != '"' && buf[pos] != '\\') {
                pos++;
            }
            if (pos > start) {
                if (pendingHigh >= 0) {
                    pendingHigh = -1;
                    if (!sink.write(utf8, 0, utf8(0xFFFD))) {
                        return false;
                    }
                }
                if (!sink.write(buf, start, pos - start)) {
                    return false;
                }
            }
            if (pos == lim) {
                continue;
            }
            if (buf[pos++] == '"') {
                return pendingHigh < 0 || sink.write(utf8, 0, utf8(0xFFFD));
            }
            int e = read();
            int cp = e == 'u' ? readHex4() : unescape(e);
            if (e == 'u' && Character.isHighSurrogate((char) cp)) {
                if (pendingHigh >= 0 && !sink.write(utf8, 0, utf8(0xFFFD))) {
                    return false;
                }
                pendingHigh = cp;
                continue;
            }
            if (e == 'u' && Character.isLowSurrogate((char) cp)) {
                cp = pendingHigh >= 0 ? Character.toCodePoint((char) pendingHigh, (char) cp) : 0xFFFD;
                pendingHigh = -1;
            } else if (pendingHigh >= 0) {
                pendingHigh = -1;
                if (!sink.write(utf8, 0, utf8(0xFFFD))) {
                    return false;
                }
            }
            if (!sink.write(utf8, 0, utf8(cp))) {
                return false;
            }
        }
    }

    /** The character of a one-letter escape ({@code e} read after the backslash). */
    private static int unescape(int e) throws IOException {
        switch (e) {
            case '"': return '"';
            case '\\': return '\\';
            case '/': return '/';
            case 'b': return '\b';
            case 'f': return '\f';
            case 'n': return '\n';
            case 'r': return '\r';
            case 't': return '\t';
            case -1: throw new TruncatedException("the stream ended inside an escape");
            default: throw new FormatException("invalid escape '\\" + printable(e) + "'");
        }
    }

    private int readHex4() throws IOException {
        int v = 0;
        for (int i = 0; i < 4; i++) {
            int h = read();
            if (h < 0) {
                throw new TruncatedException("the stream ended inside an escape");
            }
            int d = Character.digit(h, 16);
            if (d < 0) {
                throw new FormatException("invalid \\u escape");
            }
            v = v * 16 + d;
        }
        return v;
    }

    /** {@code cp} as UTF-8 in {@link #utf8}; its length. */
    private int utf8(int cp) {
        byte[] out = utf8;
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
        ByteArrayOutputStream name = new ByteArrayOutputStream();
        readString((b, off, len) -> {
            if (name.size() + len > maxKeyBytes) {
                throw new FormatException("a field name exceeded " + maxKeyBytes + " bytes");
            }
            name.write(b, off, len);
            return true;
        });
        return name.toString(StandardCharsets.UTF_8);
    }

    /**
     * Reads one value (the current field's), checking its grammar as far as the nesting goes; its bytes
     * go to {@code keep} (bounded) when it is not null.
     */
    private void scanValue(ByteArrayOutputStream keep) throws IOException {
        int depth = 0;
        int c = buf[pos] & 0xff;
        while (true) {
            boolean complete;
            if (c == '{' || c == '[') {
                if (depth == maxDepth) {
                    throw new FormatException("the value of \"" + key + "\" nests deeper than " + maxDepth);
                }
                boolean object = c == '{';
                objectAt[depth++] = object;
                take(keep);
                c = peekInValue(keep);
                complete = c == (object ? '}' : ']');
                if (complete) {
                    take(keep);
                    depth--;
                } else if (object) {
                    c = member(keep, c);
                }
            } else if (c == '"') {
                take(keep);
                scanString(keep);
                complete = true;
            } else if (c == '-' || (c >= '0' && c <= '9') || c == 't' || c == 'f' || c == 'n') {
                scanToken(keep);
                complete = true;
            } else {
                throw new FormatException("unexpected '" + printable(c) + "' in the value of \"" + key + "\"");
            }
            while (complete) {
                if (depth == 0) {
                    return;
                }
                boolean object = objectAt[depth - 1];
                c = peekInValue(keep);
                if (c == (object ? '}' : ']')) {
                    take(keep);
                    depth--;
                    continue;
                }
                if (c != ',') {
                    throw new FormatException("expected ',' or '" + (object ? '}' : ']') + "' in the value of \""
                            + key + "\", found '" + printable(c) + "'");
                }
                take(keep);
                c = peekInValue(keep);
                if (object) {
                    c = member(keep, c);
                }
                complete = false;
            }
        }
    }

    /** A member's name and colon inside a value, {@code c} its first byte; the first byte of its value. */
    private int member(ByteArrayOutputStream keep, int c) throws IOException {
        if (c != '"') {
            throw new FormatException("expected a field name in the value of \"" + key + "\", found '"
                    + printable(c) + "'");
        }
        take(keep);
        scanString(keep);
        if (peekInValue(keep) != ':') {
            throw new FormatException("expected ':' in the value of \"" + key + "\"");
        }
        take(keep);
        return peekInValue(keep);
    }

    /** A string inside a value (after its opening quote): escapes checked, bytes kept as they are. */
    private void scanString(ByteArrayOutputStream keep) throws IOException {
        while (true) {
            if (pos == lim && !fill()) {
                throw endedInValue();
            }
            int start = pos;
            while (pos < lim && buf[pos] != '"' && buf[pos] != '\\') {
                pos++;
            }
            keep(keep, start, pos - start);
            if (pos == lim) {
                continue;
            }
            int c = buf[pos] & 0xff;
            take(keep);
            if (c == '"') {
                return;
            }
            if (peekInString() == 'u') {
                take(keep);
                for (int i = 0; i < 4; i++) {
                    int h = peekInString();
                    if (Character.digit(h, 16) < 0) {
                        throw new FormatException("invalid \\u escape in the value of \"" + key + "\"");
                    }
                    take(keep);
                }
            } else {
                unescape(peekInString());
                take(keep);
            }
        }
    }

    /** A number or literal inside a value: its bytes up to the first that cannot be part of one. */
    private void scanToken(ByteArrayOutputStream keep) throws IOException {
        int length = 0;
        while (true) {
            int c = peek();
            if (c < 0) {
                throw endedInValue(); // a field's value is followed by ',' or '}' at least
            }
            boolean part = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
                    || c == '-' || c == '+' || c == '.';
            if (!part) {
                return;
            }
            if (++length > maxFieldBytes) {
                throw new FormatException("a number or literal in the value of \"" + key + "\" exceeded "
                        + maxFieldBytes + " bytes");
            }
            take(keep);
        }
    }

    private int peekInString() throws IOException {
        int c = peek();
        if (c < 0) {
            throw endedInValue();
        }
        return c;
    }

    /** Skips whitespace inside a value (kept, as the value's bytes) and peeks at the next byte. */
    private int peekInValue(ByteArrayOutputStream keep) throws IOException {
        while (true) {
            int c = peek();
            if (c < 0) {
                throw endedInValue();
            }
            if (!isWhitespace(c)) {
                return c;
            }
            take(keep);
        }
    }

    /** Consumes the byte at {@code pos}, keeping it. */
    private void take(ByteArrayOutputStream keep) throws FormatException {
        keep(keep, pos, 1);
        pos++;
    }

    private void keep(ByteArrayOutputStream keep, int off, int len) throws FormatException {
        if (keep == null || len == 0) {
            return;
        }
        if (keep.size() + len > maxFieldBytes) {
            throw new FormatException("the value of \"" + key + "\" exceeded " + maxFieldBytes + " bytes");
        }
        keep.write(buf, off, len);
    }

    private TruncatedException endedInValue() {
        return new TruncatedException("the stream ended inside the value of \"" + key + "\"");
    }

    private int expectNext() throws IOException {
        int c = skipWhitespace();
        if (c < 0) {
            throw new TruncatedException("the stream ended inside an object");
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
        if (lim == buf.length && buf.length < MAX_BUF) {
            buf = new byte[Math.min(MAX_BUF, buf.length * 4)]; // the last read filled it: more is coming
        }
        int n;
        do {
            n = in.read(buf, 0, buf.length);
        } while (n == 0);
        pos = 0;
        lim = Math.max(n, 0);
        return n > 0;
    }

    private static String printable(int c) {
        return c < 0 ? "end of stream" : c >= 0x20 && c < 0x7f ? String.valueOf((char) c) : String.format("0x%02x", c);
    }
}
