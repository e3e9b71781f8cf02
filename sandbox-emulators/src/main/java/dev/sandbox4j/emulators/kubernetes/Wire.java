package dev.sandbox4j.emulators.kubernetes;

import java.io.ByteArrayOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The little HTTP/1.1 the emulator needs (the pod exec API is a WebSocket upgrade, whose frames are
 * {@link dev.sandbox4j.emulators.WebSockets}'): requests with Content-Length or chunked bodies, and
 * keep-alive answers with Content-Length.
 */
final class Wire {
    /** Go's net/http default, which the API server keeps: an exec's command travels in the URL. */
    static final int MAX_HEADER_BYTES = 1 << 20;
    static final int MAX_BODY_BYTES = 16 << 20;

    private Wire() {
    }

    /** One request as read off the socket. */
    static final class Request {
        final String method;
        final String path;
        final Map<String, List<String>> query;
        final Map<String, String> headers;
        final byte[] body;

        Request(String method, String path, Map<String, List<String>> query, Map<String, String> headers, byte[] body) {
            this.method = method;
            this.path = path;
            this.query = query;
            this.headers = headers;
            this.body = body;
        }

        String header(String name) {
            return headers.get(name.toLowerCase(Locale.ROOT));
        }

        String param(String name) {
            List<String> v = query.get(name);
            return v == null || v.isEmpty() ? null : v.get(0);
        }

        boolean isUpgrade() {
            String u = header("upgrade");
            return u != null && u.equalsIgnoreCase("websocket");
        }
    }

    /** Reads one request, or null at a clean end of the connection. */
    static Request read(InputStream in) throws IOException {
        String line = line(in, true);
        if (line == null) {
            return null;
        }
        String[] parts = line.split(" ");
        if (parts.length != 3) {
            throw new IOException("bad request line");
        }
        Map<String, String> headers = new LinkedHashMap<>();
        int total = line.length();
        while (true) {
            String h = line(in, false);
            total += h.length();
            if (total > MAX_HEADER_BYTES) {
                throw new IOException("headers too long");
            }
            if (h.isEmpty()) {
                break;
            }
            int c = h.indexOf(':');
            if (c > 0) {
                headers.put(h.substring(0, c).trim().toLowerCase(Locale.ROOT), h.substring(c + 1).trim());
            }
        }
        byte[] body = new byte[0];
        String te = headers.get("transfer-encoding");
        if (te != null && te.toLowerCase(Locale.ROOT).contains("chunked")) {
            ByteArrayOutputStream b = new ByteArrayOutputStream();
            while (true) {
                String size = line(in, false);
                int semi = size.indexOf(';');
                int n = Integer.parseInt((semi >= 0 ? size.substring(0, semi) : size).trim(), 16);
                if (n == 0) {
                    while (!line(in, false).isEmpty()) {
                        // trailers
                    }
                    break;
                }
                if (b.size() + n > MAX_BODY_BYTES) {
                    throw new IOException("body too long");
                }
                b.write(in.readNBytes(n));
                line(in, false);
            }
            body = b.toByteArray();
        } else if (headers.containsKey("content-length")) {
            int n = Integer.parseInt(headers.get("content-length"));
            if (n > MAX_BODY_BYTES) {
                throw new IOException("body too long");
            }
            body = in.readNBytes(n);
            if (body.length != n) {
                throw new EOFException();
            }
        }
        String target = parts[1];
        int q = target.indexOf('?');
        String path = q >= 0 ? target.substring(0, q) : target;
        Map<String, List<String>> query = new LinkedHashMap<>();
        if (q >= 0) {
            for (String kv : target.substring(q + 1).split("&")) {
                if (kv.isEmpty()) {
                    continue;
                }
                int e = kv.indexOf('=');
                String k = URLDecoder.decode(e >= 0 ? kv.substring(0, e) : kv, StandardCharsets.UTF_8);
                String v = e >= 0 ? URLDecoder.decode(kv.substring(e + 1), StandardCharsets.UTF_8) : "";
                query.computeIfAbsent(k, x -> new ArrayList<>()).add(v);
            }
        }
        return new Request(parts[0], path, query, headers, body);
    }

    private static String line(InputStream in, boolean eofOk) throws IOException {
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        while (true) {
            int c = in.read();
            if (c < 0) {
                if (eofOk && b.size() == 0) {
                    return null;
                }
                throw new EOFException();
            }
            if (c == '\n') {
                break;
            }
            if (b.size() > MAX_HEADER_BYTES) {
                throw new IOException("line too long");
            }
            b.write(c);
        }
        String s = b.toString(StandardCharsets.ISO_8859_1);
        return s.endsWith("\r") ? s.substring(0, s.length() - 1) : s;
    }

    static void respond(OutputStream out, int status, String reason, String contentType, byte[] body) throws IOException {
        respond(out, status, reason, contentType, body, "");
    }

    /** As above, with {@code extraHeaders} (whole lines, each ending in CRLF) after the content headers. */
    static void respond(OutputStream out, int status, String reason, String contentType, byte[] body, String extraHeaders)
            throws IOException {
        String head = "HTTP/1.1 " + status + " " + reason + "\r\nContent-Type: " + contentType + "\r\nContent-Length: "
                + body.length + "\r\n" + extraHeaders + "\r\n";
        out.write(head.getBytes(StandardCharsets.ISO_8859_1));
        out.write(body);
        out.flush();
    }

}
