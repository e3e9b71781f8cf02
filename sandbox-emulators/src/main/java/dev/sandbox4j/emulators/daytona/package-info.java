/**
 * Internal test tooling (not API, may change in any release): a Daytona emulator (API and toolbox) that runs each sandbox on the local runner, under
 * the egress its network fields mean there ({@code WireEgress.localPolicy}: a domain or CIDR list through
 * the local runner's egress proxy, switched by network-settings; both lists together fail closed).
 */
package dev.sandbox4j.emulators.daytona;
