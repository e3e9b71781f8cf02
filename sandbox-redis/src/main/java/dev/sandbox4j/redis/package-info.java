/**
 * API. Concurrency caps that hold across replicas: a permit store on Redis for {@link
 * dev.sandbox4j.compose.ConcurrencyLimiter}. A lease lost while its holder was away is never put back
 * over a cap (the limiter closes the sandbox and reports a {@link dev.sandbox4j.compose.PermitLoss}); a
 * Redis that lost its data is recognised by the namespace's epoch and fails closed until the holders
 * have re-established; caps and lease time are stored per namespace, and a replica that disagrees
 * fails at start. See {@link dev.sandbox4j.redis.RedisPermitStore}.
 */
package dev.sandbox4j.redis;
