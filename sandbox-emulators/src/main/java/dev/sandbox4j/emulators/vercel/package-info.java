/**
 * Internal test tooling (not API, may change in any release): a Vercel Sandbox emulator that runs each session on the local runner, under the egress
 * its network policy means there ({@code WirePolicy.localPolicy()}: a domain list through the local
 * runner's egress proxy, switched on a live policy update; a rule it cannot emulate fails closed).
 * Transforms (brokered headers) are applied by the same proxy with each rule's {@code match} as Vercel
 * applies it (first matching rule of a domain only), when the proxy can do exactly that; any other
 * policy with transforms runs with no network.
 */
package dev.sandbox4j.emulators.vercel;
