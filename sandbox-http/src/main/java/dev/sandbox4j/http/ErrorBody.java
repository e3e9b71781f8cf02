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

        /**
         * A code and a message as read.
         *
         * @param code the provider's error code, or null
         * @param message the provider's error message, or null
         */
        public Parsed(String code, String message) {
            this.code = code;
            this.message = message;
        }

        /** {@return the provider's error code; null when the body had none} */
        public String code() {
            return code;
        }

        /** {@return the provider's error message; null when the body had none} */
        public String message() {
            return message;
        }
    }

    /**
     * Reads one error body. It runs in {@link HttpTransport#errorFor}, from which an unchecked exception
     * it throws propagates.
     *
     * @param body the parsed JSON body (a MissingNode when it was empty)
     * @return the code and the message, either of them null; not null itself
     */
    Parsed read(JsonNode body);

    /**
     * The shapes common to REST APIs: {@code {"error":{"code","message"}}}, {@code {"code":"x","message"}},
     * and {@code {"statusCode","error":"Bad Request","message":"..." or [...]}}. Inside {@code error} the
     * code may be a string or a number; at the top level only a string code is read (a number there, such
     * as {@code "code":409}, is dropped). An {@code error} string is the message only when there is no
     * {@code message}. Messages are read by {@link #text}.
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

    /**
     * A string, a number, or an array of them joined by ", "; null for anything else.
     *
     * @param n the node; a MissingNode when the field is absent
     * @return the text; null for an object, a boolean, a JSON null or a missing node. An array's elements
     *         are each read by {@link JsonNode#asText()}, so an object among them gives an empty part and a
     *         JSON null the part {@code null}
     */
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
