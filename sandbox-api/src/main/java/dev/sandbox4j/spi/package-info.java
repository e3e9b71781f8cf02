/**
 * SPI, for adapter authors: the one lifecycle ({@link
 * dev.sandbox4j.spi.lifecycle.ManagedSandboxRunner}) an adapter gets by implementing {@link
 * dev.sandbox4j.spi.SandboxDriver}, and the plumbing every adapter shares whatever its
 * transport: secrets, backoff, run ids, the output limiter, permit stores and runner discovery.
 * Stable for adapters; application code does not need it.
 */
package dev.sandbox4j.spi;
