/**
 * Internal tooling: benchmark harnesses with documented commands; not published.
 */
package dev.sandbox4j.benchmarks;
