/**
 * SPI, for REST adapters: the HTTP transport they share (one send per request, interruptible
 * calls, deadlines, error mapping, redaction). Internal to sandbox4j: its API may change in any
 * release.
 */
package dev.sandbox4j.http;
