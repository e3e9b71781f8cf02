/**
 * Internal to sandbox-compose: not API, not exported by the module, may change in any release.
 */
package dev.sandbox4j.compose.internal;
