/**
 * Test tooling: a Vercel Sandbox emulator that runs each session on the local runner. Transforms
 * (brokered headers) are applied by the local runner's egress proxy with each rule's {@code match} as
 * Vercel applies it (first matching rule of a domain only), when the proxy can do exactly that; any
 * other policy with transforms runs with no network.
 */
package dev.sandbox4j.emulators.vercel;
