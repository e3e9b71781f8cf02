package dev.sandbox4j.kubernetes.internal;

import dev.sandbox4j.api.SandboxSpec;
import dev.sandbox4j.spi.CreateRequest;
import dev.sandbox4j.policy.Capabilities;
import dev.sandbox4j.policy.Cidr;
import dev.sandbox4j.policy.EgressPolicy;
import dev.sandbox4j.policy.Limits;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * The translation of a {@link CreateRequest} into the two objects one create sends: the NetworkPolicy
 * (first, so no pod of the run exists without it) and the {@code Sandbox} with its pod template. Pure:
 * no call is made here, so every refusal comes before any request.
 *
 * <p>Egress as a NetworkPolicy selecting the sandbox's pod by its run-id label, with both policy types
 * (nothing may connect in): deny-all is no egress rule; allow-all one empty rule; default-deny with
 * allowed CIDRs one {@code ipBlock} per CIDR; default-allow with denied CIDRs {@code 0.0.0.0/0} and
 * {@code ::/0} with the denied CIDRs as {@code except}. DNS is opened only with allow-all: no rule names
 * a domain (domains need a proxy this runner does not have), so code addresses by IP. A CNI that does
 * not enforce NetworkPolicy ignores all of it, which the runner cannot see: the builder requires the
 * caller to acknowledge enforcement.
 */
public final class PodSpecs {
    /** The label on the pod template (and so the pod) the NetworkPolicy selects. */
    public static final String POD_RUN_LABEL = CreateRequest.RUN_ID_LABEL;
    private static final Pattern LABEL_NAME = Pattern.compile("([A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)");
    private static final Pattern LABEL_PREFIX = Pattern.compile("[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?");
    private static final Pattern LABEL_VALUE = Pattern.compile("(([A-Za-z0-9][-A-Za-z0-9_.]{0,61})?[A-Za-z0-9])?");
    private static final Pattern ENV_NAME = Pattern.compile("[-._a-zA-Z][-._a-zA-Z0-9]*");
    /** How long the container's own process outlives the lifetime, so the controller's shutdownTime acts first. */
    static final Duration SLEEP_MARGIN = Duration.ofSeconds(30);

    private PodSpecs() {
    }

    /** The egress forms a NetworkPolicy expresses exactly (no domains, no header rules, no live update). */
    public static Capabilities.Egress[] egress() {
        return new Capabilities.Egress[] {Capabilities.Egress.DENY_ALL, Capabilities.Egress.ALLOW_ALL,
            Capabilities.Egress.DEFAULT_DENY_WITH_RULES, Capabilities.Egress.DEFAULT_ALLOW_WITH_DENIES,
            Capabilities.Egress.ALLOW_CIDRS_IPV4, Capabilities.Egress.ALLOW_CIDRS_IPV6, Capabilities.Egress.DENY_CIDRS_IPV4,
            Capabilities.Egress.DENY_CIDRS_IPV6};
    }

    /**
     * Rules the capabilities alone do not catch: an {@code except} must lie strictly inside its
     * {@code ipBlock}, so a denied {@code /0} cannot be written (it would be refused by the API server or,
     * worse, read differently by a CNI).
     */
    public static List<String> extraViolations(EgressPolicy egress, Limits limits) {
        List<String> v = new ArrayList<>();
        for (Cidr c : egress.deniedCidrs()) {
            if (c.prefixLength() == 0) {
                v.add("denied CIDR " + c + " (a NetworkPolicy except must lie inside its ipBlock: use deny-all)");
            }
        }
        return v;
    }

    /** The Sandbox's name (and so its pod's) for a run id. */
    public static String name(String runId) {
        return "sandbox4j-" + runId;
    }

    /** The NetworkPolicy's name for a run id. */
    public static String policyName(String runId) {
        return "sandbox4j-" + runId;
    }

    /** The NetworkPolicy for the run's pod: ingress denied, egress as {@code egress}. */
    public static Map<String, Object> networkPolicy(String namespace, String runId, Map<String, String> labels,
            EgressPolicy egress) {
        Map<String, Object> spec = new LinkedHashMap<>();
        spec.put("podSelector", Map.of("matchLabels", Map.of(POD_RUN_LABEL, runId)));
        spec.put("policyTypes", List.of("Ingress", "Egress"));
        spec.put("ingress", List.of());
        spec.put("egress", egressRules(egress));
        Map<String, Object> np = new LinkedHashMap<>();
        np.put("apiVersion", "networking.k8s.io/v1");
        np.put("kind", "NetworkPolicy");
        np.put("metadata", metadata(policyName(runId), namespace, labels));
        np.put("spec", spec);
        return np;
    }

