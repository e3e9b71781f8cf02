/**
 * API: the host-side egress proxy of the embedded runners. {@link dev.sandbox4j.egress.EgressProxy}
 * enforces an {@link dev.sandbox4j.policy.EgressPolicy} for one sandbox: HTTP {@code CONNECT} and
 * absolute-URI plain HTTP requests only to allowed hosts, names resolved by the proxy itself
 * ({@link dev.sandbox4j.egress.EgressResolver}) and checked against private ranges (DNS rebinding),
 * the TLS SNI checked against the CONNECT host, brokered headers added after TLS termination with a
 * per-proxy CA, and {@link dev.sandbox4j.egress.EgressLimits}. Every refusal is answered (HTTP 403
 * with a reason line) and counted in {@link dev.sandbox4j.egress.EgressStats}.
 *
 * <p>The package {@code dev.sandbox4j.egress.internal} is not API.
 */
package dev.sandbox4j.egress;
