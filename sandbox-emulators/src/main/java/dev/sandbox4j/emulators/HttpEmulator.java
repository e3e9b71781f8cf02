package dev.sandbox4j.emulators;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
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
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
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
    protected static final ObjectMapper JSON = new ObjectMapper();

    private final HttpServer server;
    private final ExecutorService executor;
    protected final Faults faults = new Faults();
    protected final Ledger ledger = new Ledger();

    protected HttpEmulator(int port) throws IOException {
        server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 64);
        executor = Executors.newCachedThreadPool(r -> {
            Thread t = new Thread(r, getClass().getSimpleName() + "-worker");
            t.setDaemon(true);
            return t;
        });
        server.setExecutor(executor);
        server.createContext("/", exchange -> {
            try {
                faults.pause();
                handle(exchange);
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
                exchange.close();
            }
        });
        server.start();
    }

    /** Serves one request in the provider's own format. */
    protected abstract void handle(HttpExchange exchange) throws Exception;

    /** The provider's error body for {@code status}. */
    protected abstract JsonNode error(int status, String message);

    /** Destroys every live emulated sandbox. */
    protected abstract void destroyAll();

    public Faults faults() {
        return faults;
    }

    public Ledger ledger() {
        return ledger;
    }

    public int port() {
        return server.getAddress().getPort();
    }

    /** {@code http://127.0.0.1:<port>}. */
    public String baseUrl() {
        return "http://" + server.getAddress().getAddress().getHostAddress() + ":" + port();
    }

    @Override
    public void close() {
        server.stop(0);
        destroyAll();
        executor.shutdownNow();
    }

    /** The parameters of a raw query string, decoded, each with its values in order; empty pairs skipped. */
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

    /** The first value of each parameter of a raw query string (see {@link #queryParams}). */
    public static Map<String, String> queryFirst(String rawQuery) {
        Map<String, String> out = new LinkedHashMap<>();
        queryParams(rawQuery).forEach((k, v) -> out.put(k, v.get(0)));
        return out;
    }

    protected static JsonNode readJson(HttpExchange exchange) throws IOException {
        try (InputStream in = exchange.getRequestBody()) {
            byte[] body = in.readAllBytes();
            return body.length == 0 ? JSON.createObjectNode() : JSON.readTree(body);
        }
    }

    protected static ObjectNode object() {
        return JSON.createObjectNode();
    }

    protected static void sendJson(HttpExchange exchange, int status, JsonNode body) throws IOException {
        byte[] bytes = JSON.writeValueAsBytes(body);
        exchange.getResponseHeaders().set("Content-Type", "application/json");
        exchange.sendResponseHeaders(status, bytes.length);
        try (OutputStream out = exchange.getResponseBody()) {
            out.write(bytes);
        }
    }

    protected static void sendEmpty(HttpExchange exchange, int status) throws IOException {
        exchange.sendResponseHeaders(status, -1);
    }

    protected static void sendText(HttpExchange exchange, int status, String text) throws IOException {
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
     */
    protected static void drop(HttpExchange exchange) {
        exchange.close();
    }

    /**
     * Cuts the connection in the middle of a response whose headers were already sent, as a dropped
     * stream looks to the client: no chunked terminator, just a closed socket. Closing an exchange
     * normally ends a chunked body cleanly; the JDK server closes the connection instead when closing
     * the response stream fails, so the exchange's stream is swapped for one whose close fails.
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
