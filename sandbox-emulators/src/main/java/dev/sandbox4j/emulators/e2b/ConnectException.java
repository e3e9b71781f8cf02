package dev.sandbox4j.emulators.e2b;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;

/** A Connect error: a snake_case code and a message, as connect-go writes it. */
final class ConnectException extends Exception {
    final String code;

    ConnectException(String code, String message) {
        super(message, null, false, false);
        this.code = code;
    }

    /** {@code {"code":...,"message":...}}: the body of a unary error, or the end-of-stream {@code error}. */
    ObjectNode json() {
        ObjectNode n = JsonNodeFactory.instance.objectNode();
        n.put("code", code);
        n.put("message", getMessage());
        return n;
    }

    /** The HTTP status of a unary error with this code (the Connect protocol's table). */
    int httpStatus() {
        switch (code) {
            case "canceled":
                return 499;
            case "invalid_argument":
            case "failed_precondition":
            case "out_of_range":
                return 400;
            case "deadline_exceeded":
                return 504;
            case "not_found":
                return 404;
            case "already_exists":
            case "aborted":
                return 409;
            case "permission_denied":
                return 403;
            case "resource_exhausted":
                return 429;
            case "unimplemented":
                return 501;
            case "unavailable":
                return 503;
            case "unauthenticated":
                return 401;
            default:
                return 500;
        }
    }
}