    static List<Object> egressRules(EgressPolicy egress) {
        if (!egress.headerRules().isEmpty() || !egress.allowedDomains().isEmpty()) {
            // the capabilities refuse these before any call; never translate them into something weaker
            throw new IllegalStateException("domains and header rules cannot be a NetworkPolicy");
        }
        if (egress.isDenyAll()) {
            return List.of();
        }
        if (egress.isAllowAll()) {
            return List.of(Map.of()); // one empty rule: every destination, every port (DNS included)
        }
        List<Object> to = new ArrayList<>();
        if (egress.defaultAction() == EgressPolicy.Default.DENY) {
            // denied CIDRs add nothing under default-deny: one overlapping an allowed CIDR is refused by the
            // capabilities (DENY_INSIDE_ALLOWED_CIDR is not declared), the others are denied anyway
            for (Cidr c : egress.allowedCidrs()) {
                to.add(Map.of("ipBlock", Map.of("cidr", c.toString())));
            }
            if (to.isEmpty()) {
                return List.of(); // never a rule with an empty "to": that would allow every destination
            }
        } else {
            for (int version : new int[] {4, 6}) {
                List<String> except = new ArrayList<>();
                for (Cidr c : egress.deniedCidrs()) {
                    if (c.version() == version) {
                        except.add(c.toString());
                    }
                }
                Map<String, Object> block = new LinkedHashMap<>();
                block.put("cidr", version == 4 ? "0.0.0.0/0" : "::/0");
                if (!except.isEmpty()) {
                    block.put("except", except);
                }
                to.add(Map.of("ipBlock", block));
            }
        }
        return List.of(Map.of("to", to));
    }

    /**
     * The Sandbox: one pod locked down (non-root, no privilege escalation, read-only root, every
     * capability dropped, RuntimeDefault seccomp, no service-account token, no service links), limits
     * as resources with requests equal to limits, the lifetime as {@code shutdownTime} with
     * {@code shutdownPolicy: Delete}, and the container's own process ending shortly after.
     */
    public static Map<String, Object> sandbox(KubernetesSettings s, CreateRequest request, Instant now) {
        long sleep = request.lifetime().plus(SLEEP_MARGIN).toSeconds();
        Map<String, Object> podSpec = podSpec(s, request.spec(), List.of("sleep", Long.toString(sleep)));
        Map<String, Object> sandboxSpec = new LinkedHashMap<>();
        sandboxSpec.put("podTemplate", Map.of("metadata", Map.of("labels", Map.of(POD_RUN_LABEL, request.runId())),
                "spec", podSpec));
        sandboxSpec.put("service", false);
        sandboxSpec.put("operatingMode", "Running");
        sandboxSpec.put("shutdownTime", shutdownTime(now, request.lifetime()));
        sandboxSpec.put("shutdownPolicy", "Delete");

        Map<String, Object> sb = new LinkedHashMap<>();
        sb.put("apiVersion", AgentSandbox.API_VERSION);
        sb.put("kind", AgentSandbox.KIND);
        sb.put("metadata", metadata(name(request.runId()), s.namespace(), request.labels()));
        sb.put("spec", sandboxSpec);
        return sb;
    }

    /**
     * The pod spec a SandboxTemplate must carry for sandboxes of {@code spec} to be locked down as this
     * runner's own: the same as a Sandbox's, except that the container's own process is
     * {@code sleep infinity} (a warm pod waits for a claim of unknown lifetime; the claim's
     * {@code shutdownTime} ends it).
     */
    public static Map<String, Object> templatePodSpec(KubernetesSettings s, SandboxSpec spec) {
        return podSpec(s, spec, TEMPLATE_COMMAND);
    }

    /** The container command of a template's pod. */
    static final List<String> TEMPLATE_COMMAND = List.of("sleep", "infinity");

