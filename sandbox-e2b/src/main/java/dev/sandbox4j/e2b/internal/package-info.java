/**
 * Internal to sandbox-e2b: not API, may change in any release.
 */
package dev.sandbox4j.e2b.internal;
