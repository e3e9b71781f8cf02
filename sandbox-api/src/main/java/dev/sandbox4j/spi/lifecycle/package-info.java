/**
 * SPI, for this project's adapters only: the one lifecycle ({@link
 * dev.sandbox4j.spi.lifecycle.ManagedSandboxRunner}) an adapter gets by implementing {@link
 * dev.sandbox4j.spi.SandboxDriver}: policy checks before any call, run ids, attempts, lost-create
 * resolution, setup and lock-down, teardown on its own deadline (a failed one logged at WARN with the
 * exception's type, and the last failure when the deadline ended the retries), sweeps and results. The module
 * exports this package to the adapter modules alone; on the class path it is public but not API, and
 * may change in any release.
 *
 * @since 0.1.0
 */
package dev.sandbox4j.spi.lifecycle;
