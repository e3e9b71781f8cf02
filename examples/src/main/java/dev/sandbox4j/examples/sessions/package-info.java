/**
 * Example (internal, not published): sessions across requests (attach by id) and warm pools.
 */
package dev.sandbox4j.examples.sessions;
