package dev.sandbox4j.e2b.internal;

import java.io.IOException;

/**
 * A stream from the sandbox broke our framing rules (an oversized or compressed envelope, a payload
 * that is not JSON). Distinct from OkHttp's own IO failures, which mean a dropped connection.
 */
public final class StreamRefusedException extends IOException {
    public StreamRefusedException(String message) {
        super(message);
    }
}
