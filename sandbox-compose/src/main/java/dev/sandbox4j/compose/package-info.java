/**
 * API. Decorators that work over any {@link dev.sandbox4j.api.SandboxRunner}: {@link
 * dev.sandbox4j.compose.FailoverRunner} (tries the next runner when one cannot open a sandbox; it
 * wraps {@code open()} only, so code never runs twice), {@link dev.sandbox4j.compose.ConcurrencyLimiter}
 * (caps per key and in total, held in a {@link dev.sandbox4j.compose.PermitStore}: in process, or
 * shared across replicas by {@code sandbox-redis}) and {@link dev.sandbox4j.compose.WarmPoolRunner}
 * (sandboxes created ahead of demand).
 *
 * @since 0.1.0
 */
package dev.sandbox4j.compose;
