/**
 * Internal to the Daytona emulator.
 */
package dev.sandbox4j.emulators.daytona.internal;
