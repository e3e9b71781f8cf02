/**
 * API. The contract every runner implements ({@link dev.sandbox4j.api.SandboxRunner}, {@link
 * dev.sandbox4j.api.Sandbox}), its request and result values, the exception family, and the
 * decorators (failover, concurrency caps, forwarding) that work over any runner.
 */
package dev.sandbox4j.api;
