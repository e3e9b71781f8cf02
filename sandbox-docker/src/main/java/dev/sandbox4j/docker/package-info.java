/**
 * API. The Docker runner: {@link dev.sandbox4j.docker.DockerSandboxRunner}.
 */
package dev.sandbox4j.docker;
