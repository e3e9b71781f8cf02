/**
 * SPI, for adapter authors: what an adapter implements ({@link dev.sandbox4j.spi.SandboxDriver}
 * over its {@link dev.sandbox4j.spi.SandboxHandle}, answering {@link dev.sandbox4j.spi.CreateRequest}s
 * and reporting {@link dev.sandbox4j.spi.ExecOutcome}s into an {@link dev.sandbox4j.spi.OutputSink}),
 * and the plumbing every adapter shares whatever its transport: secrets, backoff, run ids, the
 * output limiter, the language table and the file-listing script, and the lifecycle settings every
 * remote adapter's builder shares ({@link dev.sandbox4j.spi.RunnerBuilder}, {@link
 * dev.sandbox4j.spi.LifecycleOptions}). The lifecycle that runs a driver
 * is in {@code dev.sandbox4j.spi.lifecycle}; runner discovery is {@link
 * dev.sandbox4j.api.SandboxRunnerProvider}. Stable for adapters; application code does not need it.
 *
 * @since 0.1.0
 */
package dev.sandbox4j.spi;
