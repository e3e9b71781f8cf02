/**
 * API for runner authors: the contract suite every runner passes, skipping only by declared
 * capabilities, and its egress canary; {@link dev.sandbox4j.tck.FailureCells}, the provider-failure
 * matrix (authentication, rate limit, not found during create, exec and teardown) an adapter's own
 * tests walk against their fake of the provider.
 */
package dev.sandbox4j.tck;
