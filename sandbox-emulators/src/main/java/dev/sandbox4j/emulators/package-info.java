/**
 * Internal test tooling (not published as API, may change in any release): the core the provider emulators share (the bridge to the
 * local runner, the ledger, fault knobs, HTTP helpers). The emulators share no classes with the
 * adapters they check. Every emulator (Modal's too) has {@code alterLabel(id, key, value)}: a label
 * changed on the provider's side after the create, for tests of what attach trusts.
 */
package dev.sandbox4j.emulators;
