package dev.sandbox4j.http;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.List;

/**
 * Reads a provider's error body into its code and message. Each adapter passes its own to
 * {@link HttpTransport.Builder#errorBody}, usually {@link #STANDARD} extended with its provider's
 * quirks; the transport knows no provider.
 *
 * @since 0.1.0
 */
@FunctionalInterface
public interface ErrorBody {
    /**
     * A provider's error code (may be null) and message (may be null).
     *
     * @since 0.1.0
     */
    final class Parsed {
        private final String code;
        private final String message;

        public Parsed(String code, String message) {
            this.code = code;
            this.message = message;
        }

        public String code() {
            return code;
        }

        public String message() {
            return message;
        }
    }

    /** @param body the parsed JSON body (a MissingNode when it was empty) */
    Parsed read(JsonNode body);

    /**
     * The shapes common to REST APIs: {@code {"error":{"code","message"}}}, {@code {"code":"x","message"}},
     * and {@code {"statusCode","error":"Bad Request","message":"..." or [...]}}.
     */
    ErrorBody STANDARD = n -> {
        JsonNode err = n.path("error");
        if (err.isObject()) {
            return new Parsed(text(err.path("code")), text(err.path("message")));
        }
        JsonNode c = n.path("code");
        String message = text(n.path("message"));
        if (message == null && err.isTextual()) {
            message = err.asText();
        }
        return new Parsed(c.isTextual() ? c.asText() : null, message);
    };

    /** A string, a number, or an array of them joined by ", "; null for anything else. */
    static String text(JsonNode n) {
        if (n.isTextual() || n.isNumber()) {
            return n.asText();
        }
        if (n.isArray()) {
            List<String> parts = new ArrayList<>();
            n.forEach(x -> parts.add(x.asText()));
            return String.join(", ", parts);
        }
        return null;
    }
}
