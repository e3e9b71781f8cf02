package dev.sandbox4j.emulators.daytona.internal;

/** A request the emulated server refuses: the HTTP status and the message for Daytona's error body. */
public final class WireException extends Exception {
    private static final long serialVersionUID = 1L;
    private final int status;

    public WireException(int status, String message) {
        super(message, null, false, false);
        this.status = status;
    }

    public static WireException badRequest(String message) {
        return new WireException(400, message);
    }

    public int status() {
        return status;
    }
}
