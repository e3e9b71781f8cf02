/**
 * The Kubernetes runner on kubernetes-sigs/agent-sandbox: {@link dev.sandbox4j.kubernetes.KubernetesSandboxRunner}.
 * One {@code Sandbox} (agents.x-k8s.io/v1beta1) per sandbox with a locked-down pod template, egress as a
 * NetworkPolicy created first, commands and files through the pod exec API, teardown deleting both,
 * lost creates and orphans found by the run-id label, attach by Sandbox name after reading both back.
 * The builder requires the acknowledgement that the cluster's CNI enforces NetworkPolicy. Not used yet:
 * {@code SandboxClaim}, {@code SandboxTemplate} and {@code SandboxWarmPool}.
 */
package dev.sandbox4j.kubernetes;
