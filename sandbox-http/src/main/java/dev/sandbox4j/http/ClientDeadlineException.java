package dev.sandbox4j.http;

/**
 * The client-side deadline of a call passed before the call finished. Checked, so an adapter must
 * decide what it means (usually: kill the remote command and report TIMED_OUT).
 *
 * @since 0.1.0
 */
public final class ClientDeadlineException extends Exception {
    /**
     * An exception with a message and no cause.
     *
     * @param message names the call and its deadline
     */
    public ClientDeadlineException(String message) {
        super(message);
    }
}
