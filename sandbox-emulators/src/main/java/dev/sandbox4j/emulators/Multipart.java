package dev.sandbox4j.emulators;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;

/**
 * A small {@code multipart/form-data} reader (RFC 7578) for one request body already read into memory,
 * as the providers' Go servers read it with {@code mime/multipart}: transport padding after a delimiter
 * is skipped, a part may have no headers, and the errors carry Go's wording. Parts are views into the
 * body, so a parse holds no more than the body itself, which the caller bounds.
 *
 * @since 0.1.0
 */
public final class Multipart {
    private static final byte[] CRLF = {'\r', '\n'};
    private static final byte[] DASHES = {'-', '-'};
    private static final byte[] HEADER_END = {'\r', '\n', '\r', '\n'};

    private Multipart() {
    }

    /**
     * A body that is not well-formed multipart; the message is Go's for the same body.
     *
     * @since 0.1.0
     */
    public static final class MalformedException extends Exception {
        private static final long serialVersionUID = 1L;

        MalformedException(String message) {
            super(message);
        }
    }

    /**
     * One part: its form name, its file name (or null) and its bytes (a view into the body).
     *
     * @since 0.1.0
     */
    public static final class Part {
        private final String name;
        private final String filename;
        private final byte[] body;
        private final int offset;
        private final int length;

        Part(String name, String filename, byte[] body, int offset, int length) {
            this.name = name;
            this.filename = filename;
            this.body = body;
            this.offset = offset;
            this.length = length;
        }

        /** {@return the form name from the part's Content-Disposition, or null when it has none} */
        public String name() {
            return name;
        }

        /** {@return the file name from the part's Content-Disposition, or null when it has none} */
        public String filename() {
            return filename;
        }

        /** {@return the content's length in bytes} */
        public int size() {
            return length;
        }

        /** {@return a copy of the content, which the caller may change} */
        public byte[] content() {
            return Arrays.copyOfRange(body, offset, offset + length);
        }

        /** {@return the content decoded as UTF-8} */
        public String text() {
            return new String(body, offset, length, StandardCharsets.UTF_8);
        }
    }

    /**
     * The lower-case media type of a Content-Type ({@code multipart/form-data}), or "" for none.
     *
     * @param contentType a Content-Type header value, or null
     * @return the media type without its parameters, lower-cased and trimmed; "" when
     *         {@code contentType} is null
     */
    public static String mediaType(String contentType) {
        return contentType == null ? "" : contentType.split(";", 2)[0].trim().toLowerCase(Locale.ROOT);
    }

    /**
     * The {@code boundary} parameter of a Content-Type (quotes removed), or null when it has none.
     *
     * @param contentType a Content-Type header value, or null
     * @return the boundary, or null when {@code contentType} is null, has no {@code boundary}
     *         parameter or an empty one
     */
    public static String boundary(String contentType) {
        if (contentType == null) {
            return null;
        }
        String[] params = contentType.split(";");
        for (int i = 1; i < params.length; i++) {
            String p = params[i].trim();
            int eq = p.indexOf('=');
            if (eq > 0 && p.substring(0, eq).trim().equalsIgnoreCase("boundary")) {
                String b = p.substring(eq + 1).trim();
                if (b.length() >= 2 && b.startsWith("\"") && b.endsWith("\"")) {
                    b = b.substring(1, b.length() - 1);
                }
                return b.isEmpty() ? null : b;
            }
        }
        return null;
    }

