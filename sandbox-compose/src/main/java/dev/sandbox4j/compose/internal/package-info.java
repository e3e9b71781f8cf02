/**
 * Internal to sandbox-api: not API, may change in any release.
 */
package dev.sandbox4j.compose.internal;
