/**
 * Internal: the runnable {@code RunCode} command line; not a library API.
 */
package dev.sandbox4j.cli;
