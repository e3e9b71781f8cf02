/**
 * Internal to the Vercel emulator.
 */
package dev.sandbox4j.emulators.vercel.internal;
