package dev.sandbox4j.http;

import java.io.IOException;
import okhttp3.Response;

/**
 * Reads a successful (2xx) response, typically streaming its body. Runs on an HTTP worker thread.
 *
 * @since 0.1.0
 */
@FunctionalInterface
public interface ResponseHandler<T> {
    T handle(Response response) throws IOException;
}
