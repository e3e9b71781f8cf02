/**
 * Internal: example applications; not published.
 */
package dev.sandbox4j.examples;
