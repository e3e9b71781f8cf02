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

    public static final String EXTENSIONS_API_VERSION = EXTENSIONS_GROUP + "/" + VERSION;
    public static final String CLAIM_KIND = "SandboxClaim";
    public static final String CLAIMS = "sandboxclaims";
    public static final String TEMPLATES = "sandboxtemplates";
    public static final String WARM_POOLS = "sandboxwarmpools";
    /** The template-ref hash the extensions controller puts on every pod of a template; its NetworkPolicy selects it. */
    public static final String TEMPLATE_REF_HASH_LABEL = "agents.x-k8s.io/sandbox-template-ref-hash";
    /** The label of a Sandbox still in a warm pool (removed when a claim adopts it). */
    public static final String WARM_POOL_LABEL = "agents.x-k8s.io/warm-pool-sandbox";
    /** Ready=False reasons of a claim after which it will not become ready. */
    public static final java.util.Set<String> CLAIM_TERMINAL_REASONS = java.util.Set.of("WarmPoolNotFound", "TemplateNotFound",
            "EnvVarsInjectionRejected", "InvalidMetadata", "ClaimExpired", "VolumeClaimTemplatesError", "SandboxExpired",
            "PodSucceeded", "PodFailed", "SandboxSuspended", "MultiplePods");

    /** agent-sandbox's NameHash: FNV-1a (32 bit) of the name as 8 lower-case hex digits. */
    public static String nameHash(String name) {
        int h = 0x811c9dc5;
        for (byte b : name.getBytes(java.nio.charset.StandardCharsets.UTF_8)) {
            h ^= b & 0xff;
            h *= 0x01000193;
        }
        return String.format("%08x", h);
    }

    private AgentSandbox() {
    }
}