    /**
     * The parts of {@code body}, in order.
     *
     * @param body the whole request body; the parts returned are views into it, so it must not change
     *        while they are used
     * @param boundary the boundary from the Content-Type (see {@link #boundary(String)}), without the
     *        leading {@code --}
     * @return the parts up to the closing delimiter; anything after it is ignored
     * @throws MalformedException when the body is not well-formed (the message says where)
     */
    public static List<Part> parse(byte[] body, String boundary) throws MalformedException {
        byte[] delimiter = ("--" + boundary).getBytes(StandardCharsets.ISO_8859_1);
        byte[] next = ("\r\n--" + boundary).getBytes(StandardCharsets.ISO_8859_1);
        List<Part> parts = new ArrayList<>();
        int pos = indexOf(body, delimiter, 0);
        if (pos < 0) {
            throw new MalformedException("multipart: NextPart: EOF");
        }
        pos += delimiter.length;
        while (true) {
            if (startsWith(body, pos, DASHES)) {
                return parts; // the closing delimiter
            }
            pos = skipLinearWhitespace(body, pos);
            if (!startsWith(body, pos, CRLF)) {
                throw new MalformedException("multipart: expecting a new Part; got line \"" + line(body, pos) + "\"");
            }
            pos += CRLF.length;
            String name = null;
            String filename = null;
            int contentStart;
            if (startsWith(body, pos, CRLF)) {
                contentStart = pos + CRLF.length; // a part without headers
            } else {
                int headersEnd = indexOf(body, HEADER_END, pos);
                if (headersEnd < 0) {
                    throw new MalformedException("multipart: NextPart: EOF");
                }
                String headers = new String(body, pos, headersEnd - pos, StandardCharsets.UTF_8);
                for (String header : headers.split("\r\n")) {
                    int colon = header.indexOf(':');
                    if (colon > 0 && header.substring(0, colon).trim().equalsIgnoreCase("Content-Disposition")) {
                        String value = header.substring(colon + 1);
                        name = dispositionParam(value, "name");
                        filename = dispositionParam(value, "filename");
                    }
                }
                contentStart = headersEnd + HEADER_END.length;
            }
            int contentEnd = indexOf(body, next, contentStart);
            if (contentEnd < 0) {
                throw new MalformedException("multipart: NextPart: EOF");
            }
            parts.add(new Part(name, filename, body, contentStart, contentEnd - contentStart));
            pos = contentEnd + next.length;
        }
    }

    /** A parameter of a Content-Disposition value ({@code form-data; name="x"; filename="y"}), or null. */
    static String dispositionParam(String value, String param) {
        int i = 0;
        int n = value.length();
        while (i < n) {
            int semi = value.indexOf(';', i);
            if (semi < 0) {
                return null;
            }
            int start = semi + 1;
            while (start < n && value.charAt(start) == ' ') {
                start++;
            }
            int eq = value.indexOf('=', start);
            if (eq < 0) {
                return null;
            }
            String key = value.substring(start, eq).trim();
            int valueStart = eq + 1;
            String v;
            int end;
            if (valueStart < n && value.charAt(valueStart) == '"') {
                StringBuilder sb = new StringBuilder();
                int j = valueStart + 1;
                while (j < n && value.charAt(j) != '"') {
                    char c = value.charAt(j);
                    if (c == '\\' && j + 1 < n) {
                        j++;
                        c = value.charAt(j);
                    }
                    sb.append(c);
                    j++;
                }
                v = sb.toString();
                end = j + 1;
            } else {
                int s = value.indexOf(';', valueStart);
                end = s < 0 ? n : s;
                v = value.substring(valueStart, end).trim();
            }
            if (key.equalsIgnoreCase(param)) {
                return v;
            }
            i = Math.min(end, n);
        }
        return null;
    }

    private static int skipLinearWhitespace(byte[] b, int pos) {
        while (pos < b.length && (b[pos] == ' ' || b[pos] == '\t')) {
            pos++;
        }
        return pos;
    }

    private static String line(byte[] b, int pos) {
        int end = pos;
        while (end < b.length && end - pos < 40 && b[end] != '\r' && b[end] != '\n') {
            end++;
        }
        return new String(b, pos, end - pos, StandardCharsets.ISO_8859_1);
    }

    private static boolean startsWith(byte[] b, int pos, byte[] prefix) {
        if (pos + prefix.length > b.length) {
            return false;
        }
        for (int i = 0; i < prefix.length; i++) {
            if (b[pos + i] != prefix[i]) {
                return false;
            }
        }
        return true;
    }

    private static int indexOf(byte[] haystack, byte[] needle, int from) {
        outer:
        for (int i = Math.max(0, from); i <= haystack.length - needle.length; i++) {
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