    /**
     * The NetworkPolicy spec the extensions controller derives from a template whose {@code networkPolicy}
     * is {@link #templateNetworkPolicy(EgressPolicy)}: pods selected by the template-ref hash, both types.
     */
    public static Map<String, Object> templatePolicySpec(String templateName, EgressPolicy egress) {
        Map<String, Object> spec = new LinkedHashMap<>();
        spec.put("podSelector", Map.of("matchLabels", Map.of(AgentSandbox.TEMPLATE_REF_HASH_LABEL, AgentSandbox.nameHash(templateName))));
        spec.put("policyTypes", List.of("Ingress", "Egress"));
        spec.put("ingress", List.of());
        spec.put("egress", egressRules(egress));
        return spec;
    }

    /** A template's {@code networkPolicy}: no ingress, egress as {@code egress}. */
    public static Map<String, Object> templateNetworkPolicy(EgressPolicy egress) {
        Map<String, Object> np = new LinkedHashMap<>();
        np.put("ingress", List.of());
        np.put("egress", egressRules(egress));
        return np;
    }

    /** The SandboxTemplate this runner accepts for sandboxes of {@code spec} (to apply to the cluster). */
    public static Map<String, Object> sandboxTemplate(KubernetesSettings s, String name, SandboxSpec spec) {
        Map<String, Object> tspec = new LinkedHashMap<>();
        tspec.put("podTemplate", Map.of("metadata", Map.of("labels", Map.of()), "spec", templatePodSpec(s, spec)));
        tspec.put("networkPolicyManagement", "Managed");
        tspec.put("networkPolicy", templateNetworkPolicy(spec.egress()));
        tspec.put("envVarsInjectionPolicy", "Disallowed");
        Map<String, Object> t = new LinkedHashMap<>();
        t.put("apiVersion", AgentSandbox.EXTENSIONS_API_VERSION);
        t.put("kind", "SandboxTemplate");
        t.put("metadata", metadata(name, s.namespace(), Map.of()));
        t.put("spec", tspec);
        return t;
    }

    /**
     * A SandboxClaim against the warm pool {@code pool}: named and labelled as a Sandbox of the run would
     * be, its lifetime as {@code lifecycle.shutdownTime} with {@code shutdownPolicy: Delete} (the claim
     * controller deletes the claim, and with it the Sandbox, at that time).
     */
    public static Map<String, Object> claim(KubernetesSettings s, CreateRequest request, String pool, Instant now) {
        Map<String, Object> spec = new LinkedHashMap<>();
        spec.put("warmPoolRef", Map.of("name", pool));
        spec.put("lifecycle", Map.of("shutdownTime", shutdownTime(now, request.lifetime()), "shutdownPolicy", "Delete"));
        Map<String, Object> c = new LinkedHashMap<>();
        c.put("apiVersion", AgentSandbox.EXTENSIONS_API_VERSION);
        c.put("kind", AgentSandbox.CLAIM_KIND);
        c.put("metadata", metadata(name(request.runId()), s.namespace(), request.labels()));
        c.put("spec", spec);
        return c;
    }

