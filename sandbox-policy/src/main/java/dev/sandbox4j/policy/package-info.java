/**
 * API. Egress policy and resource limits as immutable values, their validation ({@link
 * dev.sandbox4j.policy.InvalidPolicyException}), and {@link dev.sandbox4j.policy.Capabilities},
 * which says what a runner enforces exactly. No dependencies.
 *
 * <p>A {@link dev.sandbox4j.policy.HeaderRule} may be scoped to methods and a path prefix. A runner
 * applies the scope only where it declares
 * {@link dev.sandbox4j.policy.Capabilities.Egress#HEADER_RULE_SCOPES}, and refuses a scoped rule
 * otherwise (it would send the secret on every request to the host): the local and Docker runners apply
 * it in their egress proxy, Vercel as its {@code match}; E2B, Daytona, Modal and Kubernetes refuse it.
 */
package dev.sandbox4j.policy;
