package dev.sandbox4j.daytona.internal;

import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.Reader;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;

/**
 * Reads Daytona's exec answer, {@code {"exitCode":0,"result":"...","artifacts":{...}}}, in bounded
 * memory: the {@code result} string is decoded as it arrives and pushed to a sink in chunks, so a
 * gigabyte of output never sits in memory. Jackson's streaming parser cannot do this (it buffers a
 * whole string value before handing it out), hence this small reader. Other members are skipped
 * without being kept.
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

    private static final int CHUNK = 8192;
    private static final int MAX_KEY = 256;
    private static final int MAX_NUMBER = 32;
    private static final int MAX_DEPTH = 64;

    private final Reader in;
    private final char[] buf = new char[CHUNK];
    private int pos;
    private int len;

    private ExecResponseReader(InputStream body) {
        this.in = new InputStreamReader(body, StandardCharsets.UTF_8.newDecoder()
                .onMalformedInput(CodingErrorAction.REPLACE)
                .onUnmappableCharacter(CodingErrorAction.REPLACE));
    }

    /**
     * Reads one exec answer, pushing {@code result} into {@code sink}. Stops at once (without reading
     * the rest) when the sink returns false.
     *
     * @throws IOException when the body is not the expected JSON object or ends early
     */
    static Parsed read(InputStream body, TextSink sink) throws IOException {
        return new ExecResponseReader(body).object(sink);
    }

    private Parsed object(TextSink sink) throws IOException {
        Integer exitCode = null;
        Integer code = null;
        boolean resultSeen = false;
        expect(nextNonSpace(), '{');
        int c = nextNonSpace();
        if (c == '}') {
            return new Parsed(null, false);
        }
        while (true) {
            expect(c, '"');
            String key = key();
            expect(nextNonSpace(), ':');
            int v = nextNonSpace();
            if (key.equals("result") && v == '"' && !resultSeen) {
                resultSeen = true;
                if (!streamString(sink)) {
                    return new Parsed(exitCode != null ? exitCode : code, true);
                }
            } else if (key.equals("exitCode") && isNumberStart(v)) {
                exitCode = integer(v);
            } else if (key.equals("code") && isNumberStart(v)) {
                code = integer(v); // what daemons older than exitCode sent (the SDK falls back to it too)
            } else {
                skipValue(v, 0);
            }
            c = nextNonSpace();
            if (c == '}') {
                return new Parsed(exitCode != null ? exitCode : code, false);
            }
            expect(c, ',');
            c = nextNonSpace();
        }
    }

    /** Decodes a string body (after its opening quote) into chunks; false when the sink says stop. */
    private boolean streamString(TextSink sink) throws IOException {
        StringBuilder chunk = new StringBuilder(CHUNK + 2);
        while (true) {
            int c = next();
            if (c == '"') {
                return chunk.length() == 0 || sink.accept(chunk);
            }
            chunk.append(c == '\\' ? escape() : (char) c);
            if (chunk.length() >= CHUNK) {
                // never hand over half a surrogate pair: keep a trailing high surrogate for the next chunk
                char last = chunk.charAt(chunk.length() - 1);
                boolean hold = Character.isHighSurrogate(last);
                if (hold) {
                    chunk.setLength(chunk.length() - 1);
                }
                if (!sink.accept(chunk)) {
                    return false;
                }
                chunk.setLength(0);
                if (hold) {
                    chunk.append(last);
                }
            }
        }
    }

    private char escape() throws IOException {
        int e = next();
        switch (e) {
            case '"': return '"';
            case '\\': return '\\';
            case '/': return '/';
            case 'b': return '\b';
            case 'f': return '\f';
            case 'n': return '\n';
            case 'r': return '\r';
            case 't': return '\t';
            case 'u':
                int v = 0;
                for (int i = 0; i < 4; i++) {
                    int d = Character.digit(next(), 16);
                    if (d < 0) {
                        throw malformed("bad \\u escape");
                    }
                    v = v * 16 + d;
                }
                return (char) v;
            default:
                throw malformed("bad escape \\" + (char) e);
        }
    }

    private String key() throws IOException {
        StringBuilder sb = new StringBuilder();
        while (true) {
            int c = next();
            if (c == '"') {
                return sb.toString();
            }
            char ch = c == '\\' ? escape() : (char) c;
            if (sb.length() < MAX_KEY) {
                sb.append(ch);
            }
        }
    }

    private static boolean isNumberStart(int c) {
        return c == '-' || (c >= '0' && c <= '9');
    }

    private Integer integer(int first) throws IOException {
        StringBuilder sb = new StringBuilder().append((char) first);
        while (isNumberPart(peek())) {
            if (sb.length() >= MAX_NUMBER) {
                throw malformed("number too long");
            }
            sb.append((char) next());
        }
        try {
            return Integer.valueOf(sb.toString());
        } catch (NumberFormatException e) {
            throw malformed("exit code '" + sb + "' is not an integer");
        }
    }

    private static boolean isNumberPart(int c) {
        return (c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E';
    }

    /** Skips one value whose first character is {@code c}, keeping nothing. */
    private void skipValue(int c, int depth) throws IOException {
        if (depth > MAX_DEPTH) {
            throw malformed("nested too deeply");
        }
        if (c == '"') {
            while (true) {
                int s = next();
                if (s == '"') {
                    return;
                }
                if (s == '\\') {
                    escape();
                }
            }
        }
        if (c == '{' || c == '[') {
            char close = c == '{' ? '}' : ']';
            int n = nextNonSpace();
            if (n == close) {
                return;
            }
            while (true) {
                if (c == '{') {
                    expect(n, '"');
                    skipValue('"', depth + 1);
                    expect(nextNonSpace(), ':');
                    n = nextNonSpace();
                }
                skipValue(n, depth + 1);
                n = nextNonSpace();
                if (n == close) {
                    return;
                }
                expect(n, ',');
                n = nextNonSpace();
            }
        }
        if (isNumberStart(c) || c == 't' || c == 'f' || c == 'n') {
            int count = 1;
            while (Character.isLetterOrDigit(peek()) || isNumberPart(peek())) {
                if (++count > MAX_NUMBER) {
                    throw malformed("literal too long");
                }
                next();
            }
            return;
        }
        throw malformed("unexpected '" + (char) c + "'");
    }

    private void expect(int c, char wanted) throws IOException {
        if (c != wanted) {
            throw malformed("expected '" + wanted + "' but found " + (c < 0 ? "end of body" : "'" + (char) c + "'"));
        }
    }

    private int nextNonSpace() throws IOException {
        int c;
        do {
            c = read();
        } while (c == ' ' || c == '\n' || c == '\r' || c == '\t');
        return c;
    }

    /** The next character; end of body is an error everywhere but at the very end. */
    private int next() throws IOException {
        int c = read();
        if (c < 0) {
            throw malformed("body ended early");
        }
        return c;
    }

    private int read() throws IOException {
        if (pos == len && !fill()) {
            return -1;
        }
        return buf[pos++];
    }

    private int peek() throws IOException {
        if (pos == len && !fill()) {
            return -1;
        }
        return buf[pos];
    }

    private boolean fill() throws IOException {
        int n;
        do {
            n = in.read(buf, 0, buf.length);
        } while (n == 0);
        if (n < 0) {
            return false;
        }
        pos = 0;
        len = n;
        return true;
    }

    private static IOException malformed(String what) {
        return new IOException("malformed exec response: " + what);
    }
}
