/**
 * Internal to sandbox-vercel: not API, may change in any release.
 */
package dev.sandbox4j.vercel.internal;
