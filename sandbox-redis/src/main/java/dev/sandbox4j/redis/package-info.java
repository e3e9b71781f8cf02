/**
 * API. Concurrency caps that hold across replicas: a permit store on Redis for {@link
 * dev.sandbox4j.api.ConcurrencyLimiter}.
 */
package dev.sandbox4j.redis;
