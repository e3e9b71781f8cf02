package dev.sandbox4j.kubernetes.internal;

import dev.sandbox4j.api.Execution;
import dev.sandbox4j.api.FileEntry;
import dev.sandbox4j.api.InputFile;
import dev.sandbox4j.api.exception.SandboxConfigurationException;
import dev.sandbox4j.api.exception.SandboxException;
import dev.sandbox4j.api.SandboxFile;
import dev.sandbox4j.api.exception.SandboxNotFoundException;
import dev.sandbox4j.api.exception.SandboxRateLimitException;
import dev.sandbox4j.spi.Backoff;
import dev.sandbox4j.spi.CodeCommand;
import dev.sandbox4j.spi.CreateRequest;
import dev.sandbox4j.spi.ExecOutcome;
import dev.sandbox4j.spi.Labelled;
import dev.sandbox4j.spi.ListingScript;
import dev.sandbox4j.spi.OutputSink;
import dev.sandbox4j.spi.SandboxDriver;
import dev.sandbox4j.policy.Capabilities;
import dev.sandbox4j.policy.Language;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.ObjectMeta;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.ExecListener;
import io.fabric8.kubernetes.client.dsl.ExecWatch;
import io.fabric8.kubernetes.client.dsl.MixedOperation;
import io.fabric8.kubernetes.client.dsl.Resource;
import io.fabric8.kubernetes.client.dsl.base.ResourceDefinitionContext;
import java.io.ByteArrayOutputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The agent-sandbox driver. Per sandbox: create the NetworkPolicy, create the {@code Sandbox}, poll it
 * until its Ready condition is True (bounded by the ready timeout, with the driver's {@link Backoff#poll});
 * per command one pod exec (websocket, channel-framed);
 * files through the same exec channel; teardown deletes the Sandbox (the controller deletes its pod)
 * and the NetworkPolicy. A lost create is looked up by the run-id label.
 *
 * <p>The fabric8 client is configured never to retry a request itself (its default retries on 5xx and
 * IO); this driver re-sends what is safe to send again. The NetworkPolicy, the Sandbox and the
 * SandboxClaim have names fixed by the run id, so their creates are idempotent: one the API server
 * answered 500 or 503 is sent again, the same name and body, a bounded number of times
 * ({@link #CREATE_RESENDS}); a 409 AlreadyExists then means an earlier send landed, and the object is
 * read back and adopted when it carries this run's labels (else the create fails, and the object is left
 * alone). One with no readable answer (lost, timed out, garbled, a gateway's 502 or 504) is read back by
 * name, not sent again, since it may still be stored later; found and this run's, it is adopted. Only when the re-sends run out is the create ambiguous, and looked up by the
 * lifecycle. Creating an object runs no code; an exec is never sent again. A failed GET of a Ready poll
 * is read again at the next look; lookups and deletes are retried by the lifecycle.
 */
public final class KubernetesDriver implements SandboxDriver<KubernetesHandle> {
    private static final Logger log = LoggerFactory.getLogger(KubernetesDriver.class);
    public static final String PROVIDER = "kubernetes";
    static final int MAX_LIST_ENTRIES = 10_000;
    private static final int MAX_LIST_BYTES = 4 << 20;
    /**
     * Raw bytes per write exec. The exec's command travels in the URL's query (the API server takes 1 MiB
     * of request line and headers, Go's default): 32 KiB of base64, a little more once URL-encoded.
     */
    private static final int WRITE_CHUNK = 24 * 1024;
    /** The first pause between two reads of a Ready condition (or the ready poll, when shorter). */
    static final Duration READY_FIRST_DELAY = Duration.ofMillis(20);
    private static final ResourceDefinitionContext SANDBOX = new ResourceDefinitionContext.Builder()
            .withGroup(AgentSandbox.GROUP).withVersion(AgentSandbox.VERSION).withKind(AgentSandbox.KIND)
            .withPlural(AgentSandbox.PLURAL).withNamespaced(true).build();
    private static final ResourceDefinitionContext NETWORK_POLICY = new ResourceDefinitionContext.Builder()
            .withGroup("networking.k8s.io").withVersion("v1").withKind("NetworkPolicy")
            .withPlural("networkpolicies").withNamespaced(true).build();

    private static final ResourceDefinitionContext CLAIM = extension(AgentSandbox.CLAIM_KIND, AgentSandbox.CLAIMS);
    private static final ResourceDefinitionContext TEMPLATE = extension("SandboxTemplate", AgentSandbox.TEMPLATES);
    private static final ResourceDefinitionContext WARM_POOL = extension("SandboxWarmPool", AgentSandbox.WARM_POOLS);

    private static ResourceDefinitionContext extension(String kind, String plural) {
        return new ResourceDefinitionContext.Builder().withGroup(AgentSandbox.EXTENSIONS_GROUP).withVersion(AgentSandbox.VERSION)
                .withKind(kind).withPlural(plural).withNamespaced(true).build();
    }

    private final KubernetesSettings settings;
    private final KubernetesClient client;
    private final Capabilities capabilities;
    private final Clock clock;
    /** The clock and sleeps of the driver's Ready polls (real ones outside tests). */
    private final Backoff backoff;
    private final Set<KubernetesHandle> live = ConcurrentHashMap.newKeySet();
    /**
     * Run ids whose Sandbox create was sent and not answered (lost, timed out, interrupted): the Sandbox
     * may still be stored later, so a lookup that finds only the run's NetworkPolicy has not found it.
     * Each maps to when it was put there (the driver's clock); an entry older than {@link #IN_DOUBT_FOR}
     * is dropped at the next create, so a runner that meets many lost creates keeps none for ever. By
     * then every lookup the lifecycle makes for the run is long over (its lost-create window is minutes
     * at most); a later sweep by run id that finds only the policy then removes the policy as a handle.
     */
    private final Map<String, Instant> sandboxCreatesInDoubt = new ConcurrentHashMap<>();
    /** How long a run id stays in doubt after its Sandbox create went unanswered. */
    static final Duration IN_DOUBT_FOR = Duration.ofHours(1);

    /** Run ids in doubt now (for tests). */
    int createsInDoubt() {
        return sandboxCreatesInDoubt.size();
    }

    public KubernetesDriver(KubernetesSettings settings, KubernetesClient client, Clock clock) {
        this(settings, client, clock, Backoff.builder().build());
    }

    /**
     * The same, with the backoff of its create re-sends and re-read GETs (its delays) and of its Ready polls
     * ({@link Backoff#poll}: its clock and sleeper); tests inject fakes, so that no real time passes.
     */
    public KubernetesDriver(KubernetesSettings settings, KubernetesClient client, Clock clock, Backoff backoff) {
        this.settings = settings;
        this.client = client;
        this.clock = clock;
        this.backoff = java.util.Objects.requireNonNull(backoff, "backoff");
        this.capabilities = settings.claims() ? claimCapabilities(settings) : Capabilities.builder(PROVIDER)
                .egress(PodSpecs.egress())
                .check(PodSpecs::extraViolations)
                // no DISK: an emptyDir sizeLimit and ephemeral-storage are enforced by eviction some time after
                // the bound is passed, not by a failing write; the configured default stays as that backstop
                .limits(Capabilities.Limit.LIFETIME, Capabilities.Limit.MEMORY, Capabilities.Limit.VCPUS)
                .features(Capabilities.Feature.OUTPUT_ON_TIMEOUT, Capabilities.Feature.SEPARATE_STDERR, Capabilities.Feature.SESSIONS,
                        Capabilities.Feature.INPUT_FILES, Capabilities.Feature.ENV, Capabilities.Feature.READ_FILES,
                        Capabilities.Feature.LIST_FILES, Capabilities.Feature.STREAMING, Capabilities.Feature.ATTACH)
                .languages(Language.values())
                .build();
    }

    /**
     * On the claim path the template fixes the pod: the egress forms are those of the declared pools'
     * templates and a spec's egress must be exactly one of them; resources and environment are the
     * template's (no MEMORY, VCPUS or ENV); the lifetime is the claim's {@code shutdownTime}.
     */
    private static Capabilities claimCapabilities(KubernetesSettings settings) {
        java.util.Set<Capabilities.Egress> forms = java.util.EnumSet.noneOf(Capabilities.Egress.class);
        for (Map.Entry<dev.sandbox4j.policy.EgressPolicy, String> e : settings.warmPools()) {
            dev.sandbox4j.policy.EgressPolicy p = e.getKey();
            if (p.isDenyAll()) {
                forms.add(Capabilities.Egress.DENY_ALL);
            } else if (p.isAllowAll()) {
                forms.add(Capabilities.Egress.ALLOW_ALL);
            } else if (p.defaultAction() == dev.sandbox4j.policy.EgressPolicy.Default.DENY) {
                forms.add(Capabilities.Egress.DEFAULT_DENY_WITH_RULES);
                p.allowedCidrs().forEach(c -> forms.add(c.version() == 4 ? Capabilities.Egress.ALLOW_CIDRS_IPV4
                        : Capabilities.Egress.ALLOW_CIDRS_IPV6));
            } else {
                forms.add(Capabilities.Egress.DEFAULT_ALLOW_WITH_DENIES);
                p.deniedCidrs().forEach(c -> forms.add(c.version() == 4 ? Capabilities.Egress.DENY_CIDRS_IPV4
                        : Capabilities.Egress.DENY_CIDRS_IPV6));
            }
        }
        return Capabilities.builder(PROVIDER)
                .egress(forms.toArray(new Capabilities.Egress[0]))
                .check((egress, limits) -> {
                    List<String> v = new ArrayList<>(PodSpecs.extraViolations(egress, limits));
                    if (v.isEmpty() && poolFor(settings, egress) == null) {
                        v.add("egress " + egress + " (no SandboxWarmPool is configured for it: each pool's template fixes one egress)");
                    }
                    return v;
                })
                .limits(Capabilities.Limit.LIFETIME)
                .features(Capabilities.Feature.OUTPUT_ON_TIMEOUT, Capabilities.Feature.SEPARATE_STDERR, Capabilities.Feature.SESSIONS,
                        Capabilities.Feature.INPUT_FILES, Capabilities.Feature.READ_FILES, Capabilities.Feature.LIST_FILES,
                        Capabilities.Feature.STREAMING, Capabilities.Feature.ATTACH)
                .languages(Language.values())
                .build();
    }

    /** The pool whose template's egress rules are exactly those {@code egress} translates to, or null. */
    static String poolFor(KubernetesSettings settings, dev.sandbox4j.policy.EgressPolicy egress) {
        if (!egress.allowedDomains().isEmpty() || !egress.headerRules().isEmpty()) {
            return null;
        }
        String rules = canonical(PodSpecs.egressRules(egress));
        for (Map.Entry<dev.sandbox4j.policy.EgressPolicy, String> e : settings.warmPools()) {
            if (canonical(PodSpecs.egressRules(e.getKey())).equals(rules)) {
                return e.getValue();
            }
        }
        return null;
    }

    /** The SandboxTemplate the claim path accepts for {@code spec}, as JSON to apply. */
    public String sandboxTemplateJson(String name, dev.sandbox4j.api.SandboxSpec spec) {
        return client.getKubernetesSerialization().asJson(PodSpecs.sandboxTemplate(settings, name, spec));
    }

    public KubernetesSettings settings() {
        return settings;
    }

    @Override
    public String provider() {
        return PROVIDER;
    }

    @Override
    public Capabilities capabilities() {
        return capabilities;
    }

    public int openSandboxes() {
        return live.size();
    }

    private MixedOperation<GenericKubernetesResource, io.fabric8.kubernetes.api.model.GenericKubernetesResourceList, Resource<GenericKubernetesResource>> sandboxes() {
        return client.genericKubernetesResources(SANDBOX);
    }

    private MixedOperation<GenericKubernetesResource, io.fabric8.kubernetes.api.model.GenericKubernetesResourceList, Resource<GenericKubernetesResource>> policies() {
        return client.genericKubernetesResources(NETWORK_POLICY);
    }

    private MixedOperation<GenericKubernetesResource, io.fabric8.kubernetes.api.model.GenericKubernetesResourceList, Resource<GenericKubernetesResource>> claims() {
        return client.genericKubernetesResources(CLAIM);
    }

    @Override
    public KubernetesHandle create(CreateRequest request) throws InterruptedException {
        if (settings.claims()) {
            return createClaim(request);
        }
        // both objects first: a spec the translation refuses makes no call
        Map<String, Object> policy = PodSpecs.networkPolicy(settings.namespace(), request.runId(), request.labels(),
                request.initialEgress());
        Map<String, Object> sandbox = PodSpecs.sandbox(settings, request, clock.instant());
        String name = PodSpecs.name(request.runId());
        KubernetesHandle h = new KubernetesHandle(name, request.runId(), name);
        // the policy goes first: no pod of this run ever exists without it
        createNamed("NetworkPolicy", PodSpecs.policyName(request.runId()), NETWORK_POLICY, policy, request,
                found -> canonical(policy.get("spec")).equals(canonical(found.getAdditionalProperties().get("spec"))) ? null
                        : "its spec differs from this run's policy");
        live.add(h);
        Instant now = clock.instant();
        sandboxCreatesInDoubt.values().removeIf(since -> since.plus(IN_DOUBT_FOR).isBefore(now));
        sandboxCreatesInDoubt.put(request.runId(), now); // from before the send: an interrupt leaves it in doubt too
        try {
            createNamed("Sandbox", name, SANDBOX, sandbox, request,
                    found -> canonical(path(sandbox.get("spec"), "podTemplate", "spec")).equals(canonical(path(
                            found.getAdditionalProperties().get("spec"), "podTemplate", "spec"))) ? null
                            : "its spec.podTemplate.spec differs from this run's");
            sandboxCreatesInDoubt.remove(request.runId()); // answered, or adopted: it exists
        } catch (SandboxConfigurationException e) {
            // the name is taken by a Sandbox that is not this run's: it is left alone, only this run's policy goes
            sandboxCreatesInDoubt.remove(request.runId());
            live.remove(h);
            deletePolicyQuietly(PodSpecs.policyName(request.runId()));
            throw e;
        } catch (SandboxException e) {
            if (!e.requestMayHaveSucceeded()) {
                sandboxCreatesInDoubt.remove(request.runId());
                deleteQuietly(h); // only the policy exists: remove it, the create failed cleanly
            } else {
                live.remove(h); // the lifecycle's lookup by run id finds and deletes both objects
            }
            throw e;
        }
        try {
            awaitReady(h);
        } catch (RuntimeException | InterruptedException e) {
            deleteQuietly(h);
            throw e;
        }
        return h;
    }

    /**
     * The claim path: the pool's template (and the NetworkPolicy the controller made from it) are read and
     * compared with what this runner would build for the spec, and any difference refuses before the
     * claim; then the claim; then, once it is bound and Ready, the bound Sandbox is read and checked to be
     * this claim's alone and to run the verified pod spec under the template's NetworkPolicy.
     */
    private KubernetesHandle createClaim(CreateRequest request) throws InterruptedException {
        String pool = poolFor(settings, request.spec().egress());
        if (pool == null) { // the capabilities refuse this before the lifecycle calls create
            throw new dev.sandbox4j.policy.UnsupportedPolicyException(PROVIDER, List.of("no SandboxWarmPool for egress "
                    + request.spec().egress()));
        }
        Map<String, Object> expectedPod = PodSpecs.templatePodSpec(settings, request.spec());
        Map<String, Object> claim = PodSpecs.claim(settings, request, pool, clock.instant());
        String template = verifyPool(pool, expectedPod, request.spec().egress());
        String name = PodSpecs.name(request.runId());
        KubernetesHandle h = new KubernetesHandle(name, request.runId(), null, true);
        GenericKubernetesResource created;
        live.add(h);
        try {
            created = createNamed("SandboxClaim", name, CLAIM, claim, request, found -> null);
        } catch (SandboxException e) {
            live.remove(h); // nothing else was created; an ambiguous create is found by its run-id label
            throw e;
        }
        String uid = created == null || created.getMetadata() == null ? null : created.getMetadata().getUid();
        List<String> wrong;
        try {
            GenericKubernetesResource sb = awaitClaimed(h);
            wrong = boundDifferences(sb, name, uid, template, expectedPod);
        } catch (RuntimeException | InterruptedException e) {
            deleteQuietly(h);
            throw e;
        }
        if (!wrong.isEmpty()) {
            boolean interrupted = Thread.interrupted();
            try {
                destroy(h);
            } catch (SandboxException e) {
                throw SandboxException.builder("kubernetes: SandboxClaim " + name + " was bound to a Sandbox that differs from"
                        + " its verified template (" + String.join("; ", wrong) + ") and could not be deleted: " + e.getMessage())
                        .provider(PROVIDER).requestMayHaveSucceeded(true).cause(e).build();
            } finally {
                if (interrupted) {
                    Thread.currentThread().interrupt();
                }
            }
            throw new dev.sandbox4j.policy.UnsupportedPolicyException(PROVIDER, wrong);
        }
        return h;
    }

    /** Reads the pool, its template and the template's NetworkPolicy; refuses on any difference. @return the template's name */
    private String verifyPool(String pool, Map<String, Object> expectedPod, dev.sandbox4j.policy.EgressPolicy egress)
            throws InterruptedException {
        String ns = settings.namespace();
        GenericKubernetesResource p = call("get SandboxWarmPool " + pool, false,
                () -> client.genericKubernetesResources(WARM_POOL).inNamespace(ns).withName(pool).get());
        if (p == null) {
            throw new dev.sandbox4j.policy.UnsupportedPolicyException(PROVIDER, List.of("no SandboxWarmPool " + pool
                    + " in namespace " + ns + ", so its template cannot be verified"));
        }
        Object templateName = path(p.getAdditionalProperties().get("spec"), "sandboxTemplateRef", "name");
        if (!(templateName instanceof String t) || t.isEmpty()) {
            throw new dev.sandbox4j.policy.UnsupportedPolicyException(PROVIDER, List.of("SandboxWarmPool " + pool
                    + " names no template"));
        }
        GenericKubernetesResource tr = call("get SandboxTemplate " + t, false,
                () -> client.genericKubernetesResources(TEMPLATE).inNamespace(ns).withName(t).get());
        List<String> diffs = new ArrayList<>();
        if (tr == null) {
            diffs.add("no SandboxTemplate " + t + " (named by SandboxWarmPool " + pool + ")");
        } else {
            Object spec = tr.getAdditionalProperties().get("spec");
            Object management = path(spec, "networkPolicyManagement");
            if (management != null && !"Managed".equals(management)) {
                diffs.add("SandboxTemplate " + t + ": networkPolicyManagement is " + management + ", so no NetworkPolicy"
                        + " of the template confines its pods");
            }
            Object np = path(spec, "networkPolicy");
            if (np == null) {
                diffs.add("SandboxTemplate " + t + ": no networkPolicy (the controller's default allows public egress)");
            } else if (!canonical(PodSpecs.templateNetworkPolicy(egress)).equals(canonical(rules(np, false)))) {
                diffs.add("SandboxTemplate " + t + ": networkPolicy differs from the spec's egress " + egress);
            }
            if (!canonical(expectedPod).equals(canonical(path(spec, "podTemplate", "spec")))) {
                diffs.add("SandboxTemplate " + t + ": spec.podTemplate.spec differs from the pod this runner builds for the spec"
                        + " (lock-down, image, resources, environment, RuntimeClass)");
            }
            GenericKubernetesResource policy = call("get NetworkPolicy " + t + "-network-policy", false,
                    () -> policies().inNamespace(ns).withName(t + "-network-policy").get());
            if (policy == null) {
                diffs.add("no NetworkPolicy " + t + "-network-policy: the controller has not made the template's policy yet");
            } else if (!canonical(PodSpecs.templatePolicySpec(t, egress)).equals(canonical(rules(
                    policy.getAdditionalProperties().get("spec"), true)))) {
                diffs.add("NetworkPolicy " + t + "-network-policy differs from the template's egress " + egress);
            }
        }
        if (!diffs.isEmpty()) {
            throw new dev.sandbox4j.policy.UnsupportedPolicyException(PROVIDER, diffs);
        }
        return t;
    }

    /** A policy spec with absent ingress/egress lists as empty ones (Go omits empty lists; both mean none). */
    @SuppressWarnings("unchecked")
    private static Object rules(Object spec, boolean whole) {
        if (!(spec instanceof Map)) {
            return spec;
        }
        Map<String, Object> m = new LinkedHashMap<>((Map<String, Object>) spec);
        m.putIfAbsent("ingress", List.of());
        m.putIfAbsent("egress", List.of());
        if (!whole) {
            m.keySet().retainAll(Set.of("ingress", "egress"));
        }
        return m;
    }

    @SuppressWarnings("unchecked")
    static Object path(Object o, String... keys) {
        for (String k : keys) {
            if (!(o instanceof Map)) {
                return null;
            }
            o = ((Map<String, Object>) o).get(k);
        }
        return o;
    }

    /**
     * Polls the claim until it is bound and Ready, a terminal reason, or the ready timeout; @return the
     * bound Sandbox. The claim is read at once, then through {@link Backoff#poll} on the driver's clock and
     * sleeper: pauses from {@link #readyFirstDelay} growing 1.5 times plus 1 ms up to the ready poll, no
     * read starting after the ready timeout (which then fails the create, retriable, with the last status
     * seen). A claim gone, or one with a terminal reason, fails at once.
     */
    private GenericKubernetesResource awaitClaimed(KubernetesHandle h) throws InterruptedException {
        String[] last = {"no status yet"};
        Optional<GenericKubernetesResource> bound = backoff.poll(settings.readyTimeout(), readyFirstDelay(),
                settings.readyPoll(), look -> {
            GenericKubernetesResource c;
            try {
                c = call("get SandboxClaim " + h.id(), false, () -> claims().inNamespace(settings.namespace()).withName(h.id()).get());
            } catch (SandboxException e) {
                if (!e.isRetriable()) {
                    throw e;
                }
                last[0] = "the last read failed: " + e.getMessage(); // a GET: the next look reads again
                return Optional.empty();
            }
            if (c == null) {
                throw SandboxException.builder("kubernetes: SandboxClaim " + h.id() + " disappeared while starting").provider(PROVIDER)
                        .retriable(true).build();
            }
            Map<String, Object> ready = condition(c, AgentSandbox.READY);
            Object name = path(c.getAdditionalProperties().get("status"), "sandbox", "name");
            if (ready != null) {
                String reason = String.valueOf(ready.get("reason"));
                last[0] = reason + ": " + ready.get("message");
                if ("True".equals(ready.get("status")) && name instanceof String b && !b.isEmpty()) {
                    h.sandboxName(b);
                    GenericKubernetesResource sb = read("get Sandbox " + b,
                            () -> sandboxes().inNamespace(settings.namespace()).withName(b).get());
                    if (sb != null) {
                        String pod = annotation(sb, AgentSandbox.POD_NAME_ANNOTATION);
                        h.podName(pod != null && !pod.isEmpty() ? pod : b);
                        return Optional.of(sb);
                    }
                    last[0] = "bound Sandbox " + b + " not found";
                } else if (AgentSandbox.CLAIM_TERMINAL_REASONS.contains(reason)) {
                    throw SandboxException.builder("kubernetes: SandboxClaim " + h.id() + " will not become ready (" + last[0] + ")")
                            .provider(PROVIDER).retriable(!reason.endsWith("NotFound") && !reason.equals("EnvVarsInjectionRejected"))
                            .build();
                }
            }
            return Optional.empty();
        });
        return bound.orElseThrow(() -> SandboxException.builder("kubernetes: SandboxClaim " + h.id() + " was not Ready within "
                + settings.readyTimeout() + " (" + last[0] + ")").provider(PROVIDER).retriable(true).build());
    }

    /** The first pause of a Ready poll: 20 ms, or the ready poll when that is shorter. */
    private Duration readyFirstDelay() {
        return settings.readyPoll().compareTo(READY_FIRST_DELAY) < 0 ? settings.readyPoll() : READY_FIRST_DELAY;
    }

    /**
     * What makes a bound Sandbox unfit: another controller than this claim (it was handed out twice, or
     * is still a pool's), a pod spec other than the verified template's (a warm Sandbox made from an
     * older template), a pod the template's NetworkPolicy does not select, or a Sandbox not Ready.
     */
    @SuppressWarnings("unchecked")
    private List<String> boundDifferences(GenericKubernetesResource sb, String claim, String claimUid, String template,
            Map<String, Object> expectedPod) {
        List<String> d = new ArrayList<>();
        String name = sb.getMetadata().getName();
        boolean ours = false;
        for (io.fabric8.kubernetes.api.model.OwnerReference ref : sb.getMetadata().getOwnerReferences() == null
                ? List.<io.fabric8.kubernetes.api.model.OwnerReference>of() : sb.getMetadata().getOwnerReferences()) {
            if (Boolean.TRUE.equals(ref.getController())) {
                ours = AgentSandbox.CLAIM_KIND.equals(ref.getKind()) && claim.equals(ref.getName())
                        && (claimUid == null || claimUid.equals(ref.getUid()));
            }
        }
        if (!ours) {
            d.add("Sandbox " + name + " is not controlled by SandboxClaim " + claim + " alone");
        }
        if (labels(sb).containsKey(AgentSandbox.WARM_POOL_LABEL)) {
            d.add("Sandbox " + name + " still carries the warm-pool label");
        }
        Object podTemplate = path(sb.getAdditionalProperties().get("spec"), "podTemplate");
        if (!canonical(expectedPod).equals(canonical(path(podTemplate, "spec")))) {
            d.add("Sandbox " + name + ": spec.podTemplate.spec differs from the verified SandboxTemplate " + template
                    + " (a warm Sandbox made from an older template?)");
        }
        Object podLabels = path(podTemplate, "metadata", "labels");
        if (!(podLabels instanceof Map) || !AgentSandbox.nameHash(template).equals(((Map<String, Object>) podLabels)
                .get(AgentSandbox.TEMPLATE_REF_HASH_LABEL))) {
            d.add("Sandbox " + name + ": its pod is not labelled for the NetworkPolicy of template " + template);
        }
        Map<String, Object> ready = condition(sb, AgentSandbox.READY);
        if (ready == null || !"True".equals(ready.get("status"))) {
            d.add("Sandbox " + name + " is not Ready");
        }
        return d;
    }

    /**
     * Creates an object whose name the run id fixes ({@link PodSpecs#name}, {@link PodSpecs#policyName}),
     * re-sending the same create (same name, same body) when the API server answered a 5xx of its own (500,
     * 503; and, once a send is in doubt, a 429 or a refused connection too). The API server keeps one object
     * per name, so a re-send never makes a second one, and creating it runs no code. A send with no
     * readable answer of the API server's own (lost, timed out, garbled, a gateway's 502 or 504) may have
     * been stored, or may still be stored later: it is not sent again but read back by name (a GET, tried
     * again on a retriable failure), adopted when it is there and this run's, and otherwise ambiguous as
     * before (a second send could leave two writes in flight, one stored after the other's object was
     * deleted). At most {@link #CREATE_RESENDS} re-sends, each after the driver's backoff (or the answer's
     * Retry-After), none starting later than the request timeout after the first send. A 409 AlreadyExists means an earlier
     * send (of this create, or of an earlier try of this run) landed: the object is read back by name and
     * adopted when its run-id label (and owner label, when the request has one) are this request's and
     * {@code differs} finds nothing; otherwise the create fails with a {@link SandboxConfigurationException}
     * and the object is left alone. When the re-sends run out, or a later send fails for good, after a send
     * in doubt, the failure says the request may have succeeded (the lifecycle looks the run id up).
     *
     * @param differs why a found object of this run is not the one this create sends, or null when it is
     * @return the object created or adopted (null when the API server answered without one)
     */
    private GenericKubernetesResource createNamed(String kind, String name, ResourceDefinitionContext type,
            Map<String, Object> body, CreateRequest request,
            java.util.function.Function<GenericKubernetesResource, String> differs) throws InterruptedException {
        String ns = settings.namespace();
        String what = "create " + kind + " " + name;
        boolean inDoubt = false; // an earlier send may have landed
        long firstSend = backoff.nanoTime(); // no re-send starts more than a request timeout after the first send
        for (int send = 1; ; send++) {
            SandboxException failure;
            try {
                return call(what, true, () -> client.genericKubernetesResources(type).inNamespace(ns).resource(resource(body)).create());
            } catch (SandboxException e) {
                failure = e;
            }
            if (failure.httpStatus().orElse(0) == 409) {
                GenericKubernetesResource found = read("get " + kind + " " + name,
                        () -> client.genericKubernetesResources(type).inNamespace(ns).withName(name).get());
                if (found != null) {
                    String notOurs = notThisRun(found, request);
                    if (notOurs == null) {
                        notOurs = differs.apply(found);
                    }
                    if (notOurs == null) {
                        log.debug("kubernetes: {} answered 409 on send {}: an earlier send stored it, adopted", what, send);
                        return found;
                    }
                    throw new SandboxConfigurationException(SandboxException.builder("kubernetes: " + what + " failed: HTTP 409"
                            + " AlreadyExists, and the " + kind + " of that name is not this run's (" + notOurs
                            + "); it is left alone").provider(PROVIDER).httpStatus(409).providerCode("AlreadyExists"));
                }
                // stored, then deleted before the read: nothing of that name now, so the create goes again
                failure = SandboxException.builder(failure.getMessage() + ", and no " + kind + " of that name was there to"
                        + " read back").provider(PROVIDER).httpStatus(409).retriable(true)
                        .requestMayHaveSucceeded(inDoubt).cause(failure).build();
            }
            int code = failure.httpStatus().orElse(0);
            if (failure.requestMayHaveSucceeded() && (code == 0 || code == 502 || code == 504)) {
                // no answer of the API server's own that can be read (a lost answer, a timeout, a garbled body, a
                // gateway's 502/504): this send may have been stored, or may still be stored later. It is read back
                // rather than sent again, since a second send now could leave two writes in flight, one stored
                // after the other's object was deleted (a leak)
                GenericKubernetesResource found;
                try {
                    found = read("get " + kind + " " + name,
                            () -> client.genericKubernetesResources(type).inNamespace(ns).withName(name).get());
                } catch (SandboxException e) {
                    throw failure;
                }
                if (found != null && notThisRun(found, request) == null && differs.apply(found) == null) {
                    log.debug("kubernetes: {} had no answer on send {}, and is stored: adopted", what, send);
                    return found;
                }
                throw failure; // ambiguous, as without a read: the lifecycle looks the run id up
            }
            boolean resend = failure.requestMayHaveSucceeded() || (failure.isRetriable()
                    && (inDoubt || failure.httpStatus().orElse(0) == 409));
            inDoubt |= failure.requestMayHaveSucceeded();
            Optional<Duration> delay = resend && send <= CREATE_RESENDS
                    ? backoff.delay(send, failure.retryAfter()) : Optional.empty();
            if (delay.isEmpty() || backoff.nanoTime() - firstSend + delay.get().toNanos() > settings.requestTimeout().toNanos()) {
                if (inDoubt && !failure.requestMayHaveSucceeded()) {
                    // this send failed for certain, an earlier one may have landed
                    throw failure.toBuilder().requestMayHaveSucceeded(true).retriable(false).build();
                }
                throw failure;
            }
            log.debug("kubernetes: {} failed ({}), sending it again in {} ms", what, failure.getMessage(), delay.get().toMillis());
            backoff.sleep(delay.get());
        }
    }

    /** Re-sends of one create whose outcome an answer left open, at most. */
    static final int CREATE_RESENDS = 3;
    /** Tries of a read (a GET: safe to repeat) that failed with a retriable error, at most. */
    static final int READ_TRIES = 3;

    /** Why {@code found} is not an object of {@code request}'s run (its run-id or owner label), or null. */
    private static String notThisRun(GenericKubernetesResource found, CreateRequest request) {
        Map<String, String> labels = labels(found);
        for (String key : List.of(CreateRequest.RUN_ID_LABEL, CreateRequest.OWNER_LABEL)) {
            String want = request.labels().get(key);
            if (want != null && !want.equals(labels.get(key))) {
                return "its " + key + " label is " + (labels.containsKey(key) ? "'" + labels.get(key) + "'" : "absent")
                        + ", not this request's";
            }
        }
        return null;
    }

    /** A GET, tried again (a read is safe to repeat) after a retriable failure: a 5xx, a 429, a lost or garbled answer. */
    private <T> T read(String what, Call<T> get) throws InterruptedException {
        for (int attempt = 1; ; attempt++) {
            try {
                return call(what, false, get);
            } catch (SandboxException e) {
                Optional<Duration> delay = e.isRetriable() && attempt < READ_TRIES ? backoff.delay(attempt, e.retryAfter())
                        : Optional.empty();
                if (delay.isEmpty() || delay.get().compareTo(settings.requestTimeout()) > 0) {
                    throw e;
                }
                backoff.sleep(delay.get());
            }
        }
    }

    /** Deletes this run's NetworkPolicy alone; what fails is logged (the lifecycle's lookup finds what is left). */
    private void deletePolicyQuietly(String policy) {
        boolean interrupted = Thread.interrupted();
        try {
            call("delete NetworkPolicy " + policy, false, () -> policies().inNamespace(settings.namespace()).withName(policy).delete());
        } catch (RuntimeException | InterruptedException e) {
            log.warn("kubernetes: could not delete NetworkPolicy {} after a failed create: {}", policy, e.getMessage());
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private void deleteQuietly(KubernetesHandle h) {
        boolean interrupted = Thread.interrupted();
        try {
            destroy(h);
        } catch (RuntimeException | InterruptedException e) {
            // the lifecycle's lookup by run id finds what is left
            log.warn("kubernetes sandbox {}: could not delete after a failed create: {}", h.id(), e.getMessage());
            live.remove(h);
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /**
     * Polls the Sandbox until Ready is True, a terminal reason, or the ready timeout: read at once, then
     * through {@link Backoff#poll} on the driver's clock and sleeper, pauses from {@link #readyFirstDelay}
     * growing 1.5 times plus 1 ms up to the ready poll, no read starting after the ready timeout (which
     * then fails the create, retriable, with the last status seen). A Sandbox gone, or one with a terminal
     * reason, fails at once.
     */
    void awaitReady(KubernetesHandle h) throws InterruptedException {
        String[] last = {"no status yet"};
        Optional<GenericKubernetesResource> readySandbox = backoff.poll(settings.readyTimeout(), readyFirstDelay(),
                settings.readyPoll(), look -> {
            GenericKubernetesResource r;
            try {
                r = call("get Sandbox " + h.id(), false, () -> sandboxes().inNamespace(settings.namespace()).withName(h.id()).get());
            } catch (SandboxException e) {
                if (!e.isRetriable()) {
                    throw e;
                }
                last[0] = "the last read failed: " + e.getMessage(); // a GET: the next look reads again
                return Optional.empty();
            }
            if (r == null) {
                throw SandboxException.builder("kubernetes: Sandbox " + h.id() + " disappeared while starting").provider(PROVIDER)
                        .retriable(true).build();
            }
            Map<String, Object> ready = condition(r, AgentSandbox.READY);
            if (ready != null) {
                String reason = String.valueOf(ready.get("reason"));
                last[0] = reason + ": " + ready.get("message");
                if ("True".equals(ready.get("status"))) {
                    return Optional.of(r);
                }
                if (AgentSandbox.TERMINAL_REASONS.contains(reason)) {
                    throw SandboxException.builder("kubernetes: Sandbox " + h.id() + " will not become ready (" + last[0] + ")")
                            .provider(PROVIDER).retriable(true).build();
                }
            }
            return Optional.empty();
        });
        GenericKubernetesResource r = readySandbox.orElseThrow(() -> SandboxException.builder("kubernetes: Sandbox " + h.id()
                + " was not Ready within " + settings.readyTimeout() + " (" + last[0] + ")").provider(PROVIDER).retriable(true).build());
        String pod = annotation(r, AgentSandbox.POD_NAME_ANNOTATION);
        if (pod != null && !pod.isEmpty()) {
            h.podName(pod);
        }
    }

    @SuppressWarnings("unchecked")
    static Map<String, Object> condition(GenericKubernetesResource r, String type) {
        Object status = r.getAdditionalProperties().get("status");
        if (!(status instanceof Map)) {
            return null;
        }
        Object conditions = ((Map<String, Object>) status).get("conditions");
        if (!(conditions instanceof List)) {
            return null;
        }
        for (Object c : (List<Object>) conditions) {
            if (c instanceof Map && type.equals(((Map<String, Object>) c).get("type"))) {
                return (Map<String, Object>) c;
            }
        }
        return null;
    }

    private static String annotation(GenericKubernetesResource r, String key) {
        Map<String, String> a = r.getMetadata() == null ? null : r.getMetadata().getAnnotations();
        return a == null ? null : a.get(key);
    }

    @SuppressWarnings("unchecked")
    static GenericKubernetesResource resource(Map<String, Object> map) {
        GenericKubernetesResource r = new GenericKubernetesResource();
        r.setApiVersion((String) map.get("apiVersion"));
        r.setKind((String) map.get("kind"));
        Map<String, Object> m = (Map<String, Object>) map.get("metadata");
        ObjectMeta meta = new ObjectMeta();
        meta.setName((String) m.get("name"));
        meta.setNamespace((String) m.get("namespace"));
        meta.setLabels((Map<String, String>) m.get("labels"));
        r.setMetadata(meta);
        r.setAdditionalProperty("spec", map.get("spec"));
        return r;
    }

    @Override
    public void release(KubernetesHandle h) {
        live.remove(h);
    }

    @Override
    public Duration createDeadline() {
        // each object's re-sends start within a request timeout of its first send, and the last one is answered
        // (or given up on) a request timeout later: the Sandbox's last send starts within three request timeouts
        // of the create, and the API server may still finish it after the client gave up
        return settings.requestTimeout().multipliedBy(4).plus(settings.readyTimeout());
    }

    @Override
    public List<KubernetesHandle> findByRunId(String runId) throws InterruptedException {
        Map<String, KubernetesHandle> out = new LinkedHashMap<>();
        if (settings.claims()) {
            for (GenericKubernetesResource r : list(() -> claims().inNamespace(settings.namespace())
                    .withLabel(CreateRequest.RUN_ID_LABEL, runId).list().getItems())) {
                String name = r.getMetadata().getName();
                if (runId.equals(labels(r).get(CreateRequest.RUN_ID_LABEL)) && name.equals(PodSpecs.name(runId))) {
                    out.put(name, claimHandle(r, runId));
                }
            }
            return new ArrayList<>(out.values());
        }
        for (GenericKubernetesResource r : list(sandboxesLabelled(runId))) {
            String name = r.getMetadata().getName();
            if (runId.equals(labels(r).get(CreateRequest.RUN_ID_LABEL)) && name.equals(PodSpecs.name(runId))) {
                out.put(name, new KubernetesHandle(name, runId, name));
            }
        }
        if (!out.isEmpty()) {
            sandboxCreatesInDoubt.remove(runId);
        }
        // a policy without its Sandbox (a create lost between the two calls) is found too: destroy removes it
        for (GenericKubernetesResource r : list(policiesLabelled(runId))) {
            String name = r.getMetadata().getName();
            if (runId.equals(labels(r).get(CreateRequest.RUN_ID_LABEL)) && name.equals(PodSpecs.policyName(runId))
                    && out.isEmpty()) {
                if (sandboxCreatesInDoubt.containsKey(runId)) {
                    // this runner sent the run's Sandbox create and had no answer: the API server may still store
                    // it (a write it finishes after the client gave up), so the Sandbox is not found yet and the
                    // lookup goes on (an empty answer). The policy alone confines nothing and goes now; a Sandbox
                    // stored later is found by a later lookup and deleted (its pod, started without the policy,
                    // runs none of the caller's code).
                    call("delete NetworkPolicy " + name + " (its Sandbox is not there yet)", false,
                            () -> policies().inNamespace(settings.namespace()).withName(name).delete());
                } else {
                    out.put(PodSpecs.name(runId), new KubernetesHandle(PodSpecs.name(runId), runId, PodSpecs.name(runId)));
                }
            }
        }
        return new ArrayList<>(out.values());
    }

    private static KubernetesHandle claimHandle(GenericKubernetesResource claim, String runId) {
        KubernetesHandle h = new KubernetesHandle(claim.getMetadata().getName(), runId, null, true);
        Object bound = path(claim.getAdditionalProperties().get("status"), "sandbox", "name");
        if (bound instanceof String b && !b.isEmpty()) {
            h.sandboxName(b);
        }
        return h;
    }

    @Override
    public List<Labelled<KubernetesHandle>> listLabelled(String owner) throws InterruptedException {
        List<Labelled<KubernetesHandle>> out = new ArrayList<>();
        if (settings.claims()) {
            for (GenericKubernetesResource r : list(() -> claims().inNamespace(settings.namespace())
                    .withLabel(CreateRequest.RUN_ID_LABEL).list().getItems())) {
                Map<String, String> labels = labels(r);
                String runId = labels.get(CreateRequest.RUN_ID_LABEL);
                if (runId == null || !r.getMetadata().getName().equals(PodSpecs.name(runId))
                        || (owner != null && !owner.equals(labels.get(CreateRequest.OWNER_LABEL)))) {
                    continue;
                }
                out.add(new Labelled<>(claimHandle(r, runId), labels));
            }
            return out;
        }
        for (GenericKubernetesResource r : list(sandboxesLabelled(null))) {
            Map<String, String> labels = labels(r);
            String runId = labels.get(CreateRequest.RUN_ID_LABEL);
            if (runId == null || !r.getMetadata().getName().equals(PodSpecs.name(runId))
                    || (owner != null && !owner.equals(labels.get(CreateRequest.OWNER_LABEL)))) {
                continue;
            }
            out.add(new Labelled<>(new KubernetesHandle(PodSpecs.name(runId), runId, PodSpecs.name(runId)), labels));
        }
        // a NetworkPolicy outlives its Sandbox when the controller expired the Sandbox (shutdownTime) after
        // this JVM was gone: it carries the same labels, so the sweep finds it too, and destroy removes it
        java.util.Set<String> seen = new java.util.HashSet<>();
        out.forEach(l -> seen.add(l.handle().runId()));
        for (GenericKubernetesResource r : list(() -> policies().inNamespace(settings.namespace())
                .withLabel(CreateRequest.RUN_ID_LABEL).list().getItems())) {
            Map<String, String> labels = labels(r);
            String runId = labels.get(CreateRequest.RUN_ID_LABEL);
            if (runId == null || seen.contains(runId) || !r.getMetadata().getName().equals(PodSpecs.policyName(runId))
                    || (owner != null && !owner.equals(labels.get(CreateRequest.OWNER_LABEL)))) {
                continue;
            }
            out.add(new Labelled<>(new KubernetesHandle(PodSpecs.name(runId), runId, PodSpecs.name(runId)), labels));
        }
        return out;
    }

    private java.util.function.Supplier<List<GenericKubernetesResource>> sandboxesLabelled(String runId) {
        return () -> (runId == null ? sandboxes().inNamespace(settings.namespace()).withLabel(CreateRequest.RUN_ID_LABEL)
                : sandboxes().inNamespace(settings.namespace()).withLabel(CreateRequest.RUN_ID_LABEL, runId)).list().getItems();
    }

    private java.util.function.Supplier<List<GenericKubernetesResource>> policiesLabelled(String runId) {
        return () -> policies().inNamespace(settings.namespace()).withLabel(CreateRequest.RUN_ID_LABEL, runId).list().getItems();
    }

    private List<GenericKubernetesResource> list(java.util.function.Supplier<List<GenericKubernetesResource>> s)
            throws InterruptedException {
        List<GenericKubernetesResource> items = call("list by label", false, s::get);
        return items == null ? List.of() : items;
    }

    private static Map<String, String> labels(GenericKubernetesResource r) {
        Map<String, String> l = r.getMetadata() == null ? null : r.getMetadata().getLabels();
        return l == null ? Map.of() : l;
    }

    /**
     * {@code GET} of the Sandbox (its name, {@code sandbox4j-<run id>}) and of its NetworkPolicy, compared
     * with what a create for {@code expected} sends: the policy's whole spec (selector, types, rules), the
     * pod template's spec (lock-down, resources, image, env, RuntimeClass) and a {@code shutdownTime} no
     * later than the creation plus the expected lifetime. Read-only.
     */
    @Override
    public dev.sandbox4j.spi.Attachable<KubernetesHandle> attach(String sandboxId, dev.sandbox4j.api.SandboxSpec expected)
            throws InterruptedException {
        if (!sandboxId.matches("sandbox4j-[a-z0-9]{1,53}")) {
            throw new SandboxNotFoundException(SandboxException.builder("kubernetes: '" + (sandboxId.length() > 80
                    ? sandboxId.substring(0, 80) + "..." : sandboxId) + "' is not the name of a Sandbox of this library")
                    .provider(PROVIDER));
        }
        if (settings.claims()) {
            return attachClaim(sandboxId, expected);
        }
        GenericKubernetesResource r = call("get Sandbox " + sandboxId, false,
                () -> sandboxes().inNamespace(settings.namespace()).withName(sandboxId).get());
        if (r == null) {
            throw new SandboxNotFoundException(SandboxException.builder("kubernetes: no Sandbox " + sandboxId + " in namespace "
                    + settings.namespace()).provider(PROVIDER));
        }
        Map<String, String> labels = labels(r);
        String runId = sandboxId.substring("sandbox4j-".length());
        KubernetesHandle h = new KubernetesHandle(sandboxId, runId, sandboxId);
        String pod = annotation(r, AgentSandbox.POD_NAME_ANNOTATION);
        if (pod != null && !pod.isEmpty()) {
            h.podName(pod);
        }
        Map<String, Object> ready = condition(r, AgentSandbox.READY);
        boolean running = ready != null && "True".equals(ready.get("status"));
        dev.sandbox4j.spi.Attachable.Builder<KubernetesHandle> b = dev.sandbox4j.spi.Attachable.builder(h).labels(labels)
                .state(ready == null ? "not reconciled" : "Ready=" + ready.get("status") + " (" + ready.get("reason") + ")", running);
        CreateRequest wouldSend = CreateRequest.of(runId, expected);
        GenericKubernetesResource np = call("get NetworkPolicy " + sandboxId, false,
                () -> policies().inNamespace(settings.namespace()).withName(PodSpecs.policyName(runId)).get());
        Object expectedPolicy = PodSpecs.networkPolicy(settings.namespace(), runId, Map.of(), expected.egress()).get("spec");
        if (np == null) {
            b.difference("egress: no NetworkPolicy " + PodSpecs.policyName(runId) + " confines the pod");
        } else {
            b.compare("NetworkPolicy.spec", canonical(expectedPolicy), canonical(np.getAdditionalProperties().get("spec")));
            b.policyReported();
        }
        Object reportedSpec = r.getAdditionalProperties().get("spec");
        Map<?, ?> spec = reportedSpec instanceof Map ? (Map<?, ?>) reportedSpec : Map.of();
        Map<?, ?> template = spec.get("podTemplate") instanceof Map ? (Map<?, ?>) spec.get("podTemplate") : Map.of();
        @SuppressWarnings("unchecked")
        Map<String, Object> expectedTemplate = (Map<String, Object>) ((Map<String, Object>) PodSpecs.sandbox(settings, wouldSend,
                clock.instant()).get("spec")).get("podTemplate");
        b.compare("Sandbox.spec.podTemplate.spec", canonical(expectedTemplate.get("spec")), canonical(template.get("spec")));
        try {
            java.time.Instant created = java.time.Instant.parse(r.getMetadata().getCreationTimestamp());
            java.time.Instant shutdown = java.time.Instant.parse(String.valueOf(spec.get("shutdownTime")));
            // the create sent now + lifetime rounded up; the server's creation time is whole seconds, taken after
            if (shutdown.isAfter(created.plus(wouldSend.lifetime()).plusSeconds(2))) {
                b.difference("lifetime: shutdownTime " + shutdown + " is later than the creation (" + created
                        + ") plus the expected lifetime " + wouldSend.lifetime());
            }
        } catch (RuntimeException e) {
            b.difference("lifetime: the Sandbox reports no readable shutdownTime and creationTimestamp");
        }
        return b.build();
    }

    /**
     * Attach on the claim path: the claim by its name, its labels and lifetime; the pool's template and its
     * NetworkPolicy verified against {@code expected} as before a claim; the bound Sandbox checked as after
     * one (this claim's alone, the verified pod spec, selected by the template's policy, Ready). Read-only.
     */
    private dev.sandbox4j.spi.Attachable<KubernetesHandle> attachClaim(String claimName, dev.sandbox4j.api.SandboxSpec expected)
            throws InterruptedException {
        GenericKubernetesResource c = call("get SandboxClaim " + claimName, false,
                () -> claims().inNamespace(settings.namespace()).withName(claimName).get());
        if (c == null) {
            throw new SandboxNotFoundException(SandboxException.builder("kubernetes: no SandboxClaim " + claimName + " in namespace "
                    + settings.namespace()).provider(PROVIDER));
        }
        String runId = claimName.substring("sandbox4j-".length());
        KubernetesHandle h = claimHandle(c, runId);
        Map<String, Object> ready = condition(c, AgentSandbox.READY);
        boolean running = ready != null && "True".equals(ready.get("status")) && h.sandboxName() != null;
        dev.sandbox4j.spi.Attachable.Builder<KubernetesHandle> b = dev.sandbox4j.spi.Attachable.builder(h).labels(labels(c))
                .state(ready == null ? "not reconciled" : "Ready=" + ready.get("status") + " (" + ready.get("reason") + ")", running);
        String pool = poolFor(settings, expected.egress());
        Object claimedPool = path(c.getAdditionalProperties().get("spec"), "warmPoolRef", "name");
        if (pool == null || !pool.equals(claimedPool)) {
            b.difference("egress: the claim is against SandboxWarmPool " + claimedPool + ", the expected egress is "
                    + (pool == null ? "no configured pool's" : "pool " + pool + "'s"));
            return b.build();
        }
        Map<String, Object> expectedPod = PodSpecs.templatePodSpec(settings, expected);
        String template;
        try {
            template = verifyPool(pool, expectedPod, expected.egress());
            b.policyReported();
        } catch (dev.sandbox4j.policy.UnsupportedPolicyException e) {
            e.violations().forEach(b::difference);
            return b.build();
        }
        if (h.sandboxName() != null) {
            String sbName = h.sandboxName();
            GenericKubernetesResource sb = call("get Sandbox " + sbName, false,
                    () -> sandboxes().inNamespace(settings.namespace()).withName(sbName).get());
            if (sb == null) {
                b.difference("the claim's Sandbox " + sbName + " does not exist");
            } else {
                String pod = annotation(sb, AgentSandbox.POD_NAME_ANNOTATION);
                h.podName(pod != null && !pod.isEmpty() ? pod : sbName);
                boundDifferences(sb, claimName, c.getMetadata().getUid(), template, expectedPod).forEach(b::difference);
            }
        }
        try {
            java.time.Instant created = java.time.Instant.parse(c.getMetadata().getCreationTimestamp());
            java.time.Instant shutdown = java.time.Instant.parse(String.valueOf(path(c.getAdditionalProperties().get("spec"),
                    "lifecycle", "shutdownTime")));
            java.time.Duration lifetime = CreateRequest.of(runId, expected).lifetime();
            if (shutdown.isAfter(created.plus(lifetime).plusSeconds(2))) {
                b.difference("lifetime: lifecycle.shutdownTime " + shutdown + " is later than the creation (" + created
                        + ") plus the expected lifetime " + lifetime);
            }
        } catch (RuntimeException e) {
            b.difference("lifetime: the SandboxClaim reports no readable lifecycle.shutdownTime and creationTimestamp");
        }
        return b.build();
    }

    /** JSON-like text with map keys sorted, so two equal trees compare equal whatever their map types. */
    static String canonical(Object o) {
        if (o instanceof Map<?, ?> m) {
            java.util.TreeMap<String, Object> sorted = new java.util.TreeMap<>();
            m.forEach((k, v) -> sorted.put(String.valueOf(k), v));
            StringBuilder sb = new StringBuilder("{");
            sorted.forEach((k, v) -> sb.append(sb.length() > 1 ? "," : "").append('"').append(k).append("\":").append(canonical(v)));
            return sb.append('}').toString();
        }
        if (o instanceof List<?> l) {
            StringBuilder sb = new StringBuilder("[");
            for (Object v : l) {
                sb.append(sb.length() > 1 ? "," : "").append(canonical(v));
            }
            return sb.append(']').toString();
        }
        if (o instanceof Number n) {
            return Long.toString(n.longValue()).equals(n.toString()) ? n.toString() : Double.toString(n.doubleValue());
        }
        return o instanceof String ? '"' + (String) o + '"' : String.valueOf(o);
    }

    @Override
    public boolean destroy(KubernetesHandle h) throws InterruptedException {
        h.gone("closed");
        if (h.claim()) {
            // the claim owns its Sandbox (and that its pod): the Sandbox is deleted too, so the pod goes now
            // rather than when the garbage collector gets to it
            List<?> deleted = call("delete SandboxClaim " + h.id(), false,
                    () -> claims().inNamespace(settings.namespace()).withName(h.id()).delete());
            String sb = h.sandboxName();
            List<?> deletedSandbox = sb == null ? null : call("delete Sandbox " + sb, false,
                    () -> sandboxes().inNamespace(settings.namespace()).withName(sb).delete());
            live.remove(h);
            return (deleted != null && !deleted.isEmpty()) || (deletedSandbox != null && !deletedSandbox.isEmpty());
        }
        String policy = PodSpecs.policyName(h.runId());
        // the Sandbox first: its pod goes with it (owner reference), then the policy that confined it
        List<?> deleted = call("delete Sandbox " + h.id(), false,
                () -> sandboxes().inNamespace(settings.namespace()).withName(h.id()).delete());
        List<?> deletedPolicy = call("delete NetworkPolicy " + policy, false,
                () -> policies().inNamespace(settings.namespace()).withName(policy).delete());
        live.remove(h);
        boolean any = (deleted != null && !deleted.isEmpty()) || (deletedPolicy != null && !deletedPolicy.isEmpty());
        log.debug("kubernetes sandbox {} {}", h.id(), any ? "deleted" : "was already gone");
        return any;
    }

    @Override
    public void writeFiles(KubernetesHandle h, List<InputFile> files) throws InterruptedException {
        ensureOpen(h);
        for (InputFile f : files) {
            write(h, ".", f.path(), f.content());
        }
    }

    /** Writes one file below {@code base} in chunks small enough for argv (the exec API's stdin is not used). */
    private void write(KubernetesHandle h, String base, String path, byte[] content) throws InterruptedException {
        Base64.Encoder b64 = Base64.getEncoder();
        int off = 0;
        do {
            int len = Math.min(WRITE_CHUNK, content.length - off);
            String chunk = b64.encodeToString(java.util.Arrays.copyOfRange(content, off, off + len));
            Captured c = capture(h, Scripts.shell(Scripts.WRITE, path, chunk, off == 0 ? "1" : "0", base), 0);
            if (c.exit != 0) {
                throw fileError(h, Scripts.refusal(c.exit, path, c.stderr().strip()));
            }
            off += len;
        } while (off < content.length);
    }

    @Override
    public SandboxFile readFile(KubernetesHandle h, String path, long maxBytes) throws InterruptedException {
        ensureOpen(h);
        int cap = (int) Math.min(maxBytes, 256L << 20);
        int encoded = (cap + 2) / 3 * 4;
        Captured c = capture(h, Scripts.shell(Scripts.READ, path, Integer.toString(cap)), encoded + encoded / 76 + 16);
        String err = c.stderr().strip();
        if (c.exit != 0) {
            throw fileError(h, Scripts.refusal(c.exit, path, err));
        }
        long size;
        try {
            size = Long.parseLong(err);
        } catch (NumberFormatException e) {
            throw fileError(h, path + ": could not be read (" + err + ")");
        }
        byte[] content = decode(h, c);
        size = Math.max(size, content.length);
        return SandboxFile.builder(path).content(content).size(size).truncated(size > content.length).build();
    }

    private static byte[] decode(KubernetesHandle h, Captured c) {
        try {
            return Base64.getMimeDecoder().decode(c.stdout.toByteArray());
        } catch (IllegalArgumentException e) {
            throw fileError(h, "the pod's answer was not base64 (" + e.getMessage() + ")");
        }
    }

    @Override
    public List<FileEntry> listFiles(KubernetesHandle h, String directory) throws InterruptedException {
        ensureOpen(h);
        Captured c = capture(h, Scripts.shell(Scripts.LIST, directory), MAX_LIST_BYTES / 3 * 4 + MAX_LIST_BYTES / 57 + 16);
        if (c.exit != 0 && !c.capped) {
            throw fileError(h, Scripts.refusal(c.exit, directory.isEmpty() ? "." : directory, c.stderr().strip()));
        }
        byte[] raw;
        if (c.capped) {
            // a cut base64 stream: decode the whole 4-character groups only
            String text = c.stdout.toString(StandardCharsets.US_ASCII).replaceAll("\\s", "");
            raw = Base64.getDecoder().decode(text.substring(0, text.length() / 4 * 4));
        } else {
            raw = decode(h, c);
        }
        return ListingScript.entries(raw, directory, MAX_LIST_ENTRIES);
    }

    private static SandboxException fileError(KubernetesHandle h, String message) {
        return SandboxException.builder("kubernetes sandbox " + h.id() + ": " + message).provider(PROVIDER).build();
    }

    @Override
    public ExecOutcome exec(KubernetesHandle h, Execution execution, OutputSink sink) throws InterruptedException {
        ensureOpen(h);
        CodeCommand command = CodeCommand.of(execution.language());
        String codeFile = null;
        List<String> argv;
        if (command.fitsInline(execution.code(), settings.argvLimitBytes())) {
            argv = Scripts.wrapped(command.inline(execution.code()));
        } else {
            // in the work directory: it is the one place sure to outlive an exec (an emptyDir)
            String file = ".sandbox4j-code-" + Long.toHexString(System.nanoTime()) + command.extension();
            write(h, ".", file, execution.code().getBytes(StandardCharsets.UTF_8));
            codeFile = settings.workDir() + "/" + file;
            argv = Scripts.wrapped(command.file(codeFile));
        }
        try {
            return run(h, argv, execution.budget(), sink);
        } finally {
            if (codeFile != null && h.goneReason() == null) {
                try {
                    capture(h, List.of("rm", "-f", "--", codeFile), 0);
                } catch (RuntimeException | InterruptedException ex) {
                    if (ex instanceof InterruptedException) {
                        Thread.currentThread().interrupt();
                    }
                    log.debug("kubernetes sandbox {}: could not remove the code file: {}", h.id(), ex.toString());
                }
            }
        }
    }

    private ExecOutcome run(KubernetesHandle h, List<String> command, Duration budget, OutputSink sink) throws InterruptedException {
        CompletableFuture<Void> capped = new CompletableFuture<>();
        CompletableFuture<Void> closed = new CompletableFuture<>();
        OutputStream out = new SinkStream(sink, true, capped);
        ByteArrayOutputStream errHead = new ByteArrayOutputStream();
        OutputStream err = new HeadStream(new SinkStream(sink, false, capped), errHead, Scripts.ONCE_MARKER.length() + 1);
        // the code runs at most once, whatever re-sends the exec (see Scripts.once)
        List<String> argv = Scripts.once("/tmp/.sandbox4j-once-" + Long.toHexString(System.nanoTime())
                + Long.toHexString(java.util.concurrent.ThreadLocalRandom.current().nextLong()), command);
        ExecWatch w;
        try {
            w = open(h, argv, out, err, closed);
        } catch (SandboxException e) {
            if (e.httpStatus().isPresent() || refusedConnection(e)) {
                throw e; // the upgrade was refused, or never sent: the command did not start
            }
            // sent, and no answer (the connection dropped, or timed out): the command may have started and run on
            killTree(h);
            throw e.toBuilder().codeMayHaveRun(true).retriable(false).build();
        }
        try {
            // the close counts too: a stream that breaks without a status must not wait out the budget
            CompletableFuture<Object> first = CompletableFuture.anyOf(w.exitCode(), capped, closed);
            first.get(budget.toNanos(), TimeUnit.NANOSECONDS);
            if (capped.isDone()) {
                w.close();
                killTree(h);
                return ExecOutcome.outputLimit();
            }
            Integer exit = statusAfter(w);
            // the status frame comes last on the wire; wait for the close so no output frame is still being written
            awaitClose(closed);
            if (exit == null || exit < 0) {
                // the stream ended without a status: on a cluster the command may still run, so it is killed first
                w.close();
                killTree(h);
                throw SandboxException.builder("kubernetes sandbox " + h.id() + ": the exec stream ended without an exit status")
                        .provider(PROVIDER).codeMayHaveRun(true).build();
            }
            if (exit == Scripts.ONCE_EXIT && errHead.toString(StandardCharsets.UTF_8).startsWith(Scripts.ONCE_MARKER)) {
                // this stream is a second start of the exec (re-sent after its first connection dropped): the code
                // ran, or runs, in the first, whose output is lost; it is killed
                killTree(h);
                throw SandboxException.builder("kubernetes sandbox " + h.id() + ": the exec's first connection dropped before"
                        + " its answer and the request was re-sent; the code was started by the first (its output and exit"
                        + " status are lost) and not run again").provider(PROVIDER).codeMayHaveRun(true).build();
            }
            return ExecOutcome.exited(exit);
        } catch (TimeoutException e) {
            w.close();
            killTree(h);
            return ExecOutcome.timedOut();
        } catch (InterruptedException e) {
            w.close();
            killTree(h);
            throw e;
        } catch (ExecutionException e) {
            w.close();
            killTree(h);
            throw SandboxException.builder("kubernetes sandbox " + h.id() + ": the exec stream broke off: " + e.getCause())
                    .provider(PROVIDER).codeMayHaveRun(true).cause(e.getCause()).build();
        }
    }

    /**
     * The exit status once the exit future or the close came first: fabric8 completes the status before it
     * reports the close, so a close without a status within a short grace is a broken stream (null).
     */
    private static Integer statusAfter(ExecWatch w) throws InterruptedException, ExecutionException {
        try {
            return w.exitCode().get(1, TimeUnit.SECONDS);
        } catch (TimeoutException e) {
            return null;
        }
    }

    private void awaitClose(CompletableFuture<Void> closed) throws InterruptedException {
        try {
            closed.get(settings.requestTimeout().toMillis(), TimeUnit.MILLISECONDS);
        } catch (ExecutionException | TimeoutException e) {
            log.debug("kubernetes: the exec stream did not close after its status: {}", e.toString());
        }
    }

    private ExecWatch open(KubernetesHandle h, List<String> argv, OutputStream out, OutputStream err,
            CompletableFuture<Void> closed) throws InterruptedException {
        ExecListener listener = new ExecListener() {
            @Override
            public void onClose(int code, String reason) {
                closed.complete(null);
            }

            @Override
            public void onFailure(Throwable t, Response response) {
                closed.complete(null);
            }
        };
        // the pod as the client item: fabric8 then neither gets the pod nor looks its container up; it still
        // lists the pod by name before every exec (PodOperationsImpl.getURL always runs its ready check,
        // waitUntilReadyOrTerminal, whatever withReadyWaitTimeout says), which no public setting turns off
        io.fabric8.kubernetes.api.model.Pod pod = new io.fabric8.kubernetes.api.model.PodBuilder()
                .withNewMetadata().withName(h.podName()).withNamespace(settings.namespace()).endMetadata()
                .withNewSpec().addNewContainer().withName(KubernetesSettings.CONTAINER).endContainer().endSpec().build();
        return call("exec in pod " + h.podName(), false, () -> client.pods().inNamespace(settings.namespace())
                .resource(pod).inContainer(KubernetesSettings.CONTAINER).withReadyWaitTimeout(null)
                .writingOutput(out).writingError(err).usingListener(listener)
                .exec(argv.toArray(new String[0])));
    }

    /** Passes everything on, and keeps the first {@code max} bytes in {@code head}. */
    private static final class HeadStream extends OutputStream {
        private final OutputStream to;
        private final ByteArrayOutputStream head;
        private final int max;

        HeadStream(OutputStream to, ByteArrayOutputStream head, int max) {
            this.to = to;
            this.head = head;
            this.max = max;
        }

        @Override
        public void write(int b) throws java.io.IOException {
            write(new byte[] {(byte) b}, 0, 1);
        }

        @Override
        public void write(byte[] b, int off, int len) throws java.io.IOException {
            synchronized (head) {
                head.write(b, off, Math.max(0, Math.min(len, max - head.size())));
            }
            to.write(b, off, len);
        }
    }

    /** Pushes one stream into the sink; at the hard cap it completes {@code capped} and drops the rest. */
    private static final class SinkStream extends OutputStream {
        private final OutputSink sink;
        private final boolean stdout;
        private final CompletableFuture<Void> capped;

        SinkStream(OutputSink sink, boolean stdout, CompletableFuture<Void> capped) {
            this.sink = sink;
            this.stdout = stdout;
            this.capped = capped;
        }

        @Override
        public void write(int b) {
            write(new byte[] {(byte) b}, 0, 1);
        }

        @Override
        public void write(byte[] b, int off, int len) {
            if (capped.isDone()) {
                return;
            }
            boolean more = stdout ? sink.stdout(b, off, len) : sink.stderr(b, off, len);
            if (!more) {
                capped.complete(null);
            }
        }
    }

    /** Kills every process of the code and checks; when that cannot be shown, deletes the sandbox (fail closed). */
    void killTree(KubernetesHandle h) {
        boolean interrupted = Thread.interrupted();
        try {
            String why;
            try {
                Captured c = capture(h, Scripts.shell(Scripts.KILL), 0);
                if (c.exit == 0 && !c.capped()) {
                    return;
                }
                why = "processes of the code survived the kill (exit " + c.exit + ")";
            } catch (InterruptedException e) {
                interrupted = true;
                why = "the kill was interrupted";
            } catch (SandboxException e) {
                why = "the kill could not run (" + e.getMessage() + ")";
            }
            h.gone("killed: " + why);
            log.warn("kubernetes sandbox {}: {}; the sandbox is deleted", h.id(), why);
            try {
                (h.claim() ? claims() : sandboxes()).inNamespace(settings.namespace()).withName(h.id()).delete();
            } catch (KubernetesClientException e) {
                log.warn("kubernetes sandbox {}: could not be deleted ({}); teardown retries", h.id(), e.getMessage());
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    record Captured(int exit, ByteArrayOutputStream stdout, ByteArrayOutputStream stderrBytes, boolean capped) {
        String stderr() {
            return stderrBytes.toString(StandardCharsets.UTF_8);
        }
    }

    /** Runs a fixed helper command and keeps at most {@code maxStdout} bytes of its stdout (4 KiB of stderr). */
    Captured capture(KubernetesHandle h, List<String> argv, int maxStdout) throws InterruptedException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        CompletableFuture<Void> capped = new CompletableFuture<>();
        CompletableFuture<Void> closed = new CompletableFuture<>();
        OutputStream o = new BoundedStream(out, maxStdout, capped);
        OutputStream e = new BoundedStream(err, 4096, null);
        ExecWatch w = open(h, argv, o, e, closed);
        try {
            CompletableFuture.anyOf(w.exitCode(), capped, closed).get(settings.requestTimeout().toMillis(), TimeUnit.MILLISECONDS);
            if (capped.isDone()) {
                return new Captured(0, out, err, true);
            }
            Integer exit = statusAfter(w);
            awaitClose(closed);
            if (exit == null || exit < 0) {
                throw SandboxException.builder("kubernetes sandbox " + h.id() + ": a helper command's stream ended without"
                        + " an exit status").provider(PROVIDER).retriable(true).build();
            }
            return new Captured(exit, out, err, false);
        } catch (TimeoutException ex) {
            throw SandboxException.builder("kubernetes sandbox " + h.id() + ": a helper command did not finish in "
                    + settings.requestTimeout()).provider(PROVIDER).retriable(true).build();
        } catch (ExecutionException ex) {
            throw SandboxException.builder("kubernetes sandbox " + h.id() + ": a helper command's stream broke off: "
                    + ex.getCause()).provider(PROVIDER).retriable(true).cause(ex.getCause()).build();
        } finally {
            w.close();
        }
    }

    private static final class BoundedStream extends OutputStream {
        private final ByteArrayOutputStream to;
        private final int max;
        private final CompletableFuture<Void> capped;

        BoundedStream(ByteArrayOutputStream to, int max, CompletableFuture<Void> capped) {
            this.to = to;
            this.max = max;
            this.capped = capped;
        }

        @Override
        public void write(int b) {
            write(new byte[] {(byte) b}, 0, 1);
        }

        @Override
        public synchronized void write(byte[] b, int off, int len) {
            int room = max - to.size();
            to.write(b, off, Math.max(0, Math.min(room, len)));
            if (len > room && capped != null) {
                capped.complete(null);
            }
        }
    }

    static void ensureOpen(KubernetesHandle h) {
        String reason = h.goneReason();
        if (reason != null) {
            throw new SandboxNotFoundException(SandboxException.builder("kubernetes sandbox " + h.id() + " is gone (" + reason + ")")
                    .provider(PROVIDER));
        }
    }

    @FunctionalInterface
    interface Call<T> {
        T run();
    }

    /**
     * One API call, its failure mapped: 404 is an answer for gets and deletes (fabric8 returns null or
     * an empty list); 429 rate limit; 401/403 authentication; 409 and 5xx retriable; anything without a
     * status (IO, timeout) an unknown outcome, except a connection that was never made (a
     * {@link java.net.ConnectException} among the causes: retriable, and certain even for a create). For a
     * create, an unknown outcome or a 5xx means it may have taken effect ({@link #createNamed} sends it
     * again). The Status's {@code details.retryAfterSeconds} is the failure's Retry-After.
     */
    <T> T call(String what, boolean create, Call<T> call) throws InterruptedException {
        if (Thread.interrupted()) {
            throw new InterruptedException();
        }
        try {
            return call.run();
        } catch (KubernetesClientException e) {
            if (Thread.currentThread().isInterrupted() || e.getCause() instanceof InterruptedException) {
                Thread.interrupted();
                throw new InterruptedException("interrupted during " + what);
            }
            int code = e.getCode() > 0 ? e.getCode() : handshakeStatus(e);
            String reason = e.getStatus() == null ? null : e.getStatus().getReason();
            SandboxException.Builder b = SandboxException.builder("kubernetes: " + what + " failed: "
                    + (code > 0 ? "HTTP " + code + (reason == null ? "" : " " + reason)
                            : e.getMessage() + (e.getCause() == null ? "" : " (" + e.getCause() + ")")))
                    .provider(PROVIDER).cause(e);
            if (code > 0) {
                b.httpStatus(code);
            }
            if (reason != null) {
                b.providerCode(reason);
            }
            Integer retryAfter = e.getStatus() == null || e.getStatus().getDetails() == null ? null
                    : e.getStatus().getDetails().getRetryAfterSeconds();
            if (retryAfter != null && retryAfter >= 0) {
                b.retryAfter(Duration.ofSeconds(retryAfter)); // the API server's Status details, as its Retry-After
            }
            if (code == 429) {
                throw new SandboxRateLimitException(b.retriable(true));
            }
            if (code == 401 || code == 403) {
                throw new dev.sandbox4j.api.exception.SandboxAuthenticationException(b);
            }
            if (code == 404) {
                throw new SandboxNotFoundException(b);
            }
            if (code <= 0 && refusedConnection(e)) {
                // the connection was never made, so no request was sent: a create too certainly made nothing
                throw b.retriable(true).build();
            }
            boolean unknown = code <= 0 || code >= 500; // no status at all: IO, timeout, a dropped connection
            b.retriable(code == 409 || unknown);
            if (create && unknown) {
                b.requestMayHaveSucceeded(true).retriable(false);
            }
            throw b.build();
        }
    }

    /** True when a {@link java.net.ConnectException} is among the causes: the TCP connection was never made. */
    static boolean refusedConnection(Throwable e) {
        int depth = 0;
        for (Throwable t = e; t != null && depth < 16; t = t.getCause(), depth++) {
            if (t instanceof java.net.ConnectException) {
                return true;
            }
        }
        return false;
    }

    /**
     * The status of a refused WebSocket upgrade (an exec): fabric8 reports it with no code of its own,
     * the answer's status only on the handshake exception in the causes; 0 when there is none.
     */
    static int handshakeStatus(Throwable e) {
        int depth = 0;
        for (Throwable t = e; t != null && depth < 10; t = t.getCause(), depth++) {
            if (t instanceof io.fabric8.kubernetes.client.http.WebSocketHandshakeException w && w.getResponse() != null) {
                return w.getResponse().code();
            }
        }
        return 0;
    }

    @Override
    public void close() {
        client.close();
    }
}
