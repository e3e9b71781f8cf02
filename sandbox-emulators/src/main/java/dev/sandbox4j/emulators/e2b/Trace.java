package dev.sandbox4j.emulators.e2b;

import com.sun.net.httpserver.HttpExchange;
import java.io.ByteArrayOutputStream;
import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/** One request as the trace log shows it, with secrets masked and the body's start kept. */
final class Trace {
    private static final Set<String> SECRET_HEADERS = Set.of("x-api-key", "x-access-token", "authorization",
            "e2b-traffic-access-token");
    private static final int KEEP = 2048;
    private final StringBuilder line = new StringBuilder();
    private final ByteArrayOutputStream body = new ByteArrayOutputStream();
    private long bodyBytes;

    static Trace start(HttpExchange exchange) {
        Trace t = new Trace();
        t.line.append(exchange.getRequestMethod()).append(' ').append(exchange.getRequestURI());
        for (Map.Entry<String, List<String>> h : exchange.getRequestHeaders().entrySet()) {
            for (String v : h.getValue()) {
                boolean secret = SECRET_HEADERS.contains(h.getKey().toLowerCase(Locale.ROOT));
                t.line.append("\n  ").append(h.getKey()).append(": ")
                        .append(secret ? "***(" + v.length() + " chars)" : v);
            }
        }
        exchange.setStreams(new FilterInputStream(exchange.getRequestBody()) {
            @Override
            public int read() throws IOException {
                int b = super.read();
                if (b >= 0) {
                    t.keep(new byte[] {(byte) b}, 0, 1);
                }
                return b;
            }

            @Override
            public int read(byte[] b, int off, int len) throws IOException {
                int n = super.read(b, off, len);
                if (n > 0) {
                    t.keep(b, off, n);
                }
                return n;
            }
        }, null);
        return t;
    }

    private synchronized void keep(byte[] b, int off, int n) {
        bodyBytes += n;
        int room = KEEP - body.size();
        if (room > 0) {
            body.write(b, off, Math.min(room, n));
        }
    }

    synchronized String finish(HttpExchange exchange) {
        if (bodyBytes > 0) {
            byte[] kept = body.toByteArray();
            line.append("\n  body (").append(bodyBytes).append(" bytes): ");
            String ct = String.valueOf(exchange.getRequestHeaders().getFirst("Content-Type"));
            if (ct.startsWith("application/connect+json") && kept.length >= 5) {
                line.append("envelope flags=").append(kept[0]).append(" len=")
                        .append(((kept[1] & 0xff) << 24) | ((kept[2] & 0xff) << 16) | ((kept[3] & 0xff) << 8) | (kept[4] & 0xff))
                        .append(' ').append(new String(kept, 5, kept.length - 5, StandardCharsets.UTF_8));
            } else {
                line.append(new String(kept, StandardCharsets.UTF_8).replace("\r\n", "\\r\\n"));
            }
        }
        line.append("\n  -> ").append(exchange.getResponseCode());
        return line.toString();
    }
}
