/**
 * Internal test tooling (not API, may change in any release): a Vercel Sandbox emulator that runs each session on the local runner.
 */
package dev.sandbox4j.emulators.vercel;