    private static Map<String, Object> podSpec(KubernetesSettings s, SandboxSpec spec, List<String> command) {
        Limits limits = spec.limits();
        long memory = limits.memoryMib().isPresent() ? limits.memoryMib().getAsInt() : s.memoryMib();
        long disk = s.diskMib(); // a backstop by eviction, not a declared limit (Limits.diskMib is refused)
        String cpu = limits.vcpus().isPresent() ? Integer.toString(limits.vcpus().getAsInt()) : s.cpu();
        Map<String, Object> resources = new LinkedHashMap<>();
        resources.put("cpu", cpu);
        resources.put("memory", memory + "Mi");
        resources.put("ephemeral-storage", disk + "Mi");

        Map<String, Object> containerSecurity = new LinkedHashMap<>();
        containerSecurity.put("runAsNonRoot", true);
        containerSecurity.put("runAsUser", s.uid());
        containerSecurity.put("runAsGroup", s.gid());
        containerSecurity.put("allowPrivilegeEscalation", false);
        containerSecurity.put("privileged", false);
        containerSecurity.put("readOnlyRootFilesystem", true);
        containerSecurity.put("capabilities", Map.of("drop", List.of("ALL")));
        containerSecurity.put("seccompProfile", Map.of("type", "RuntimeDefault"));

        List<Object> env = new ArrayList<>();
        for (Map.Entry<String, String> e : spec.env().entrySet()) {
            if (!ENV_NAME.matcher(e.getKey()).matches()) {
                throw new IllegalArgumentException("environment variable name '" + e.getKey() + "' is not valid in a pod");
            }
            if (e.getValue().indexOf('\0') >= 0) {
                throw new IllegalArgumentException("environment variable " + e.getKey() + " contains a NUL character");
            }
            env.add(Map.of("name", e.getKey(), "value", e.getValue()));
        }
        env.add(Map.of("name", "HOME", "value", s.workDir()));

        Map<String, Object> container = new LinkedHashMap<>();
        container.put("name", KubernetesSettings.CONTAINER);
        container.put("image", s.image());
        container.put("imagePullPolicy", "IfNotPresent");
        // PID 1 of the container: `kill -KILL -1` from the code's uid spares it, so the pod survives a kill
        container.put("command", command);
        container.put("workingDir", s.workDir());
        container.put("env", env);
        container.put("resources", Map.of("limits", resources, "requests", resources));
        container.put("securityContext", containerSecurity);
        container.put("volumeMounts", List.of(Map.of("name", "work", "mountPath", s.workDir()),
                Map.of("name", "tmp", "mountPath", "/tmp")));

        Map<String, Object> podSecurity = new LinkedHashMap<>();
        podSecurity.put("runAsNonRoot", true);
        podSecurity.put("runAsUser", s.uid());
        podSecurity.put("runAsGroup", s.gid());
        podSecurity.put("fsGroup", s.gid());
        podSecurity.put("seccompProfile", Map.of("type", "RuntimeDefault"));

        Map<String, Object> podSpec = new LinkedHashMap<>();
        podSpec.put("automountServiceAccountToken", false);
        podSpec.put("enableServiceLinks", false);
        podSpec.put("hostNetwork", false);
        podSpec.put("hostPID", false);
        podSpec.put("hostIPC", false);
        podSpec.put("restartPolicy", "Never");
        if (s.runtimeClassName() != null) {
            podSpec.put("runtimeClassName", s.runtimeClassName());
        }
        podSpec.put("securityContext", podSecurity);
        podSpec.put("containers", List.of(container));
        // work directory and /tmp share the disk bound (emptyDir sizeLimit; the kubelet evicts past it)
        podSpec.put("volumes", List.of(
                Map.of("name", "work", "emptyDir", Map.of("sizeLimit", disk + "Mi")),
                Map.of("name", "tmp", "emptyDir", Map.of("sizeLimit", disk + "Mi"))));
        return podSpec;
    }

    /** RFC 3339 in whole seconds, rounded up: the cluster's clock never ends the sandbox before the lifetime. */
    static String shutdownTime(Instant now, Duration lifetime) {
        Instant end = now.plus(lifetime);
        Instant whole = end.truncatedTo(ChronoUnit.SECONDS);
        return (whole.equals(end) ? whole : whole.plusSeconds(1)).toString();
    }

    private static Map<String, Object> metadata(String name, String namespace, Map<String, String> labels) {
        for (Map.Entry<String, String> e : labels.entrySet()) {
            checkLabel(e.getKey(), e.getValue());
        }
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("name", name);
        m.put("namespace", namespace);
        m.put("labels", new LinkedHashMap<>(labels));
        return m;
    }

    /** Kubernetes label syntax; anything else is refused before any call rather than sent and rejected. */
    static void checkLabel(String key, String value) {
        String name = key;
        int slash = key.indexOf('/');
        if (slash >= 0) {
            String prefix = key.substring(0, slash);
            name = key.substring(slash + 1);
            if (!LABEL_PREFIX.matcher(prefix).matches()) {
                throw new IllegalArgumentException("label key '" + key + "' has a prefix Kubernetes refuses");
            }
        }
        if (!LABEL_NAME.matcher(name).matches()) {
            throw new IllegalArgumentException("label key '" + key + "' is not a Kubernetes label name");
        }
        if (!LABEL_VALUE.matcher(value).matches()) {
            throw new IllegalArgumentException("label " + key + " has a value Kubernetes refuses (63 characters at most,"
                    + " letters, digits, '-', '_', '.', alphanumeric at both ends)");
        }
    }
}
