/**
 * Internal to sandbox-local: not API, may change in any release.
 */
package dev.sandbox4j.local.internal;
