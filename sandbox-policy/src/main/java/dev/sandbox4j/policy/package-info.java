/**
 * API. Egress policy and resource limits as immutable values, their validation ({@link
 * dev.sandbox4j.policy.InvalidPolicyException}), and {@link dev.sandbox4j.policy.Capabilities},
 * which says what a runner enforces exactly. No dependencies.
 */
package dev.sandbox4j.policy;
