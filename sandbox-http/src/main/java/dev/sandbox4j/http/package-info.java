/**
 * SPI, for this project's REST adapters only: the HTTP transport they share (one send per request,
 * interruptible calls, deadlines, error mapping, redaction), and {@link dev.sandbox4j.http.StreamingJson},
 * their one reader of JSON answers whose strings (a command's output) are streamed in bounded memory.
 * The module exports this package to the adapter modules alone; on the class path it is public but
 * may change in any release.
 *
 * @since 0.1.0
 */
package dev.sandbox4j.http;
