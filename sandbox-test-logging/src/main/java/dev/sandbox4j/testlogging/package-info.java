/**
 * Internal build tooling, not published: {@link dev.sandbox4j.testlogging.QuietConsole} keeps the
 * test console at WARN while every test JVM logs at DEBUG.
 */
package dev.sandbox4j.testlogging;
