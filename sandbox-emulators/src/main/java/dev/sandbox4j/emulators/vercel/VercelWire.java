package dev.sandbox4j.emulators.vercel;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpExchange;
import dev.sandbox4j.emulators.HttpEmulator;
import java.io.IOException;

/** Vercel's wire conventions every handler shares: method checks, JSON bodies and the error shape. */
final class VercelWire {
    private VercelWire() {
    }

    static boolean expect(HttpExchange ex, String method, String wanted) throws IOException {
        if (method.equals(wanted)) {
            return true;
        }
        sendError(ex, 405, "method_unknown", "This endpoint only responds to " + wanted);
        return false;
    }

    /** The JSON body, or null after answering 400 for a body that is not a JSON object. */
    static JsonNode body(HttpExchange ex) throws IOException {
        JsonNode body;
        try {
            body = HttpEmulator.readJson(ex);
        } catch (JsonProcessingException e) {
            sendError(ex, 400, "bad_request", "The request body is not valid JSON");
            return null;
        }
        if (!body.isObject()) {
            sendError(ex, 400, "bad_request", "The request body must be a JSON object");
            return null;
        }
        return body;
    }

    static String codeFor(int status) {
        switch (status) {
            case 400: return "bad_request";
            case 401: return "unauthorized";
            case 402: return "payment_required";
            case 403: return "forbidden";
            case 404: return "not_found";
            case 405: return "method_unknown";
            case 409: return "conflict";
            case 410: return "sandbox_stopped";
            case 422: return "sandbox_stopping";
            case 429: return "rate_limited";
            case 502: return "bad_gateway";
            case 503: return "service_unavailable";
            case 504: return "gateway_timeout";
            default: return status >= 500 ? "internal_server_error" : "bad_request";
        }
    }

    static void sendError(HttpExchange ex, int status, String code, String message) throws IOException {
        ObjectNode body = HttpEmulator.object();
        body.putObject("error").put("code", code).put("message", message);
        HttpEmulator.sendJson(ex, status, body);
    }
}
