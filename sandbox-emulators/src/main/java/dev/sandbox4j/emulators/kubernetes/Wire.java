package dev.sandbox4j.emulators.kubernetes;

import java.io.ByteArrayOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The little HTTP/1.1 and WebSocket (RFC 6455) the emulator needs: the JDK has no WebSocket server, and
 * the pod exec API is a WebSocket upgrade. Requests with Content-Length or chunked bodies, keep-alive
 * answers with Content-Length, and binary frames (server frames unmasked, client frames masked).
 */
final class Wire {
    /** Go's net/http default, which the API server keeps: an exec's command travels in the URL. */
    static final int MAX_HEADER_BYTES = 1 << 20;
    static final int MAX_BODY_BYTES = 16 << 20;
    private static final String WS_GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";

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
        String head = "HTTP/1.1 " + status + " " + reason + "\r\nContent-Type: " + contentType + "\r\nContent-Length: "
                + body.length + "\r\n\r\n";
        out.write(head.getBytes(StandardCharsets.ISO_8859_1));
        out.write(body);
        out.flush();
    }

    static void switchProtocols(OutputStream out, String key, String protocol) throws IOException {
        String accept;
        try {
            accept = Base64.getEncoder().encodeToString(MessageDigest.getInstance("SHA-1")
                    .digest((key + WS_GUID).getBytes(StandardCharsets.ISO_8859_1)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
        String head = "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: "
                + accept + "\r\n" + (protocol == null ? "" : "Sec-WebSocket-Protocol: " + protocol + "\r\n") + "\r\n";
        out.write(head.getBytes(StandardCharsets.ISO_8859_1));
        out.flush();
    }

    /** One WebSocket frame from the client. */
    static final class Frame {
        final int opcode;
        final byte[] payload;

        Frame(int opcode, byte[] payload) {
            this.opcode = opcode;
            this.payload = payload;
        }
    }

    /** Reads one frame (unmasking it); control frames and data frames alike. */
    static Frame readFrame(InputStream in) throws IOException {
        int b0 = in.read();
        int b1 = in.read();
        if (b0 < 0 || b1 < 0) {
            throw new EOFException();
        }
        int opcode = b0 & 0x0f;
        boolean masked = (b1 & 0x80) != 0;
        long len = b1 & 0x7f;
        if (len == 126) {
            len = ((in.read() & 0xff) << 8) | (in.read() & 0xff);
        } else if (len == 127) {
            len = 0;
            for (int i = 0; i < 8; i++) {
                len = (len << 8) | (in.read() & 0xff);
            }
        }
        if (len > MAX_BODY_BYTES || len < 0) {
            throw new IOException("frame too long");
        }
        byte[] mask = masked ? in.readNBytes(4) : null;
        byte[] payload = in.readNBytes((int) len);
        if (payload.length != len) {
            throw new EOFException();
        }
        if (mask != null) {
            for (int i = 0; i < payload.length; i++) {
                payload[i] ^= mask[i & 3];
            }
        }
        return new Frame(opcode, payload);
    }

    /** Writes one unmasked, final frame. */
    static void writeFrame(OutputStream out, int opcode, byte[] payload, int off, int len) throws IOException {
        ByteArrayOutputStream h = new ByteArrayOutputStream(10);
        h.write(0x80 | opcode);
        if (len < 126) {
            h.write(len);
        } else if (len <= 0xffff) {
            h.write(126);
            h.write(len >>> 8);
            h.write(len);
        } else {
            h.write(127);
            for (int i = 7; i >= 0; i--) {
                h.write((int) (((long) len) >>> (8 * i)));
            }
        }
        out.write(h.toByteArray());
        out.write(payload, off, len);
        out.flush();
    }
}
