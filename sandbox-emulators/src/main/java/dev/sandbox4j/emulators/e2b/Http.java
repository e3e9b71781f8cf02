package dev.sandbox4j.emulators.e2b;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpExchange;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;

/** Answers for the envd and code-interpreter handlers. */
final class Http {
    static final ObjectMapper JSON = new ObjectMapper();

    private Http() {
    }

    static void json(HttpExchange exchange, int status, JsonNode body, String contentType) throws IOException {
        bytes(exchange, status, JSON.writeValueAsBytes(body), contentType);
    }

    static void text(HttpExchange exchange, int status, String text) throws IOException {
        bytes(exchange, status, text.getBytes(StandardCharsets.UTF_8), "text/plain; charset=utf-8");
    }

    static void bytes(HttpExchange exchange, int status, byte[] body, String contentType) throws IOException {
        if (contentType != null) {
            exchange.getResponseHeaders().set("Content-Type", contentType);
        }
        exchange.sendResponseHeaders(status, body.length == 0 ? -1 : body.length);
        if (body.length > 0) {
            try (OutputStream out = exchange.getResponseBody()) {
                out.write(body);
            }
        }
    }

    /** envd's error body: {@code {"code":status,"message":...}} as Go's jsonError writes it. */
    static void envdError(HttpExchange exchange, int status, String message) throws IOException {
        ObjectNode n = JsonNodeFactory.instance.objectNode();
        n.put("code", status);
        n.put("message", message);
        json(exchange, status, n, "application/json; charset=utf-8");
    }
}
