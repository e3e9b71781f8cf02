/**
 * Internal to sandbox-daytona: not API, may change in any release.
 */
package dev.sandbox4j.daytona.internal;
