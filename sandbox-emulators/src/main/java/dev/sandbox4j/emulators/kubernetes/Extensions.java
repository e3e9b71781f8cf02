package dev.sandbox4j.emulators.kubernetes;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.security.SecureRandom;
import java.time.Duration;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The agent-sandbox extensions controller (v0.5.6, {@code extensions.agents.x-k8s.io/v1beta1}) as the
 * emulator runs it: one level-triggered pass at a time on one thread (so two claims never adopt the
 * same Sandbox, which the real controller ensures with an optimistic lock), after every change.
 *
 * <ul>
 *   <li>SandboxTemplate: labelled {@code agents.x-k8s.io/sandbox-template-ref-hash}; unless
 *       {@code networkPolicyManagement: Unmanaged}, one NetworkPolicy {@code <template>-network-policy}
 *       owned by it, selecting that label, both policy types, with the template's ingress and egress
 *       rules, or the controller's secure default when the template has none (ingress from the router,
 *       egress to public IPv4/IPv6 ranges only).</li>
 *   <li>SandboxWarmPool: keeps {@code spec.replicas} (default 1) Sandboxes named {@code <pool>-xxxxx},
 *       owned by the pool, labelled {@code agents.x-k8s.io/warm-pool-sandbox} (the pool name's hash),
 *       {@code launch-type: warm}, {@code created-by: controller}, the template-ref hash, with the
 *       template's blueprint and the controller's secure defaults; status {@code replicas},
 *       {@code readyReplicas}, {@code selector}, {@code observedGeneration}.</li>
 *   <li>SandboxClaim ({@code spec.warmPoolRef}): adopts a Ready Sandbox of the pool (the pool labels
 *       removed, ownership moved to the claim, {@code agents.x-k8s.io/pod-name} set, the claim's
 *       {@code claim-uid} label added), else creates a Sandbox named after the claim from the pool's
 *       template ({@code launch-type: cold}); the claim gets the {@code agents.x-k8s.io/sandbox-name}
 *       annotation, {@code status.sandbox.name} and {@code podIPs}, and the Sandbox's Ready condition
 *       mirrored (or {@code WarmPoolNotFound}, {@code TemplateNotFound}, {@code EnvVarsInjectionRejected},
 *       {@code SandboxNotReady}, {@code SandboxMissing}). At {@code lifecycle.shutdownTime} the claim is
 *       deleted ({@code Delete}, {@code DeleteForeground}) or its Sandbox deleted and Ready False
 *       {@code ClaimExpired} ({@code Retain}). Deleting a claim, a pool or a template deletes what it owns.</li>
 * </ul>
 *
 * <p>Not emulated: a claim's {@code env} injection (refused under {@code Disallowed}, otherwise ignored),
 * {@code additionalPodMetadata}, volume claim templates, update strategies (a changed template leaves the
 * pool's Sandboxes as they are, which is {@code OnReplenish}), and the re-creation of a claimed Sandbox
 * deleted by someone else (here the claim reports {@code SandboxMissing}).
 */
final class Extensions {
    private static final Logger log = LoggerFactory.getLogger(Extensions.class);
    static final String API_VERSION = "extensions.agents.x-k8s.io/v1beta1";
    static final String TEMPLATE_REF_HASH = "agents.x-k8s.io/sandbox-template-ref-hash";
    static final String WARM_POOL_LABEL = "agents.x-k8s.io/warm-pool-sandbox";
    static final String TEMPLATE_HASH = "agents.x-k8s.io/sandbox-template-hash";
    static final String LAUNCH_TYPE = "agents.x-k8s.io/launch-type";
    static final String CREATED_BY = "agents.x-k8s.io/created-by";
    static final String CLAIM_UID = "agents.x-k8s.io/claim-uid";
    static final String POD_NAME = "agents.x-k8s.io/pod-name";
    static final String TEMPLATE_REF = "agents.x-k8s.io/sandbox-template-ref";
    static final String SANDBOX_NAME = "agents.x-k8s.io/sandbox-name";
    private static final String ALPHABET = "bcdfghjklmnpqrstvwxz2456789";
    private static final SecureRandom RANDOM = new SecureRandom();

    private final AgentSandboxEmulator e;
    private final ExecutorService loop = Executors.newSingleThreadExecutor(r -> {
        Thread t = new Thread(r, "agent-sandbox-emulator-extensions");
        t.setDaemon(true);
        return t;
    });
    private final AtomicBoolean pending = new AtomicBoolean();
    /** Claim uids whose shutdownTime is scheduled. */
    private final Set<String> scheduled = new HashSet<>();

    Extensions(AgentSandboxEmulator e) {
        this.e = e;
    }

    /** Schedules one pass (passes asked for while one waits are folded into it). */
    void kick() {
        if (pending.compareAndSet(false, true)) {
            try {
                loop.execute(() -> {
                    pending.set(false);
                    try {
                        pass();
                    } catch (RuntimeException ex) {
                        log.warn("extensions controller pass failed", ex);
                    }
                });
            } catch (java.util.concurrent.RejectedExecutionException closed) {
                pending.set(false);
            }
        }
    }

    void close() {
        loop.shutdownNow();
    }

    /** The CRDs' schema checks (required fields, enums, formats). */
    static String invalid(String resource, ObjectNode o) {
        JsonNode spec = o.path("spec");
        switch (resource) {
            case "sandboxtemplates": {
                JsonNode containers = spec.path("podTemplate").path("spec").path("containers");
                if (!containers.isArray() || containers.isEmpty()) {
                    return "spec.podTemplate.spec.containers: Required value";
                }
                String m = spec.path("networkPolicyManagement").asText("Managed");
                if (!m.equals("Managed") && !m.equals("Unmanaged")) {
                    return "spec.networkPolicyManagement: Unsupported value: \"" + m + "\"";
                }
                String env = spec.path("envVarsInjectionPolicy").asText("Disallowed");
                if (!Set.of("Allowed", "Overrides", "Disallowed").contains(env)) {
                    return "spec.envVarsInjectionPolicy: Unsupported value: \"" + env + "\"";
                }
                return null;
            }
            case "sandboxwarmpools": {
                if (spec.path("sandboxTemplateRef").path("name").asText("").isEmpty()) {
                    return "spec.sandboxTemplateRef.name: Required value";
                }
                if (spec.has("replicas") && (!spec.get("replicas").canConvertToInt() || spec.get("replicas").asInt() < 0)) {
                    return "spec.replicas: Invalid value: must be greater than or equal to 0";
                }
                return null;
            }
            case "sandboxclaims": {
                if (spec.path("warmPoolRef").path("name").asText("").isEmpty()) {
                    return "spec.warmPoolRef.name: Required value";
                }
                JsonNode lc = spec.path("lifecycle");
                String policy = lc.path("shutdownPolicy").asText("Retain");
                if (!Set.of("Delete", "DeleteForeground", "Retain").contains(policy)) {
                    return "spec.lifecycle.shutdownPolicy: Unsupported value: \"" + policy + "\"";
                }
                if (lc.has("shutdownTime")) {
                    try {
                        Instant.parse(lc.get("shutdownTime").asText());
                    } catch (DateTimeParseException ex) {
                        return "spec.lifecycle.shutdownTime: Invalid value: must be a date-time";
                    }
                }
                return null;
            }
            default:
                return null;
        }
    }

    /** One reconcile of every template, pool and claim; pods are started after it, off the lock. */
    private void pass() {
        List<String[]> starts = new ArrayList<>();
        List<String[]> stops = new ArrayList<>();
        boolean again = false;
        synchronized (e) {
            for (String key : keys("sandboxtemplates/")) {
                reconcileTemplate(key);
            }
            for (String key : keys("sandboxwarmpools/")) {
                reconcilePool(key, starts, stops);
            }
            for (String key : keys("sandboxclaims/")) {
                again |= reconcileClaim(key, starts);
            }
        }
        for (String[] s : stops) {
            e.stopPod(s[0], s[1]);
        }
        for (String[] s : starts) {
            e.startPod(s[0], s[1]);
        }
        if (again) {
            kick(); // an adoption left the pool short: replenish
        }
    }

    private List<String> keys(String prefix) {
        List<String> out = new ArrayList<>();
        for (String k : e.store.keySet()) {
            if (k.startsWith(prefix)) {
                out.add(k);
            }
        }
        return out;
    }

    private static String ns(String key) {
        return key.split("/")[1];
    }

    private static String uid(JsonNode o) {
        return o.path("metadata").path("uid").asText();
    }

    private void bump(ObjectNode o) {
        ((ObjectNode) o.get("metadata")).put("resourceVersion", Long.toString(e.nextResourceVersion()));
    }

    static boolean ownedBy(JsonNode o, String uid) {
        for (JsonNode ref : o.path("metadata").path("ownerReferences")) {
            if (ref.path("uid").asText().equals(uid) && ref.path("controller").asBoolean(false)) {
                return true;
            }
        }
        return false;
    }

    private static ObjectNode ownerRef(JsonNode owner, String kind) {
        ObjectNode ref = AgentSandboxEmulator.JSON.createObjectNode();
        ref.put("apiVersion", API_VERSION).put("kind", kind).put("name", owner.path("metadata").path("name").asText())
                .put("uid", uid(owner)).put("controller", true).put("blockOwnerDeletion", true);
        return ref;
    }

    private static ObjectNode labels(ObjectNode meta) {
        JsonNode l = meta.get("labels");
        if (l instanceof ObjectNode o) {
            return o;
        }
        return meta.putObject("labels");
    }

    // ---- templates

    private void reconcileTemplate(String key) {
        ObjectNode t = e.store.get(key);
        String ns = ns(key);
        String name = t.path("metadata").path("name").asText();
        String hash = AgentSandboxEmulator.nameHash(name);
        ObjectNode tl = labels((ObjectNode) t.get("metadata"));
        if (!hash.equals(tl.path(TEMPLATE_REF_HASH).asText())) {
            tl.put(TEMPLATE_REF_HASH, hash);
            bump(t);
        }
        String npKey = "networkpolicies/" + ns + "/" + name + "-network-policy";
        ObjectNode existing = e.store.get(npKey);
        JsonNode spec = t.path("spec");
        if (spec.path("networkPolicyManagement").asText("Managed").equals("Unmanaged")) {
            if (existing != null && ownedBy(existing, uid(t))) {
                e.store.remove(npKey);
            }
            return;
        }
        ObjectNode desired = AgentSandboxEmulator.JSON.createObjectNode();
        desired.putObject("podSelector").putObject("matchLabels").put(TEMPLATE_REF_HASH, hash);
        desired.putArray("policyTypes").add("Ingress").add("Egress");
        if (spec.has("networkPolicy") && !spec.get("networkPolicy").isNull()) {
            JsonNode np = spec.get("networkPolicy");
            desired.set("ingress", np.has("ingress") ? np.get("ingress").deepCopy() : AgentSandboxEmulator.JSON.createArrayNode());
            desired.set("egress", np.has("egress") ? np.get("egress").deepCopy() : AgentSandboxEmulator.JSON.createArrayNode());
        } else {
            secureDefault(desired);
        }
        if (existing == null) {
            ObjectNode np = AgentSandboxEmulator.JSON.createObjectNode();
            np.put("apiVersion", "networking.k8s.io/v1").put("kind", "NetworkPolicy");
            ObjectNode meta = np.putObject("metadata");
            meta.put("name", name + "-network-policy").put("namespace", ns).put("uid", UUID.randomUUID().toString())
                    .put("creationTimestamp", Instant.now().truncatedTo(ChronoUnit.SECONDS).toString()).put("generation", 1);
            meta.putArray("ownerReferences").add(ownerRef(t, "SandboxTemplate"));
            np.set("spec", desired);
            bump(np);
            e.store.put(npKey, np);
        } else if (ownedBy(existing, uid(t)) && !existing.path("spec").equals(desired)) {
            existing.set("spec", desired); // drift is put back, as the controller's Update does
            bump(existing);
        }
    }

    /** buildDefaultNetworkPolicySpec: ingress from the sandbox router only, egress to public addresses only. */
    private static void secureDefault(ObjectNode spec) {
        ObjectNode from = spec.putArray("ingress").addObject().putArray("from").addObject();
        from.putObject("namespaceSelector").putObject("matchLabels").put("kubernetes.io/metadata.name", "agent-sandbox-system");
        from.putObject("podSelector").putObject("matchLabels").put("app", "sandbox-router");
        ArrayNode to = spec.putArray("egress").addObject().putArray("to");
        ObjectNode v4 = to.addObject().putObject("ipBlock").put("cidr", "0.0.0.0/0");
        v4.putArray("except").add("10.0.0.0/8").add("172.16.0.0/12").add("192.168.0.0/16").add("169.254.0.0/16");
        ObjectNode v6 = to.addObject().putObject("ipBlock").put("cidr", "::/0");
        v6.putArray("except").add("fc00::/7").add("fe80::/10");
    }

    /** A Sandbox from the template's blueprint, with ApplySandboxSecureDefaults on its pod spec. */
    private ObjectNode fromTemplate(JsonNode template, String ns, String name) {
        ObjectNode sb = AgentSandboxEmulator.JSON.createObjectNode();
        sb.put("apiVersion", "agents.x-k8s.io/v1beta1").put("kind", "Sandbox");
        ObjectNode meta = sb.putObject("metadata");
        meta.put("name", name).put("namespace", ns).put("uid", UUID.randomUUID().toString())
                .put("creationTimestamp", Instant.now().truncatedTo(ChronoUnit.SECONDS).toString()).put("generation", 1);
        meta.putObject("annotations").put(TEMPLATE_REF, template.path("metadata").path("name").asText());
        ObjectNode spec = template.path("spec").deepCopy();
        for (String extensionOnly : List.of("networkPolicy", "networkPolicyManagement", "envVarsInjectionPolicy",
                "volumeClaimTemplatesPolicy")) {
            spec.remove(extensionOnly);
        }
        ObjectNode podTemplate = spec.get("podTemplate") instanceof ObjectNode p ? p : spec.putObject("podTemplate");
        ObjectNode podMeta = podTemplate.get("metadata") instanceof ObjectNode m ? m : podTemplate.putObject("metadata");
        labels(podMeta).put(TEMPLATE_REF_HASH, AgentSandboxEmulator.nameHash(template.path("metadata").path("name").asText()));
        ObjectNode podSpec = (ObjectNode) podTemplate.get("spec");
        if (!podSpec.has("automountServiceAccountToken")) {
            podSpec.put("automountServiceAccountToken", false);
        }
        JsonNode tspec = template.path("spec");
        boolean secureByDefault = tspec.path("networkPolicyManagement").asText("Managed").equals("Managed")
                && (!tspec.has("networkPolicy") || tspec.get("networkPolicy").isNull());
        if (secureByDefault && !podSpec.has("dnsPolicy")) {
            podSpec.put("dnsPolicy", "None");
            podSpec.putObject("dnsConfig").putArray("nameservers").add("8.8.8.8").add("1.1.1.1");
        }
        sb.set("spec", spec);
        bump(sb);
        return sb;
    }

    // ---- warm pools

    private void reconcilePool(String key, List<String[]> starts, List<String[]> stops) {
        ObjectNode pool = e.store.get(key);
        String ns = ns(key);
        String name = pool.path("metadata").path("name").asText();
        String poolHash = AgentSandboxEmulator.nameHash(name);
        String templateName = pool.path("spec").path("sandboxTemplateRef").path("name").asText();
        ObjectNode template = e.store.get("sandboxtemplates/" + ns + "/" + templateName);
        List<String> members = new ArrayList<>();
        int ready = 0;
        for (Map.Entry<String, ObjectNode> en : e.store.entrySet()) {
            if (en.getKey().startsWith("sandboxes/" + ns + "/") && ownedBy(en.getValue(), uid(pool))) {
                members.add(en.getValue().path("metadata").path("name").asText());
                ready += ready(en.getValue()) ? 1 : 0;
            }
        }
        int desired = pool.path("spec").path("replicas").asInt(1);
        if (template != null) {
            for (int i = members.size(); i < desired; i++) {
                String sbName = name + "-" + suffix();
                ObjectNode sb = fromTemplate(template, ns, sbName);
                ObjectNode meta = (ObjectNode) sb.get("metadata");
                labels(meta).put(WARM_POOL_LABEL, poolHash).put(TEMPLATE_REF_HASH, AgentSandboxEmulator.nameHash(templateName))
                        .put(LAUNCH_TYPE, "warm").put(TEMPLATE_HASH, AgentSandboxEmulator.nameHash(sb.path("spec").toString()))
                        .put(CREATED_BY, "controller");
                meta.putArray("ownerReferences").add(ownerRef(pool, "SandboxWarmPool"));
                labels((ObjectNode) sb.path("spec").path("podTemplate").get("metadata")).put(WARM_POOL_LABEL, poolHash);
                e.store.put("sandboxes/" + ns + "/" + sbName, sb);
                members.add(sbName);
                starts.add(new String[] {ns, sbName});
            }
        }
        for (int i = members.size() - 1; i >= desired; i--) { // scale down: the newest go first
            String gone = members.remove(i);
            if (e.store.get("sandboxes/" + ns + "/" + gone) != null && ready(e.store.get("sandboxes/" + ns + "/" + gone))) {
                ready--;
            }
            e.store.remove("sandboxes/" + ns + "/" + gone);
            stops.add(new String[] {ns, gone});
        }
        ObjectNode status = AgentSandboxEmulator.JSON.createObjectNode();
        status.put("replicas", members.size()).put("readyReplicas", ready).put("selector", WARM_POOL_LABEL + "=" + poolHash)
                .put("observedGeneration", pool.path("metadata").path("generation").asLong(1));
        if (!status.equals(pool.get("status"))) {
            pool.set("status", status);
            bump(pool);
        }
    }

    private static String suffix() {
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < 5; i++) {
            sb.append(ALPHABET.charAt(RANDOM.nextInt(ALPHABET.length())));
        }
        return sb.toString();
    }

    private static JsonNode readyCondition(JsonNode sandbox) {
        for (JsonNode c : sandbox.path("status").path("conditions")) {
            if (c.path("type").asText().equals("Ready")) {
                return c;
            }
        }
        return null;
    }

    private static boolean ready(JsonNode sandbox) {
        JsonNode c = readyCondition(sandbox);
        return c != null && c.path("status").asText().equals("True");
    }

    // ---- claims

    /** @return whether a Sandbox left a pool (a replenishing pass is due) */
    private boolean reconcileClaim(String key, List<String[]> starts) {
        ObjectNode claim = e.store.get(key);
        String ns = ns(key);
        String name = claim.path("metadata").path("name").asText();
        JsonNode spec = claim.path("spec");
        scheduleExpiry(ns, name, claim);
        if (hasCondition(claim, "ClaimExpired")) {
            return false;
        }
        String bound = claim.path("status").path("sandbox").path("name").asText("");
        if (!bound.isEmpty()) {
            ObjectNode sb = e.store.get("sandboxes/" + ns + "/" + bound);
            if (sb == null) {
                setStatus(claim, condition(claim, "False", "SandboxMissing", "Sandbox does not exist"), bound, null);
            } else {
                JsonNode c = readyCondition(sb);
                setStatus(claim, c != null ? c.deepCopy() : condition(claim, "False", "SandboxNotReady", "Sandbox is not ready"),
                        bound, sb.path("status").path("podIPs"));
            }
            return false;
        }
        String poolName = spec.path("warmPoolRef").path("name").asText();
        ObjectNode pool = e.store.get("sandboxwarmpools/" + ns + "/" + poolName);
        if (pool == null) {
            setStatus(claim, condition(claim, "False", "WarmPoolNotFound", "SandboxWarmPool \"" + poolName + "\" not found"), null, null);
            return false;
        }
        String templateName = pool.path("spec").path("sandboxTemplateRef").path("name").asText();
        ObjectNode template = e.store.get("sandboxtemplates/" + ns + "/" + templateName);
        boolean env = spec.path("env").size() > 0;
        if (env && !Set.of("Allowed", "Overrides").contains(template == null ? "" : template.path("spec")
                .path("envVarsInjectionPolicy").asText("Disallowed"))) {
            setStatus(claim, condition(claim, "False", "EnvVarsInjectionRejected", "environment variable injection is not"
                    + " allowed by the template policy"), null, null);
            return false;
        }
        ObjectNode adopted = env ? null : candidate(ns, pool);
        ObjectNode sb;
        if (adopted != null) {
            sb = adopted;
            ObjectNode meta = (ObjectNode) sb.get("metadata");
            ObjectNode l = labels(meta);
            l.remove(WARM_POOL_LABEL);
            l.remove(TEMPLATE_HASH);
            l.put(LAUNCH_TYPE, "warm").put(CLAIM_UID, uid(claim));
            meta.putArray("ownerReferences").add(ownerRef(claim, "SandboxClaim"));
            (meta.get("annotations") instanceof ObjectNode a ? a : meta.putObject("annotations"))
                    .put(POD_NAME, meta.path("name").asText());
            ObjectNode podLabels = labels((ObjectNode) sb.path("spec").path("podTemplate").get("metadata"));
            podLabels.remove(WARM_POOL_LABEL);
            podLabels.put(CLAIM_UID, uid(claim));
            bump(sb);
            ObjectNode pod = e.store.get("pods/" + ns + "/" + meta.path("name").asText());
            if (pod != null) { // the Sandbox controller carries the template's new labels to its pod
                ObjectNode pl = labels((ObjectNode) pod.get("metadata"));
                pl.remove(WARM_POOL_LABEL);
                pl.put(CLAIM_UID, uid(claim));
                bump(pod);
            }
        } else if (template == null) {
            setStatus(claim, condition(claim, "False", "TemplateNotFound", "SandboxTemplate \"" + templateName + "\" not found"),
                    null, null);
            return false;
        } else {
            if (e.store.containsKey("sandboxes/" + ns + "/" + name)) {
                setStatus(claim, condition(claim, "False", "ReconcilerError", "Error seen: sandboxes \"" + name
                        + "\" already exists and is not controlled by this claim"), null, null);
                return false;
            }
            sb = fromTemplate(template, ns, name);
            ObjectNode meta = (ObjectNode) sb.get("metadata");
            labels(meta).put(CLAIM_UID, uid(claim)).put(LAUNCH_TYPE, "cold").put(TEMPLATE_REF_HASH,
                    AgentSandboxEmulator.nameHash(templateName));
            meta.putArray("ownerReferences").add(ownerRef(claim, "SandboxClaim"));
            labels((ObjectNode) sb.path("spec").path("podTemplate").get("metadata")).put(CLAIM_UID, uid(claim));
            e.store.put("sandboxes/" + ns + "/" + name, sb);
            starts.add(new String[] {ns, name});
        }
        String sbName = sb.path("metadata").path("name").asText();
        ObjectNode cmeta = (ObjectNode) claim.get("metadata");
        (cmeta.get("annotations") instanceof ObjectNode a ? a : cmeta.putObject("annotations")).put(SANDBOX_NAME, sbName);
        JsonNode c = readyCondition(sb);
        setStatus(claim, c != null ? c.deepCopy() : condition(claim, "False", "SandboxNotReady", "Sandbox is not ready"), sbName,
                sb.path("status").path("podIPs"));
        return adopted != null;
    }

    /** A Ready Sandbox the pool still owns, oldest first. */
    private ObjectNode candidate(String ns, ObjectNode pool) {
        ObjectNode best = null;
        for (Map.Entry<String, ObjectNode> en : e.store.entrySet()) {
            ObjectNode sb = en.getValue();
            if (en.getKey().startsWith("sandboxes/" + ns + "/") && ownedBy(sb, uid(pool))
                    && sb.path("metadata").path("labels").has(WARM_POOL_LABEL) && ready(sb) && e.podRunning(ns,
                            sb.path("metadata").path("name").asText())) {
                if (best == null || Long.parseLong(sb.path("metadata").path("resourceVersion").asText("0"))
                        < Long.parseLong(best.path("metadata").path("resourceVersion").asText("0"))) {
                    best = sb;
                }
            }
        }
        return best;
    }

    private static boolean hasCondition(JsonNode claim, String reason) {
        for (JsonNode c : claim.path("status").path("conditions")) {
            if (c.path("reason").asText().equals(reason)) {
                return true;
            }
        }
        return false;
    }

    private static ObjectNode condition(JsonNode claim, String status, String reason, String message) {
        ObjectNode c = AgentSandboxEmulator.JSON.createObjectNode();
        c.put("type", "Ready").put("status", status).put("observedGeneration", claim.path("metadata").path("generation").asLong(1))
                .put("lastTransitionTime", Instant.now().truncatedTo(ChronoUnit.SECONDS).toString()).put("reason", reason)
                .put("message", message);
        return c;
    }

    private void setStatus(ObjectNode claim, ObjectNode ready, String sandbox, JsonNode podIPs) {
        ObjectNode status = AgentSandboxEmulator.JSON.createObjectNode();
        JsonNode old = readyCondition(claim);
        if (old != null && old.path("status").equals(ready.path("status")) && old.path("reason").equals(ready.path("reason"))) {
            ready.set("lastTransitionTime", old.get("lastTransitionTime"));
        }
        ready.put("observedGeneration", claim.path("metadata").path("generation").asLong(1));
        status.putArray("conditions").add(ready);
        if (sandbox != null) {
            ObjectNode s = status.putObject("sandbox").put("name", sandbox);
            if (podIPs != null && podIPs.size() > 0) {
                s.set("podIPs", podIPs.deepCopy());
            }
        }
        if (!status.equals(claim.get("status"))) {
            claim.set("status", status);
            bump(claim);
        }
    }

    private void scheduleExpiry(String ns, String name, ObjectNode claim) {
        JsonNode lc = claim.path("spec").path("lifecycle");
        if (!lc.has("shutdownTime") || !scheduled.add(uid(claim))) {
            return;
        }
        String uid = uid(claim);
        long delay = Math.max(0, Duration.between(Instant.now(), Instant.parse(lc.get("shutdownTime").asText())).toMillis());
        String policy = lc.path("shutdownPolicy").asText("Retain");
        e.clock.schedule(() -> expire(ns, name, uid, policy), delay, TimeUnit.MILLISECONDS);
    }

    private void expire(String ns, String name, String uid, String policy) {
        ObjectNode claim;
        synchronized (e) {
            claim = e.store.get("sandboxclaims/" + ns + "/" + name);
            if (claim == null || !uid(claim).equals(uid)) {
                return;
            }
            if (!policy.equals("Retain")) {
                e.store.remove("sandboxclaims/" + ns + "/" + name);
            } else {
                setStatus(claim, condition(claim, "False", "ClaimExpired", "Claim expired. Sandbox cleanup initiated."), null, null);
            }
        }
        e.collectOwnedBy(ns, uid);
        kick();
    }
}
