package dev.sandbox4j.egress.internal;

import java.io.ByteArrayOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.regex.Pattern;

/**
 * An HTTP/1.x request or response head: the start line and the header fields in order. Strict on
 * what could make the proxy and the server read one message two ways (request smuggling): no
 * whitespace before a colon, no folded lines, no bare CR, a bounded size.
 */
final class HttpHead {
    private static final Pattern TOKEN = Pattern.compile("[!#$%&'*+.^_`|~0-9A-Za-z-]+");

    final String startLine;
    private final List<String[]> fields;

    private HttpHead(String startLine, List<String[]> fields) {
        this.startLine = startLine;
        this.fields = fields;
    }

    static HttpHead of(String startLine) {
        return new HttpHead(startLine, new ArrayList<>());
    }

    /** A malformed message: the text says what, and never quotes header values. */
    static final class MalformedException extends IOException {
        MalformedException(String message) {
            super(message);
        }
    }

    /**
     * Reads a head; null when the stream ends before its first byte (a connection closed between
     * messages).
     */
    static HttpHead read(InputStream in, int maxBytes) throws IOException {
        ByteArrayOutputStream line = new ByteArrayOutputStream(128);
        List<String> lines = new ArrayList<>();
        int total = 0;
        boolean first = true;
        while (true) {
            int b = in.read();
            if (b < 0) {
                if (first) {
                    return null;
                }
                throw new EOFException("the stream ended inside a message head");
            }
            first = false;
            if (++total > maxBytes) {
                throw new MalformedException("the message head is longer than " + maxBytes + " bytes");
            }
            if (b == '\n') {
                byte[] raw = line.toByteArray();
                int len = raw.length;
                if (len > 0 && raw[len - 1] == '\r') {
                    len--;
                }
                String text = new String(raw, 0, len, StandardCharsets.ISO_8859_1);
                line.reset();
                if (text.isEmpty()) {
                    if (lines.isEmpty()) {
                        continue; // RFC 9112 2.2: ignore empty lines before the start line
                    }
                    break;
                }
                if (text.indexOf('\r') >= 0) {
                    throw new MalformedException("a bare CR in the message head");
                }
                lines.add(text);
            } else {
                line.write(b);
            }
        }
        List<String[]> fields = new ArrayList<>();
        for (String l : lines.subList(1, lines.size())) {
            if (l.charAt(0) == ' ' || l.charAt(0) == '\t') {
                throw new MalformedException("a folded header line");
            }
            int colon = l.indexOf(':');
            if (colon <= 0 || !TOKEN.matcher(l.substring(0, colon)).matches()) {
                throw new MalformedException("a header line without a valid name");
            }
            fields.add(new String[] {l.substring(0, colon), l.substring(colon + 1).strip()});
        }
        return new HttpHead(lines.get(0), fields);
    }

    /** The first value of {@code name}, or null. */
    String get(String name) {
        for (String[] f : fields) {
            if (f[0].equalsIgnoreCase(name)) {
                return f[1];
            }
        }
        return null;
    }

    List<String> all(String name) {
        List<String> out = new ArrayList<>();
        for (String[] f : fields) {
            if (f[0].equalsIgnoreCase(name)) {
                out.add(f[1]);
            }
        }
        return out;
    }

    boolean remove(String name) {
        return fields.removeIf(f -> f[0].equalsIgnoreCase(name));
    }

    void add(String name, String value) {
        fields.add(new String[] {name, value});
    }

    void set(String name, String value) {
        remove(name);
        add(name, value);
    }

    HttpHead withStartLine(String line) {
        return new HttpHead(line, new ArrayList<>(fields));
    }

    /** True when a {@code Connection} header lists {@code token}. */
    boolean connectionHas(String token) {
        for (String v : all("Connection")) {
            for (String t : v.split(",")) {
                if (t.strip().equalsIgnoreCase(token)) {
                    return true;
                }
            }
        }
        return false;
    }

    void write(OutputStream out) throws IOException {
        StringBuilder sb = new StringBuilder(256).append(startLine).append("\r\n");
        for (String[] f : fields) {
            sb.append(f[0]).append(": ").append(f[1]).append("\r\n");
        }
        sb.append("\r\n");
        out.write(sb.toString().getBytes(StandardCharsets.ISO_8859_1));
    }

    /** How the body after a head is delimited. */
    enum Framing { NONE, LENGTH, CHUNKED, UNTIL_CLOSE }

    /** The request body's framing (RFC 9112 6.3); a request with both or an unknown coding is malformed. */
    Framing requestFraming() throws MalformedException {
        List<String> te = all("Transfer-Encoding");
        List<String> cl = all("Content-Length");
        if (!te.isEmpty()) {
            if (!cl.isEmpty()) {
                throw new MalformedException("both Transfer-Encoding and Content-Length");
            }
            if (te.size() != 1 || !te.get(0).equalsIgnoreCase("chunked")) {
                throw new MalformedException("a Transfer-Encoding other than chunked");
            }
            return Framing.CHUNKED;
        }
        return cl.isEmpty() ? Framing.NONE : Framing.LENGTH;
    }

