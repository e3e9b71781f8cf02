/**
 * Internal test tooling (not API, may change in any release): a Daytona emulator (API and toolbox) that runs each sandbox on the local runner.
 */
package dev.sandbox4j.emulators.daytona;
