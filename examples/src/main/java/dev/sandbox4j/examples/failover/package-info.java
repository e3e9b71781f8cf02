/**
 * Example (internal, not published): failover and caps.
 */
package dev.sandbox4j.examples.failover;
