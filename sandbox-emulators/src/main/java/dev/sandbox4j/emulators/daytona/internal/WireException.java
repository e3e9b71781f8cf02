package dev.sandbox4j.emulators.daytona.internal;

/** A request the emulated server refuses: the HTTP status and the message for Daytona's error body. */
public final class WireException extends Exception {
    private static final long serialVersionUID = 1L;
    private final int status;
    private final String code;

    public WireException(int status, String message) {
        this(status, message, null);
    }

    /** With the daemon's machine-readable {@code code} (e.g. {@code INVALID_REQUEST_BODY}). */
    public WireException(int status, String message, String code) {
        super(message, null, false, false);
        this.status = status;
        this.code = code;
    }

    public static WireException badRequest(String message) {
        return new WireException(400, message);
    }

    public int status() {
        return status;
    }

    /** The daemon's code, or null to derive it from the status. */
    public String code() {
        return code;
    }
}
