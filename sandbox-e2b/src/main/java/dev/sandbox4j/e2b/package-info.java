/**
 * API. The E2B adapter: {@link dev.sandbox4j.e2b.E2bSandboxRunner}.
 */
package dev.sandbox4j.e2b;
