/**
 * Benchmark harnesses with documented commands; not published.
 */
package dev.sandbox4j.benchmarks;
