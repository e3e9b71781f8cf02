package dev.sandbox4j.kubernetes.internal;

import dev.sandbox4j.spi.SandboxHandle;

/** One sandbox: its Sandbox and NetworkPolicy (both named after the run id) and the pod to exec in. */
public final class KubernetesHandle implements SandboxHandle {
    private final String name;
    private final String runId;
    private volatile String podName;
    private volatile String goneReason;
    private final boolean claim;
    private volatile String sandboxName;

    KubernetesHandle(String name, String runId, String podName) {
        this(name, runId, podName, false);
    }

    KubernetesHandle(String name, String runId, String podName, boolean claim) {
        this.name = name;
        this.runId = runId;
        this.podName = podName;
        this.claim = claim;
        this.sandboxName = claim ? null : name;
    }

    /** Whether {@link #id()} names a SandboxClaim (whose Sandbox is {@link #sandboxName()}). */
    public boolean claim() {
        return claim;
    }

    /** The Sandbox: the handle's own name, or the one a claim is bound to (null until known). */
    public String sandboxName() {
        return sandboxName;
    }

    void sandboxName(String name) {
        this.sandboxName = name;
    }

    /** The Sandbox's (or the SandboxClaim's) name, {@code sandbox4j-<run id>}. */
    @Override
    public String id() {
        return name;
    }

    public String runId() {
        return runId;
    }

    /** The pod's name: the Sandbox's, unless it adopted a warm pool pod. */
    public String podName() {
        return podName;
    }

    void podName(String podName) {
        this.podName = podName;
    }

    void gone(String reason) {
        if (goneReason == null) {
            goneReason = reason;
        }
    }

    /** Why the sandbox cannot take commands any more, or null while it can. */
    public String goneReason() {
        return goneReason;
    }

    @Override
    public String toString() {
        return "KubernetesHandle[" + name + "]";
    }
}
