package dev.sandbox4j.emulators;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The tiny HTTP server under every emulator: the JDK's own {@code HttpServer} on loopback, a thread per
 * exchange, the shared {@link Faults} and {@link Ledger}, and JSON helpers. Each emulator parses and
 * writes its provider's wire format itself.
 *
 * @since 0.1.0
 */
public abstract class HttpEmulator implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(HttpEmulator.class);

    static {
        // The JDK's HttpServer leaves Nagle's algorithm on unless told: an answer written as headers, then
        // body, then waits for the client's delayed ACK (about 40 ms, twice per E2B cycle). The JDK reads
        // this once, when its first server starts; a caller's own setting wins.
        if (System.getProperty("sun.net.httpserver.nodelay") == null) {
            System.setProperty("sun.net.httpserver.nodelay", "true");
        }
    }
    /** The mapper every emulator reads and writes JSON with. */
    public static final ObjectMapper JSON = new ObjectMapper();

    private final HttpServer server;
    private final ExecutorService executor;
    /** The fault knobs this emulator applies to its requests; the same object as {@link #faults()}. */
    protected final Faults faults = new Faults();
    /** The record of the sandboxes this emulator created and tore down; the same object as {@link #ledger()}. */
    protected final Ledger ledger = new Ledger();
    private final AtomicInteger inFlight = new AtomicInteger();
    private final Map<HttpExchange, String> inHand = new ConcurrentHashMap<>();
    private final LongAdder[] requests = new LongAdder[Kind.values().length];
    private final boolean instant;
    private final long startNanos = System.nanoTime();
    private final ArrayDeque<RecordedCall> calls = new ArrayDeque<>();
    private final Map<HttpExchange, RecordedCall> current = new ConcurrentHashMap<>();
    private volatile boolean trace;

    /**
     * Starts a server on the loopback address that runs code as usual (not {@linkplain #instant() instant}).
     *
     * @param port the port to listen on, or 0 for any free one (see {@link #port()})
     * @throws IOException if the server cannot bind the port
     */
    protected HttpEmulator(int port) throws IOException {
        this(port, false);
    }

    /**
     * @param port    the port to listen on, or 0 for any free one (see {@link #port()})
     * @param instant whether this emulator runs nothing (see {@link #instant()}); the subclass honours it,
     *                this class only reports it
     * @throws IOException if the server cannot bind the port
     */
    protected HttpEmulator(int port, boolean instant) throws IOException {
        this.instant = instant;
        for (int i = 0; i < requests.length; i++) {
            requests[i] = new LongAdder();
        }
        server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 64);
        executor = Executors.newCachedThreadPool(r -> {
            Thread t = new Thread(r, getClass().getSimpleName() + "-worker");
            t.setDaemon(true);
            return t;
        });
        server.setExecutor(executor);
        server.createContext(REQUESTS_PATH, exchange -> {
            try {
                sendJson(exchange, 200, requestsJson());
            } finally {
                exchange.close();
            }
        });
        server.createContext(CALLS_PATH, exchange -> {
            try {
                ObjectNode o = object();
                ArrayNode a = o.putArray("calls");
                calls().forEach(c -> a.add(c.toJson()));
                sendJson(exchange, 200, o);
            } finally {
                exchange.close();
            }
        });
        server.createContext("/", exchange -> {
            inFlight.incrementAndGet();
            inHand.put(exchange, exchange.getRequestMethod() + " " + exchange.getRequestURI().getRawPath()
                    + " since " + System.currentTimeMillis());
            RecordedCall call = null;
            try {
                Kind kind = kind(exchange);
                if (!exchange.getRequestURI().getRawPath().startsWith("/_emulator/")) {
                    requests[kind.ordinal()].increment();
                    call = record(exchange);
                }
                faults.pause();
                if (kind == Kind.CREATE) {
                    faults.pauseCreate();
                }
                if (injectFaults(exchange, kind)) {
                    handle(exchange);
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                drop(exchange);
            } catch (Exception e) {
                log.warn("{}: {} {} failed", getClass().getSimpleName(), exchange.getRequestMethod(),
                        exchange.getRequestURI().getPath(), e);
                try {
                    sendJson(exchange, 500, error(500, "emulator error: " + e));
                } catch (IOException ignored) {
                    drop(exchange);
                }
            } finally {
                if (call != null) {
                    finish(exchange, call);
                }
                exchange.close();
                inHand.remove(exchange);
                inFlight.decrementAndGet();
            }
        });
        server.start();
    }

    private RecordedCall record(HttpExchange exchange) {
        RecordedCall call = RecordedCall.of((System.nanoTime() - startNanos) / 1_000_000, exchange,
                (name, value) -> maskSecret(exchange, name, value));
        if (trace) {
            call.captureBody(exchange);
        }
        current.put(exchange, call);
        synchronized (calls) {
            if (calls.size() >= MAX_CALLS) {
                calls.removeFirst();
            }
            calls.addLast(call);
        }
        return call;
    }

    /**
     * Records a request this emulator read off a socket of its own rather than through its HTTP server
     * (a WebSocket upgrade, which the JDK server cannot hand over), so {@link #calls()} and the request
     * counts ({@link Kind#OTHER}) hold it too; secret headers are masked with the default mask.
     *
     * @param method the request method
     * @param rawTarget the request line's target, path and query still percent-encoded
     * @param headers the request's headers, names in lower case
     * @return the record, whose status the caller sets ({@code 101} once switched)
     */
    protected final RecordedCall recordRaw(String method, String rawTarget, Map<String, String> headers) {
        requests[Kind.OTHER.ordinal()].increment();
        RecordedCall call = RecordedCall.of((System.nanoTime() - startNanos) / 1_000_000, method, rawTarget, headers,
                (name, value) -> "***(" + value.length() + " chars)");
        synchronized (calls) {
            if (calls.size() >= MAX_CALLS) {
                calls.removeFirst();
            }
            calls.addLast(call);
        }
        return call;
    }

    private void finish(HttpExchange exchange, RecordedCall call) {
        current.remove(exchange);
        if (call.status() == 0) {
            call.status(exchange.getResponseCode()); // -1 when no answer went out
        }
        if (trace) {
            String line = call.trace();
            synchronized (System.err) {
                System.err.println(line);
            }
        }
    }

    /**
     * The record of the request being handled, for a handler to add what it made of the body
     * ({@link RecordedCall#body(JsonNode)}) or the status of an answer it cut on purpose.
     *
     * @param exchange the exchange the calling handler is serving
     * @return the record being filled for that request
     * @throws IllegalStateException if no request is in hand for {@code exchange}: a control path
     *                               under {@code /_emulator/}, or a request that has already ended
     */
    protected final RecordedCall call(HttpExchange exchange) {
        RecordedCall c = current.get(exchange);
        if (c == null) {
            throw new IllegalStateException("no request in hand for this exchange");
        }
        return c;
    }

    /**
     * What a secret header's value shows in the record and the trace (never the value).
     *
     * @param exchange      the request that carried the header, for an emulator that checks the secret
     * @param lowerCaseName the header's name, in lower case
     * @param value         the header's value, all its occurrences joined by {@code ", "}
     * @return the text shown instead; by default {@code ***(N chars)}, where N is the value's length
     */
    protected String maskSecret(HttpExchange exchange, String lowerCaseName, String value) {
        return "***(" + value.length() + " chars)";
    }

    /**
     * Prints every request to standard error as it ends ({@link RecordedCall#trace()}).
     *
     * @param on true to print each request, with the start of its body, from the next one on; false to stop
     */
    protected final void trace(boolean on) {
        this.trace = on;
    }

    /**
     * The requests received so far, oldest first (at most the last {@value #MAX_CALLS}; the controls are not kept).
     *
     * @return a copy of those records; later requests do not change it
     */
    public List<RecordedCall> calls() {
        synchronized (calls) {
            return List.copyOf(calls);
        }
    }

    /** Forgets the requests received so far. */
    public void clearCalls() {
        synchronized (calls) {
            calls.clear();
        }
    }

    /**
     * Serves one request in the provider's own format.
     *
     * @param exchange the request to answer; the caller closes it afterwards
     * @throws Exception on any failure: the request is then answered 500 with the provider's
     *                   {@link #error(int, String) error body} (an {@link InterruptedException} drops the
     *                   connection instead)
     */
    protected abstract void handle(HttpExchange exchange) throws Exception;

    /**
     * What a request is, for the fault knobs that apply to a kind of call rather than to one endpoint.
     *
     * @since 0.1.0
     */
    public enum Kind {
        /** The create call. */
        CREATE,
        /** The call an adapter makes to find a sandbox by its run id. */
        LOOKUP,
        /** A call that starts code. */
        EXEC,
        /** The client's teardown call. */
        TEARDOWN,
        /** Any other call: status reads, files, signals, logs, the emulator's own controls. */
        OTHER
    }

    /**
     * Where every emulator answers {@code GET} with its request counts as JSON
     * ({@code {"total":N,"CREATE":n,"LOOKUP":n,"EXEC":n,"TEARDOWN":n,"OTHER":n}}); a read is not counted.
     */
    public static final String REQUESTS_PATH = "/_emulator/requests";

    /** Where every emulator answers {@code GET} with {@code {"calls":[...]}}, each a {@link RecordedCall#toJson()}. */
    public static final String CALLS_PATH = "/_emulator/calls";

    /** How many requests {@link #calls()} keeps. */
    public static final int MAX_CALLS = 10_000;

    /**
     * The kind of call this request is; emulators override it so the knobs below find their calls.
     *
     * @param exchange the request, before its body is read
     * @return its kind; {@link Kind#OTHER} unless overridden
     */
    protected Kind kind(HttpExchange exchange) {
        return Kind.OTHER;
    }

    /**
     * The knobs applied around every handler: a hung lookup, and a garbled 2xx body. False when the
     * request was dropped here.
     */
    private boolean injectFaults(HttpExchange exchange, Kind kind) throws InterruptedException {
        if (kind == Kind.LOOKUP) {
            Duration hang = faults.takeHungLookup();
            if (hang != null) {
                Thread.sleep(hang.toMillis());
                if (ThreadLocalRandom.current().nextBoolean()) {
                    drop(exchange);
                    return false;
                }
            }
        }
        if (faults.garbleArmed(kind == Kind.CREATE)) {
            garble(exchange, kind == Kind.CREATE);
        }
        return true;
    }

    /**
     * Replaces every byte of a 2xx body with garbage (same length). The knob is taken at the body's
     * first byte, so an error answer or a body-less one leaves it armed for the next call.
     */
    private void garble(HttpExchange exchange, boolean create) {
        OutputStream original = exchange.getResponseBody();
        byte[] junk = "#garbled\u0000<{".getBytes(StandardCharsets.ISO_8859_1);
        exchange.setStreams(null, new OutputStream() {
            private long written;
            private Boolean garbling;

            @Override
            public void write(int b) throws IOException {
                write(new byte[] {(byte) b}, 0, 1);
            }

            @Override
            public void write(byte[] b, int off, int len) throws IOException {
                if (garbling == null && len > 0) {
                    int status = exchange.getResponseCode();
                    garbling = status >= 200 && status <= 299
                            && (create ? faults.takeGarbledCreate() : faults.takeGarbledAnswer());
                }
                if (garbling == null || !garbling) {
                    original.write(b, off, len);
                    return;
                }
                byte[] out = new byte[len];
                for (int i = 0; i < len; i++) {
                    out[i] = junk[(int) ((written + i) % junk.length)];
                }
                written += len;
                original.write(out);
            }

            @Override
            public void flush() throws IOException {
                original.flush();
            }

            @Override
            public void close() throws IOException {
                original.close();
            }
        });
    }

    /**
     * The late-create knob, called by a create handler before it creates anything: when it fires, the
     * connection is held, then dropped without an answer, and this returns once the sandbox is due to
     * appear; the handler then creates it and answers nothing. False (at once) when it does not fire.
     *
     * @param exchange the create request being handled
     * @return true when the knob fired and the connection is already dropped; false otherwise
     * @throws InterruptedException if the thread is interrupted while the connection is held or while
     *                              waiting for the sandbox to be due
     */
    protected final boolean createLate(HttpExchange exchange) throws InterruptedException {
        Duration[] late = faults.takeLateCreate();
        if (late == null) {
            return false;
        }
        Thread.sleep(late[0].toMillis());
        drop(exchange);
        Thread.sleep(late[1].minus(late[0]).toMillis());
        return true;
    }

    /**
     * The provider's error body for {@code status}.
     *
     * @param status  the HTTP status the body is sent with
     * @param message what went wrong, for the body's message field
     * @return the body, in the provider's JSON format
     */
    protected abstract JsonNode error(int status, String message);

    /** Destroys every live emulated sandbox. */
    protected abstract void destroyAll();

    /** {@return the fault knobs this emulator applies to its requests, for a test to arm} */
    public Faults faults() {
        return faults;
    }

    /**
     * Whether this emulator is in instant mode: sandboxes are created, listed, looked up and torn down
     * as usual, but no code runs (every exec answers at once with exit 0 and no output) and file writes
     * are accepted and dropped. For measuring what a client costs; the ledger and the request counts
     * still count everything.
     *
     * @return true in instant mode
     */
    public boolean instant() {
        return instant;
    }

    /**
     * Requests received since this emulator started, every kind together (the {@code /_emulator/}
     * controls are not counted). Counted before faults and handlers, so a dropped request counts too.
     *
     * @return the total count
     */
    public long requestCount() {
        long n = 0;
        for (LongAdder a : requests) {
            n += a.sum();
        }
        return n;
    }

    /**
     * Requests received since this emulator started, per {@link Kind} (every kind present).
     *
     * @return a new map from each kind, in declaration order, to its count
     */
    public Map<Kind, Long> requestCounts() {
        Map<Kind, Long> out = new EnumMap<>(Kind.class);
        for (Kind k : Kind.values()) {
            out.put(k, requests[k.ordinal()].sum());
        }
        return out;
    }

    /**
     * The request counts as {@link #REQUESTS_PATH} serves them.
     *
     * @return a new object with {@code total} and one count per kind
     */
    public ObjectNode requestsJson() {
        ObjectNode n = object();
        n.put("total", requestCount());
        requestCounts().forEach((k, v) -> n.put(k.name(), v));
        return n;
    }

    /**
     * One line for a standalone emulator's exit: {@code requests: total=N CREATE=n ...}.
     *
     * @return the line, without a line terminator
     */
    public String requestsLine() {
        StringBuilder b = new StringBuilder("requests: total=").append(requestCount());
        requestCounts().forEach((k, v) -> b.append(' ').append(k.name()).append('=').append(v));
        return b.toString();
    }

    /** {@return the record of the sandboxes this emulator created and tore down, for a test to check for leaks} */
    public Ledger ledger() {
        return ledger;
    }

    /**
     * Requests being handled right now (a late create counts until its sandbox exists).
     *
     * @return the count, the {@code /_emulator/} controls not included
     */
    public int inFlight() {
        return inFlight.get();
    }

    /**
     * The requests being handled right now, as {@code METHOD path since <epoch ms>}: what a test still waits for.
     *
     * @return a snapshot, in no particular order
     */
    public List<String> inFlightRequests() {
        return List.copyOf(inHand.values());
    }

    /** {@return the port this emulator listens on, on the loopback address} */
    public int port() {
        return server.getAddress().getPort();
    }

    /**
     * {@code http://127.0.0.1:<port>}.
     *
     * @return the URL clients reach this emulator at, without a trailing slash
     */
    public String baseUrl() {
        return "http://" + server.getAddress().getAddress().getHostAddress() + ":" + port();
    }

    @Override
    public void close() {
        server.stop(0);
        destroyAll();
        executor.shutdownNow();
        // A handler caught mid-create (a machine still opening, a late create) can add a sandbox after
        // the sweep above: wait for the handlers to end (the interrupt ends their waits), then sweep again.
        try {
            if (!executor.awaitTermination(30, TimeUnit.SECONDS)) {
                log.warn("{}: request handlers still running 30 s after close", getClass().getSimpleName());
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        destroyAll();
    }

    /**
     * The parameters of a raw query string, decoded, each with its values in order; empty pairs skipped.
     *
     * @param rawQuery the query as it appears in the URI, still percent-encoded ({@code +} decodes to a
     *                 space), or null
     * @return a new map from each name, in order of first appearance, to its values; a name without
     *         {@code =} has the value {@code ""}; empty for a null or empty query
     */
    public static Map<String, List<String>> queryParams(String rawQuery) {
        Map<String, List<String>> out = new LinkedHashMap<>();
        if (rawQuery == null || rawQuery.isEmpty()) {
            return out;
        }
        for (String pair : rawQuery.split("&")) {
            if (pair.isEmpty()) {
                continue;
            }
            int eq = pair.indexOf('=');
            String k = URLDecoder.decode(eq < 0 ? pair : pair.substring(0, eq), StandardCharsets.UTF_8);
            String v = eq < 0 ? "" : URLDecoder.decode(pair.substring(eq + 1), StandardCharsets.UTF_8);
            out.computeIfAbsent(k, x -> new ArrayList<>()).add(v);
        }
        return out;
    }

    /**
     * The first value of each parameter of a raw query string (see {@link #queryParams}).
     *
     * @param rawQuery the query as it appears in the URI, still percent-encoded, or null
     * @return a new map from each name, in order of first appearance, to its first value
     */
    public static Map<String, String> queryFirst(String rawQuery) {
        Map<String, String> out = new LinkedHashMap<>();
        queryParams(rawQuery).forEach((k, v) -> out.put(k, v.get(0)));
        return out;
    }

    /**
     * The request body as JSON (an empty object for an empty body).
     *
     * @param exchange the request whose body to read; its body stream is read to the end and closed
     * @return the parsed body
     * @throws IOException if the body cannot be read or is not valid JSON
     */
    public static JsonNode readJson(HttpExchange exchange) throws IOException {
        try (InputStream in = exchange.getRequestBody()) {
            byte[] body = in.readAllBytes();
            return body.length == 0 ? JSON.createObjectNode() : JSON.readTree(body);
        }
    }

    /**
     * Reads the request body, refusing one larger than {@code max} bytes.
     *
     * @param exchange the request whose body to read; its body stream is closed afterwards
     * @param max      the largest body accepted, in bytes
     * @return the whole body
     * @throws BodyTooLargeException past {@code max} (the rest is not read)
     * @throws IOException if the body cannot be read
     */
    public static byte[] readBody(HttpExchange exchange, long max) throws IOException {
        try (InputStream in = exchange.getRequestBody()) {
            java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
            byte[] buf = new byte[64 * 1024];
            long total = 0;
            int n;
            while ((n = in.read(buf)) > 0) {
                total += n;
                if (total > max) {
                    throw new BodyTooLargeException(max);
                }
                out.write(buf, 0, n);
            }
            return out.toByteArray();
        }
    }

    /**
     * A request body past the size an endpoint accepts.
     *
     * @since 0.1.0
     */
    public static final class BodyTooLargeException extends IOException {
        private static final long serialVersionUID = 1L;

        BodyTooLargeException(long max) {
            super("request body larger than " + max + " bytes");
        }
    }

    /**
     * A new JSON object.
     *
     * @return an empty object node of {@link #JSON}
     */
    public static ObjectNode object() {
        return JSON.createObjectNode();
    }

    /**
     * Answers {@code status} with a JSON body.
     *
     * @param exchange the request to answer; its response headers must not have been sent yet
     * @param status   the HTTP status
     * @param body     the body, sent as {@code application/json}
     * @throws IOException if the answer cannot be written
     */
    public static void sendJson(HttpExchange exchange, int status, JsonNode body) throws IOException {
        byte[] bytes = JSON.writeValueAsBytes(body);
        exchange.getResponseHeaders().set("Content-Type", "application/json");
        exchange.sendResponseHeaders(status, bytes.length);
        try (OutputStream out = exchange.getResponseBody()) {
            out.write(bytes);
        }
    }

    /**
     * Answers {@code status} without a body.
     *
     * @param exchange the request to answer; its response headers must not have been sent yet
     * @param status   the HTTP status
     * @throws IOException if the response headers cannot be sent
     */
    public static void sendEmpty(HttpExchange exchange, int status) throws IOException {
        exchange.sendResponseHeaders(status, -1);
    }

    /**
     * Answers {@code status} with a UTF-8 text body.
     *
     * @param exchange the request to answer; its response headers must not have been sent yet
     * @param status   the HTTP status
     * @param text     the body, sent as {@code text/plain; charset=utf-8}
     * @throws IOException if the answer cannot be written
     */
    public static void sendText(HttpExchange exchange, int status, String text) throws IOException {
        byte[] bytes = text.getBytes(StandardCharsets.UTF_8);
        exchange.getResponseHeaders().set("Content-Type", "text/plain; charset=utf-8");
        exchange.sendResponseHeaders(status, bytes.length);
        try (OutputStream out = exchange.getResponseBody()) {
            out.write(bytes);
        }
    }

    /**
     * Cuts the connection without an answer: a lost response, as the client sees it. The JDK server
     * closes the connection when an exchange is closed before its response headers were sent.
     *
     * @param exchange the request to leave unanswered; it is closed
     */
    public static void drop(HttpExchange exchange) {
        exchange.close();
    }

    /**
     * Cuts the connection in the middle of a response whose headers were already sent, as a dropped
     * stream looks to the client: no chunked terminator, just a closed socket. Closing an exchange
     * normally ends a chunked body cleanly; the JDK server closes the connection instead when closing
     * the response stream fails, so the exchange's stream is swapped for one whose close fails.
     *
     * @param exchange the request whose answer to cut; it is closed
     */
    public static void cut(HttpExchange exchange) {
        exchange.setStreams(null, new OutputStream() {
            @Override
            public void write(int b) throws IOException {
                throw new IOException("connection cut");
            }

            @Override
            public void close() throws IOException {
                throw new IOException("connection cut");
            }
        });
        exchange.close();
    }
}
