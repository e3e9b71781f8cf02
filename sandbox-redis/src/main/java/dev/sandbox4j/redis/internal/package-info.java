/**
 * Internal to sandbox-redis: not API, may change in any release.
 */
package dev.sandbox4j.redis.internal;
