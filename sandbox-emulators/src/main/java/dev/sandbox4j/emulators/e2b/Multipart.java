package dev.sandbox4j.emulators.e2b;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * A small {@code multipart/form-data} reader for envd's {@code POST /files}: the body is already in
 * memory (bounded by the caller); parts are returned with their form name and file name.
 */
final class Multipart {
    /** One part: its form name, its file name (may be null) and its bytes. */
    static final class Part {
        final String name;
        final String filename;
        final byte[] content;

        Part(String name, String filename, byte[] content) {
            this.name = name;
            this.filename = filename;
            this.content = content;
        }
    }

    private Multipart() {
    }

    /** The boundary from a Content-Type such as {@code multipart/form-data; boundary=xyz}, or null. */
    static String boundary(String contentType) {
        if (contentType == null) {
            return null;
        }
        for (String param : contentType.split(";")) {
            String p = param.trim();
            if (p.toLowerCase(Locale.ROOT).startsWith("boundary=")) {
                String b = p.substring("boundary=".length()).trim();
                if (b.length() >= 2 && b.startsWith("\"") && b.endsWith("\"")) {
                    b = b.substring(1, b.length() - 1);
                }
                return b.isEmpty() ? null : b;
            }
        }
        return null;
    }

    /**
     * Splits the body into parts.
     *
     * @throws IllegalArgumentException when the body is not well-formed multipart
     */
    static List<Part> parse(byte[] body, String boundary) {
        byte[] delimiter = ("--" + boundary).getBytes(StandardCharsets.ISO_8859_1);
        byte[] between = ("\r\n--" + boundary).getBytes(StandardCharsets.ISO_8859_1);
        int pos = indexOf(body, delimiter, 0);
        if (pos < 0) {
            throw new IllegalArgumentException("multipart: NextPart: EOF");
        }
        List<Part> parts = new ArrayList<>();
        pos += delimiter.length;
        while (true) {
            if (startsWith(body, pos, "--")) {
                return parts; // the closing delimiter
            }
            if (!startsWith(body, pos, "\r\n")) {
                throw new IllegalArgumentException("multipart: malformed boundary line");
            }
            pos += 2;
            int headersEnd = indexOf(body, "\r\n\r\n".getBytes(StandardCharsets.ISO_8859_1), pos);
            if (headersEnd < 0) {
                throw new IllegalArgumentException("multipart: unexpected EOF in part headers");
            }
            String name = null;
            String filename = null;
            String headers = new String(body, pos, headersEnd - pos, StandardCharsets.UTF_8);
            for (String line : headers.split("\r\n")) {
                int colon = line.indexOf(':');
                if (colon > 0 && line.substring(0, colon).trim().equalsIgnoreCase("Content-Disposition")) {
                    name = param(line.substring(colon + 1), "name");
                    filename = param(line.substring(colon + 1), "filename");
                }
            }
            int contentStart = headersEnd + 4;
            int next = indexOf(body, between, contentStart);
            if (next < 0) {
                throw new IllegalArgumentException("multipart: unexpected EOF in part content");
            }
            byte[] content = new byte[next - contentStart];
            System.arraycopy(body, contentStart, content, 0, content.length);
            parts.add(new Part(name, filename, content));
            pos = next + between.length;
        }
    }

    /** A parameter of a Content-Disposition value, quoted or not (backslash escapes honoured). */
    static String param(String value, String key) {
        int i = 0;
        int n = value.length();
        while (i < n) {
            int semi = value.indexOf(';', i);
            if (semi < 0) {
                return null;
            }
            i = semi + 1;
            while (i < n && value.charAt(i) == ' ') {
                i++;
            }
            int eq = value.indexOf('=', i);
            if (eq < 0) {
                return null;
            }
            String k = value.substring(i, eq).trim();
            i = eq + 1;
            String v;
            if (i < n && value.charAt(i) == '"') {
                StringBuilder sb = new StringBuilder();
                i++;
                while (i < n && value.charAt(i) != '"') {
                    char c = value.charAt(i);
                    if (c == '\\' && i + 1 < n) {
                        c = value.charAt(++i);
                    }
                    sb.append(c);
                    i++;
                }
                i++;
                v = sb.toString();
            } else {
                int end = value.indexOf(';', i);
                v = (end < 0 ? value.substring(i) : value.substring(i, end)).trim();
                i = end < 0 ? n : end;
            }
            if (k.equalsIgnoreCase(key)) {
                return v;
            }
        }
        return null;
    }

    private static boolean startsWith(byte[] body, int pos, String s) {
        if (pos + s.length() > body.length) {
            return false;
        }
        for (int i = 0; i < s.length(); i++) {
            if (body[pos + i] != s.charAt(i)) {
                return false;
            }
        }
        return true;
    }

    static int indexOf(byte[] haystack, byte[] needle, int from) {
        outer:
        for (int i = from; i <= haystack.length - needle.length; i++) {
            for (int j = 0; j < needle.length; j++) {
                if (haystack[i + j] != needle[j]) {
                    continue outer;
                }
            }
            return i;
        }
        return -1;
    }
}
