/**
 * Test tooling, not published as API: the core the provider emulators share (the bridge to the
 * local runner, the ledger, fault knobs, HTTP helpers). The emulators share no classes with the
 * adapters they check.
 */
package dev.sandbox4j.emulators;
