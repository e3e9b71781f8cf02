/**
 * Example: failover and caps.
 */
package dev.sandbox4j.examples.failover;
