/**
 * SPI, for this project's REST adapters only: the HTTP transport they share (one send per request,
 * interruptible calls, deadlines, error mapping, redaction). The module exports this package to the
 * adapter modules alone; on the class path it is public but may change in any release.
 *
 * @since 0.1.0
 */
package dev.sandbox4j.http;
