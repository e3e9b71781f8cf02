/**
 * API.
 * The Kubernetes runner on kubernetes-sigs/agent-sandbox: {@link dev.sandbox4j.kubernetes.KubernetesSandboxRunner}.
 * One {@code Sandbox} (agents.x-k8s.io/v1beta1) per sandbox with a locked-down pod template, egress as a
 * NetworkPolicy created first, commands and files through the pod exec API, teardown deleting both,
 * lost creates and orphans found by the run-id label, attach by Sandbox name after reading both back.
 * The builder requires the acknowledgement that the cluster's CNI enforces NetworkPolicy. With
 * {@code warmPool(egress, name)} each sandbox is instead a {@code SandboxClaim} against a
 * {@code SandboxWarmPool} (extensions.agents.x-k8s.io/v1beta1), after the pool's {@code SandboxTemplate}
 * and its NetworkPolicy were verified against the spec, and the bound Sandbox checked to be the claim's
 * alone and to run that template; teardown deletes the claim and its Sandbox; attach by claim name.
 * API server statuses map as the REST adapters' do (401/403 authentication, 404 not found, 429 rate
 * limit), an exec refused at its WebSocket upgrade included (fabric8 gives that one no code of its own).
 */
package dev.sandbox4j.kubernetes;
