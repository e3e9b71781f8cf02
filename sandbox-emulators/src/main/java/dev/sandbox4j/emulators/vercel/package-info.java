/**
 * Test tooling: a Vercel Sandbox emulator that runs each session on the local runner.
 */
package dev.sandbox4j.emulators.vercel;
