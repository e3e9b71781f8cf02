package dev.sandbox4j.http;

import java.io.IOException;
import okhttp3.Response;

/**
 * Reads a successful (2xx) response, typically streaming its body. Runs on an HTTP worker thread.
 *
 * @param <T> what the reading gives
 *
 * @since 0.1.0
 */
@FunctionalInterface
public interface ResponseHandler<T> {
    /**
     * Reads the response.
     *
     * @param response the 2xx answer, closed when this returns; a body read only in part is not drained
     *                 (the call is cancelled)
     * @return what {@link HttpTransport#execute} returns
     * @throws IOException when reading fails; {@link HttpTransport#execute} throws it on, or reports
     *         {@link ClientDeadlineException} once the deadline has passed
     */
    T handle(Response response) throws IOException;
}
