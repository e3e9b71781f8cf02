/**
 * Internal test tooling (not API, may change in any release): an E2B emulator (API, envd and code interpreter) that runs each sandbox on the
 * local runner.
 */
package dev.sandbox4j.emulators.e2b;
