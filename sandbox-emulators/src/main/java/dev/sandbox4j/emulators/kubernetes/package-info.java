/**
 * Internal test tooling: not API, may change in any release.
 * An emulator of a Kubernetes API server with the kubernetes-sigs/agent-sandbox controller
 * ({@link dev.sandbox4j.emulators.kubernetes.AgentSandboxEmulator}): Sandboxes, NetworkPolicies, pods
 * and the pod exec WebSocket, executing for real through a {@link dev.sandbox4j.emulators.Machine}. It
 * shares no classes with the runner it checks.
 */
package dev.sandbox4j.emulators.kubernetes;
