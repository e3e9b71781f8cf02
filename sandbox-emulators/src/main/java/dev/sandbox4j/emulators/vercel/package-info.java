/**
 * Test tooling: a Vercel Sandbox emulator that runs each session on the local runner, under the egress
 * its network policy means there ({@code WirePolicy.localPolicy()}: a domain list through the local
 * runner's egress proxy, switched on a live policy update; a rule it cannot emulate fails closed).
 */
package dev.sandbox4j.emulators.vercel;