    /** The response body's framing, given the request's method. */
    Framing responseFraming(String requestMethod, int status) throws MalformedException {
        if (requestMethod.equals("HEAD") || (status >= 100 && status < 200) || status == 204 || status == 304) {
            return Framing.NONE;
        }
        List<String> te = all("Transfer-Encoding");
        if (!te.isEmpty()) {
            String last = te.get(te.size() - 1);
            String[] codings = last.split(",");
            return codings[codings.length - 1].strip().equalsIgnoreCase("chunked") ? Framing.CHUNKED : Framing.UNTIL_CLOSE;
        }
        return all("Content-Length").isEmpty() ? Framing.UNTIL_CLOSE : Framing.LENGTH;
    }

    /** The single Content-Length; repeated equal values count as one, different ones are malformed. */
    long contentLength() throws MalformedException {
        long n = -1;
        for (String v : all("Content-Length")) {
            for (String part : v.split(",")) {
                String p = part.strip();
                if (!p.matches("\\d{1,18}")) {
                    throw new MalformedException("a Content-Length that is not a number");
                }
                long x = Long.parseLong(p);
                if (n >= 0 && x != n) {
                    throw new MalformedException("Content-Length values that differ");
                }
                n = x;
            }
        }
        return n;
    }

    /** The status code of a response head, or -1. */
    int status() {
        String[] parts = startLine.split(" ", 3);
        if (parts.length < 2 || !parts[0].startsWith("HTTP/") || !parts[1].matches("\\d{3}")) {
            return -1;
        }
        return Integer.parseInt(parts[1]);
    }

    /** Copies the body with {@code framing} from {@code in} to {@code out}. */
    static void copyBody(Framing framing, long length, InputStream in, OutputStream out) throws IOException {
        switch (framing) {
            case NONE:
                return;
            case LENGTH:
                copyExactly(in, out, length);
                return;
            case CHUNKED:
                copyChunked(in, out);
                return;
            default:
                Streams.copy(in, out);
        }
    }

    static void copyExactly(InputStream in, OutputStream out, long n) throws IOException {
        byte[] buf = new byte[(int) Math.min(64 << 10, Math.max(n, 1))];
        long left = n;
        while (left > 0) {
            int r = in.read(buf, 0, (int) Math.min(buf.length, left));
            if (r < 0) {
                throw new EOFException("the stream ended " + left + " bytes before the end of a body");
            }
            out.write(buf, 0, r);
            left -= r;
        }
        out.flush();
    }

    private static void copyChunked(InputStream in, OutputStream out) throws IOException {
        while (true) {
            String sizeLine = line(in);
            String hex = sizeLine;
            int semi = hex.indexOf(';');
            if (semi >= 0) {
                hex = hex.substring(0, semi);
            }
            hex = hex.strip();
            if (!hex.matches("[0-9a-fA-F]{1,15}")) {
                throw new MalformedException("a chunk size that is not hexadecimal");
            }
            long size = Long.parseLong(hex, 16);
            out.write((sizeLine + "\r\n").getBytes(StandardCharsets.ISO_8859_1));
            if (size == 0) {
                String trailer;
                do {
                    trailer = line(in);
                    out.write((trailer + "\r\n").getBytes(StandardCharsets.ISO_8859_1));
                } while (!trailer.isEmpty());
                out.flush();
                return;
            }
            copyExactly(in, out, size);
            if (!line(in).isEmpty()) {
                throw new MalformedException("a chunk not followed by CRLF");
            }
            out.write('\r');
            out.write('\n');
            out.flush();
        }
    }

    private static String line(InputStream in) throws IOException {
        StringBuilder sb = new StringBuilder();
        while (true) {
            int b = in.read();
            if (b < 0) {
                throw new EOFException("the stream ended inside a chunked body");
            }
            if (b == '\n') {
                int len = sb.length();
                if (len > 0 && sb.charAt(len - 1) == '\r') {
                    sb.setLength(len - 1);
                }
                return sb.toString();
            }
            if (sb.length() > 4096) {
                throw new MalformedException("a chunk line longer than 4096 bytes");
            }
            sb.append((char) b);
        }
    }

    /** The method of a request head, upper case as sent. */
    String method() {
        int sp = startLine.indexOf(' ');
        return sp < 0 ? startLine : startLine.substring(0, sp);
    }

    /** Parts of a request line: method, target, version; null when it is not one. */
    String[] requestLine() {
        String[] p = startLine.split(" ", -1);
        if (p.length != 3 || !TOKEN.matcher(p[0]).matches() || p[1].isEmpty() || !p[2].matches("HTTP/1\\.[01]")) {
            return null;
        }
        return p;
    }

    static String lower(String s) {
        return s.toLowerCase(Locale.ROOT);
    }
}
