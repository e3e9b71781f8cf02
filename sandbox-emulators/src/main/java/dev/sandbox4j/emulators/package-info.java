/**
 * Internal test tooling (not published as API, may change in any release): the core the provider emulators share (the bridge to the
 * local runner, the ledger, fault knobs, HTTP helpers). The emulators share no classes with the
 * adapters they check. Every emulator (Modal's too) has {@code alterLabel(id, key, value)}: a label
 * changed on the provider's side after the create, for tests of what attach trusts.
 *
 * <p>Each emulator turns the egress it received into an {@code EgressPolicy} with its own code and
 * opens (and, on a live update, switches) its machine under it ({@link dev.sandbox4j.emulators.Machine.Factory},
 * {@link dev.sandbox4j.emulators.Machine#setEgress}). {@link dev.sandbox4j.emulators.LocalMachine} runs
 * it on the local runner: allow-all as the host network, deny-all as none, and a domain list through
 * the local runner's egress proxy; a policy the local runner cannot enforce exactly gets no network at
 * all (stricter, never weaker). The E2B, Vercel, Daytona and Modal (in {@code sandbox-emulators-modal})
 * emulators hand their lists on this way, so the contract suite's list case runs on their adapters; the
 * Kubernetes runner refuses domain lists (a NetworkPolicy holds no names), so its emulator gets none.
 */
package dev.sandbox4j.emulators;
