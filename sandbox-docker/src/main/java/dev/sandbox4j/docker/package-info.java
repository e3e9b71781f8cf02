/**
 * API. The Docker runner: {@link dev.sandbox4j.docker.DockerSandboxRunner}.
 *
 * <p>Egress: deny-all is network {@code none}; allow-all the configured network ({@code bridge} by default);
 * domain and CIDR lists go through an egress proxy in this JVM (network {@code none}, its unix socket
 * bind-mounted in). The lock-down after trusted setup ({@code Capabilities.Egress.LIVE_UPDATE}) kills every
 * process the setup left, closes the setup's proxy with all its connections, disconnects a container created
 * on the allow-all network ({@code POST /networks/{id}/disconnect}) and checks the engine's inspect shows no
 * network left, then starts the code's proxy, all before the first line of the code; it refuses, before any
 * call, an allow-all setup egress on the {@code host} network (which the engine cannot disconnect) and a
 * lock-down to allow-all. See {@link dev.sandbox4j.docker.DockerSandboxRunner}.
 */
package dev.sandbox4j.docker;
