/**
 * The Kubernetes runner on kubernetes-sigs/agent-sandbox: {@link dev.sandbox4j.kubernetes.KubernetesSandboxRunner}.
 * One {@code Sandbox} (agents.x-k8s.io/v1beta1) per sandbox, egress as a NetworkPolicy, commands and files
 * through the pod exec API. Claims against templates and warm pools ({@code SandboxClaim},
 * {@code SandboxWarmPool}) are not used yet.
 */
package dev.sandbox4j.kubernetes;
