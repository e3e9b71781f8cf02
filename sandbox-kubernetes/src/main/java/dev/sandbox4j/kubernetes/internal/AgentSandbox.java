package dev.sandbox4j.kubernetes.internal;

/**
 * Facts of kubernetes-sigs/agent-sandbox as of its v0.5.6 release (read from its CRDs and controller):
 * the API group and version it serves and stores, the resource names, and the status it reports.
 */
public final class AgentSandbox {
    /** The core group: {@code Sandbox}. */
    public static final String GROUP = "agents.x-k8s.io";
    /** The extensions group: {@code SandboxTemplate}, {@code SandboxClaim}, {@code SandboxWarmPool}. */
    public static final String EXTENSIONS_GROUP = "extensions.agents.x-k8s.io";
    /** Served and the storage version in v0.5.x; v1alpha1 is still served but deprecated. */
    public static final String VERSION = "v1beta1";
    public static final String API_VERSION = GROUP + "/" + VERSION;
    public static final String KIND = "Sandbox";
    public static final String PLURAL = "sandboxes";
    /** The Ready condition: True only once the pod runs, is Ready and has an IP (reason {@code DependenciesReady}). */
    public static final String READY = "Ready";
    /** Ready=False reasons after which the sandbox will not become ready. */
    public static final java.util.Set<String> TERMINAL_REASONS = java.util.Set.of("PodSucceeded", "PodFailed", "SandboxExpired",
            "SandboxSuspended", "MultiplePods");
    /** Set when the Sandbox adopted a warm pool pod: the pod's name then differs from the Sandbox's. */
    public static final String POD_NAME_ANNOTATION = "agents.x-k8s.io/pod-name";

    private AgentSandbox() {
    }
}
