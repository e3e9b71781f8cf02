package dev.sandbox4j.emulators;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpExchange;
import java.io.ByteArrayOutputStream;
import java.io.FilterInputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * One request as an emulator received it, the one record every emulator keeps
 * ({@link HttpEmulator#calls()}, {@code GET /_emulator/calls}, the {@code --trace} log): method, path,
 * query, headers with every secret masked, what the handler made of the body, and the answer's status.
 * The request body's first {@value #KEEP} bytes are kept only when a trace asks for them.
 *
 * @since 0.1.0
 */
public final class RecordedCall {
    /** Headers whose values never appear: API keys, tokens, basic credentials. */
    static final Set<String> SECRET_HEADERS = Set.of("authorization", "proxy-authorization", "x-api-key",
            "x-access-token", "e2b-traffic-access-token");
    /** Bytes of a request body a trace keeps. */
    static final int KEEP = 2048;

    private final long tMs;
    private final String method;
    private final String path;
    private final String query;
    private final String target;
    private final Map<String, String> headers;
    private volatile JsonNode body;
    private volatile String route;
    private volatile int status;
    private ByteArrayOutputStream kept;
    private long bodyBytes;

    private RecordedCall(long tMs, HttpExchange exchange, Map<String, String> headers) {
        this(tMs, exchange.getRequestMethod(), exchange.getRequestURI().getRawPath(), exchange.getRequestURI().getRawQuery(),
                String.valueOf(exchange.getRequestURI()), headers);
    }

    private RecordedCall(long tMs, String method, String path, String query, String target, Map<String, String> headers) {
        this.tMs = tMs;
        this.method = method;
        this.path = path;
        this.query = query;
        this.target = target;
        this.headers = Collections.unmodifiableMap(headers);
    }

    /**
     * Records a request read off a socket rather than through the JDK server (a WebSocket upgrade).
     *
     * @param rawTarget the request line's target, path and query still percent-encoded
     * @param headers the request's headers, names in lower case
     */
    static RecordedCall of(long tMs, String method, String rawTarget, Map<String, String> headers, Masker mask) {
        Map<String, String> kept = new TreeMap<>();
        headers.forEach((name, value) -> kept.put(name, SECRET_HEADERS.contains(name) ? mask.mask(name, value) : value));
        int q = rawTarget.indexOf('?');
        return new RecordedCall(tMs, method, q < 0 ? rawTarget : rawTarget.substring(0, q),
                q < 0 ? null : rawTarget.substring(q + 1), rawTarget, kept);
    }

    /** Records a request; {@code mask} gives what a secret header shows instead of its value. */
    static RecordedCall of(long tMs, HttpExchange exchange, Masker mask) {
        Map<String, String> headers = new TreeMap<>();
        for (Map.Entry<String, List<String>> e : exchange.getRequestHeaders().entrySet()) {
            String name = e.getKey().toLowerCase(Locale.ROOT);
            String value = String.join(", ", e.getValue());
            headers.put(name, SECRET_HEADERS.contains(name) ? mask.mask(name, value) : value);
        }
        return new RecordedCall(tMs, exchange, headers);
    }

    /** What a secret header's value shows in the record. */
    @FunctionalInterface
    interface Masker {
        String mask(String lowerCaseName, String value);
    }

    /** Keeps the body's first bytes as the handler reads it, for {@link #trace()}. */
    void captureBody(HttpExchange exchange) {
        synchronized (this) {
            kept = new ByteArrayOutputStream();
        }
        exchange.setStreams(new FilterInputStream(exchange.getRequestBody()) {
            @Override
            public int read() throws IOException {
                int b = super.read();
                if (b >= 0) {
                    keep(new byte[] {(byte) b}, 0, 1);
                }
                return b;
            }

            @Override
            public int read(byte[] b, int off, int len) throws IOException {
                int n = super.read(b, off, len);
                if (n > 0) {
                    keep(b, off, n);
                }
                return n;
            }
        }, null);
    }

    private synchronized void keep(byte[] b, int off, int n) {
        bodyBytes += n;
        int room = KEEP - kept.size();
        if (room > 0) {
            kept.write(b, off, Math.min(room, n));
        }
    }

    /**
     * Milliseconds since the emulator started.
     *
     * @return when the request arrived, in milliseconds since the emulator started
     */
    public long tMs() {
        return tMs;
    }

    /** {@return the request method, as sent (e.g. {@code GET})} */
    public String method() {
        return method;
    }

    /**
     * The raw path.
     *
     * @return the request path, still percent-encoded
     */
    public String path() {
        return path;
    }

    /**
     * The raw query string, or null.
     *
     * @return the query, still percent-encoded, or null when the request had none
     */
    public String query() {
        return query;
    }

    /**
     * Header names in lower case, values joined by {@code ", "}; secrets masked, never kept.
     *
     * @return an unmodifiable map of the request headers, sorted by name
     */
    public Map<String, String> headers() {
        return headers;
    }

    /**
     * What the handler made of the body (its JSON, or a summary of multipart parts), or null.
     *
     * @return what the handler set, or null when it set nothing
     */
    public JsonNode body() {
        return body;
    }

    /**
     * Sets what {@link #body()} shows.
     *
     * @param body what the handler made of the request body, or null for nothing
     */
    public void body(JsonNode body) {
        this.body = body;
    }

    /**
     * The path as the handler that served it saw it (e.g. under a prefix), or null.
     *
     * @return what the handler set, or null when it set nothing
     */
    public String route() {
        return route;
    }

    /**
     * Sets what {@link #route()} shows.
     *
     * @param route the path as the handler saw it, or null
     */
    public void route(String route) {
        this.route = route;
    }

    /**
     * The answer's status; -1 when the connection was dropped on purpose (or no answer went out); 0 before an answer.
     *
     * @return the HTTP status, -1 or 0 as above
     */
    public int status() {
        return status;
    }

    /**
     * Sets the status, before the answer goes out (a reader of the record must not see 0 after its answer).
     *
     * @param status the HTTP status of the answer, or -1 for a connection dropped on purpose
     */
    public void status(int status) {
        this.status = status;
    }

    /**
     * As {@code GET /_emulator/calls} shows it.
     *
     * @return a new object with {@code t_ms}, {@code method}, {@code path}, {@code query} (only when
     *         present), {@code headers}, {@code body} (null when none) and {@code status}
     */
    public ObjectNode toJson() {
        ObjectNode o = HttpEmulator.JSON.createObjectNode();
        o.put("t_ms", tMs);
        o.put("method", method);
        o.put("path", path);
        if (query != null) {
            o.put("query", query);
        }
        ObjectNode h = o.putObject("headers");
        headers.forEach(h::put);
        o.set("body", body);
        o.put("status", status);
        return o;
    }

    /**
     * The trace log's lines: the request line, the headers (masked), the body's start (a Connect
     * envelope's header decoded) and the status.
     *
     * @return the lines, separated by newlines, the last without one; the body appears only when it
     *         was captured for a trace
     */
    public synchronized String trace() {
        StringBuilder line = new StringBuilder();
        line.append(method).append(' ').append(target);
        headers.forEach((k, v) -> line.append("\n  ").append(k).append(": ").append(v));
        if (bodyBytes > 0) {
            byte[] b = kept.toByteArray();
            line.append("\n  body (").append(bodyBytes).append(" bytes): ");
            if (String.valueOf(headers.get("content-type")).startsWith("application/connect+json") && b.length >= 5) {
                line.append("envelope flags=").append(b[0]).append(" len=")
                        .append(((b[1] & 0xff) << 24) | ((b[2] & 0xff) << 16) | ((b[3] & 0xff) << 8) | (b[4] & 0xff))
                        .append(' ').append(new String(b, 5, b.length - 5, StandardCharsets.UTF_8));
            } else {
                line.append(new String(b, StandardCharsets.UTF_8).replace("\r\n", "\\r\\n"));
            }
        }
        line.append("\n  -> ").append(status);
        return line.toString();
    }

    @Override
    public String toString() {
        return method + " " + path + (query == null ? "" : "?" + query) + " -> " + status;
    }
}
