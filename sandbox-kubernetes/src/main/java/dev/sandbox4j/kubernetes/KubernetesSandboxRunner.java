package dev.sandbox4j.kubernetes;

import dev.sandbox4j.api.ForwardingSandboxRunner;
import dev.sandbox4j.api.SandboxRunner;
import dev.sandbox4j.api.exception.SandboxConfigurationException;
import dev.sandbox4j.spi.RunnerBuilder;
import dev.sandbox4j.spi.lifecycle.ManagedSandboxRunner;
import dev.sandbox4j.kubernetes.internal.KubernetesDriver;
import dev.sandbox4j.kubernetes.internal.KubernetesHandle;
import dev.sandbox4j.kubernetes.internal.KubernetesSettings;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.jdkhttp.JdkHttpClientFactory;
import java.time.Clock;
import java.time.Duration;
import java.util.Map;
import java.util.Objects;
import java.util.regex.Pattern;

/**
 * Runs code on a Kubernetes cluster with <a href="https://github.com/kubernetes-sigs/agent-sandbox">agent-sandbox</a>
 * ({@code agents.x-k8s.io/v1beta1}, the version its v0.5.x releases serve and store): one {@code Sandbox}
 * (one pod) per sandbox, egress as a NetworkPolicy created before it.
 *
 * <pre>{@code
 * try (SandboxRunner k8s = KubernetesSandboxRunner.builder()
 *         .namespace("sandboxes")
 *         .runtimeClassName("gvisor")
 *         .networkPolicyEnforced(true)   // required: the cluster's CNI enforces NetworkPolicy
 *         .build()) {
 *     RunResult r = k8s.run(RunRequest.python("print(6 * 7)"));
 * }
 * }</pre>
 *
 * <p>What one create sends: a NetworkPolicy selecting the pod by its run-id label (ingress denied;
 * egress deny-all, allow-all, allowed CIDRs, or allow-all but denied CIDRs; DNS only under allow-all,
 * since no rule can name a domain), then the Sandbox with its pod template: non-root, no privilege
 * escalation, read-only root, every capability dropped, RuntimeDefault seccomp, no service-account
 * token, limits as resources with requests equal to limits, the work directory and {@code /tmp} as
 * sized emptyDirs, the lifetime as {@code shutdownTime} with {@code shutdownPolicy: Delete}, and the
 * RuntimeClass when one is set. Then the Sandbox is polled until its {@code Ready} condition is True.
 * Domain allow lists and header rules are refused before any call (they need an egress proxy, which
 * this runner does not run yet); so is a change of egress on a live sandbox (a NetworkPolicy update is
 * applied by the CNI some time later, which the runner cannot observe).
 *
 * <p><b>The runner cannot see enforcement.</b> A cluster whose CNI does not implement NetworkPolicy
 * (kindnet, flannel alone, some managed defaults) accepts the policy and enforces none of it: the
 * sandbox then has the pod network's full egress. The builder therefore refuses to build until
 * {@link Builder#networkPolicyEnforced(boolean) networkPolicyEnforced(true)} says the cluster enforces
 * it; there is no silent fallback.
 *
 * <p>Commands run through the pod exec API (a websocket, channel-framed); files go through the same
 * channel as base64 with every path component checked not to be a symbolic link. Closing an exec
 * stream does not stop its command on a cluster, so a timed-out, capped or interrupted command is
 * killed by a second exec ({@code kill -KILL -1} as the code's uid, then a check), and when that cannot
 * be shown the Sandbox is deleted. Teardown deletes the Sandbox and the NetworkPolicy.
 *
 * <p><b>Creates are idempotent by name.</b> fabric8's own request retries are turned off; the runner
 * re-sends only what is safe. The NetworkPolicy, the Sandbox and the SandboxClaim are named after the run
 * id ({@code sandbox4j-<run id>}), and an API server keeps one object per name, so a create it answered
 * 500 or 503 (or, once a send is in doubt, 429 or a refused connection) is sent again with the same name
 * and body: at most 3 times, within one request timeout of the first send, after the
 * {@link Builder#retryBaseDelay retry base delay}'s backoff or the Status's {@code retryAfterSeconds}.
 * A 409 {@code AlreadyExists} then means an earlier send landed: the object is read back by name and
 * adopted when its run-id label (and owner label, when the runner has an owner) and its spec are this
 * run's; otherwise the create fails with a {@link SandboxConfigurationException} and the object is left
 * alone. A create with no readable answer (lost, timed out, garbled, a gateway's 502 or 504) is never sent
 * again, since the API server may still store it later (a second write in flight could store a second
 * Sandbox after the first was deleted): it is read back by name and adopted when it is there. When the
 * re-sends run out, or the read-back finds nothing, the create fails as ambiguous
 * ({@code requestMayHaveSucceeded}) and the lifecycle looks the run id up by label and deletes what a late
 * write stores. Creating a Sandbox runs no code; an exec is never sent twice. A failed GET of the Ready
 * poll is read again at the next look.
 *
 * <p>Sessions across requests: {@link dev.sandbox4j.api.Sandbox#detach()} leaves the Sandbox running, and
 * {@link #attach(String, dev.sandbox4j.api.SandboxSpec) attach(name, expected)} takes it back by its name
 * ({@code sandbox4j-<run id>}) after reading the Sandbox and its NetworkPolicy back: any difference from
 * a create for {@code expected} (the policy's spec, the pod template's spec, a later {@code shutdownTime}),
 * a Sandbox not Ready, or another owner's labels is refused, naming the rule, and the Sandbox left alone.
 *
 * <p>Claims and warm pools: with {@link Builder#warmPool(dev.sandbox4j.policy.EgressPolicy, String)} each
 * sandbox is a {@code SandboxClaim} against a {@code SandboxWarmPool} (whose {@code SandboxTemplate} was
 * first read back and compared with what this runner builds, with its NetworkPolicy; any difference
 * refuses before the claim); the bound Sandbox is checked to be the claim's alone and to run the verified
 * pod spec before any code runs; teardown deletes the claim and its Sandbox; attach takes a claim by its
 * name after the same checks. {@link #sandboxTemplate(String, dev.sandbox4j.api.SandboxSpec)} renders the
 * template to apply.
 *
 * @since 0.1.0
 */
public final class KubernetesSandboxRunner extends ForwardingSandboxRunner<SandboxRunner> {
    // held here, not in the superclass's type: the public signature names no handle of the internal package
    private final ManagedSandboxRunner<KubernetesHandle> lifecycle;
    /** sandbox4j's own: the namespace sandboxes are created in (else the kubeconfig's, else {@code default}). */
    public static final String NAMESPACE_VARIABLE = "SANDBOX4J_K8S_NAMESPACE";
    /** sandbox4j's own: the API server's URL, overriding the kubeconfig's (the base-URL override). */
    public static final String API_URL_VARIABLE = "SANDBOX4J_K8S_API_URL";
    /** sandbox4j's own: the image every sandbox pod runs. */
    public static final String IMAGE_VARIABLE = "SANDBOX4J_K8S_IMAGE";
    /**
     * sandbox4j's own: the image's languages, a comma list ({@code python,javascript,bash}) for {@code
     * Builder.languages}, or {@code probe} for {@code Builder.probeLanguages}; unset declares all three
     * (the default image has them).
     */
    public static final String LANGUAGES_VARIABLE = "SANDBOX4J_K8S_LANGUAGES";
    /** sandbox4j's own: the RuntimeClass (gvisor, kata) of every sandbox pod. */
    public static final String RUNTIME_CLASS_VARIABLE = "SANDBOX4J_K8S_RUNTIME_CLASS";
    /** sandbox4j's own: {@code true} acknowledges that the cluster's CNI enforces NetworkPolicy. */
    public static final String NETWORK_POLICY_ENFORCED_VARIABLE = "SANDBOX4J_K8S_NETWORK_POLICY_ENFORCED";
    /** The default image: Python 3.12, Node.js 22 and Bash on Debian slim. */
    public static final String DEFAULT_IMAGE = "nikolaik/python-nodejs:python3.12-nodejs22-slim";

    private final KubernetesDriver driver;
    private final String description;

    private KubernetesSandboxRunner(ManagedSandboxRunner<KubernetesHandle> lifecycle, KubernetesDriver driver, String description) {
        super(lifecycle);
        this.lifecycle = lifecycle;
        this.driver = driver;
        this.description = description;
    }

    /** @return a builder; the cluster comes from {@code KUBECONFIG}, {@code ~/.kube/config} or the in-cluster account */
    public static Builder builder() {
        return new Builder();
    }

    /**
     * The runner configured from the process environment, as {@link #fromEnv(Map)} reads it.
     *
     * @return the runner
     */
    public static KubernetesSandboxRunner fromEnv() {
        return fromEnv(System.getenv());
    }

    /**
     * Configured from fabric8's usual sources (KUBECONFIG, in-cluster) and {@code SANDBOX4J_K8S_*}
     * ({@code NAMESPACE}, {@code IMAGE}, {@code RUNTIME_CLASS}, {@code API_URL}, {@code NETWORK_POLICY_ENFORCED}).
     *
     * @param env the environment to read
     * @return the runner
     * @throws SandboxConfigurationException when {@code SANDBOX4J_K8S_NETWORK_POLICY_ENFORCED} is not {@code true}
     */
    public static KubernetesSandboxRunner fromEnv(Map<String, String> env) {
        return builderFromEnv(env).build();
    }

    /**
     * The builder {@link #fromEnv(Map)} builds.
     *
     * @param env the environment to read
     * @return a builder
     */
    public static Builder builderFromEnv(Map<String, String> env) {
        Builder b = builder();
        String ns = env.get(NAMESPACE_VARIABLE);
        if (ns != null && !ns.isBlank()) {
            b.namespace(ns.trim());
        }
        String url = env.get(API_URL_VARIABLE);
        if (url != null && !url.isBlank()) {
            b.masterUrl(url.trim());
        }
        String image = env.get(IMAGE_VARIABLE);
        if (image != null && !image.isBlank()) {
            b.image(image.trim());
        }
        String rc = env.get(RUNTIME_CLASS_VARIABLE);
        if (rc != null && !rc.isBlank()) {
            b.runtimeClassName(rc.trim());
        }
        b.networkPolicyEnforced("true".equalsIgnoreCase(String.valueOf(env.get(NETWORK_POLICY_ENFORCED_VARIABLE)).trim()));
        return b.languagesSetting(LANGUAGES_VARIABLE, env.get(LANGUAGES_VARIABLE));
    }

    /** @return open sandboxes of this runner (for tests and metrics) */
    public int openSandboxes() {
        return driver.openSandboxes();
    }

    /**
     * The SandboxTemplate this runner's claim path accepts for sandboxes of {@code spec}: the pod it would
     * build (locked down, this runner's image, resources, RuntimeClass and user; {@code sleep infinity} as
     * the container's own process), {@code networkPolicyManagement: Managed} with the spec's egress as the
     * template's {@code networkPolicy}, and no environment injection by claims. Apply it (kubectl accepts
     * JSON), then a SandboxWarmPool naming it.
     *
     * @param name the template's name (a DNS label)
     * @param spec the egress (and environment) the template is for; resource limits are the builder's defaults
     * @return the SandboxTemplate as JSON
     */
    public String sandboxTemplate(String name, dev.sandbox4j.api.SandboxSpec spec) {
        Objects.requireNonNull(spec, "spec");
        if (name == null || !Builder.DNS_LABEL.matcher(name).matches()) {
            throw new IllegalArgumentException("a template name must be a DNS label, was " + name);
        }
        return driver.sandboxTemplateJson(name, spec);
    }

    ManagedSandboxRunner<KubernetesHandle> lifecycle() {
        return lifecycle;
    }

    @Override
    public String toString() {
        return description;
    }

    /**
     * Settings for {@link KubernetesSandboxRunner}: the cluster's and the pod's here, the lifecycle's
     * (teardown, retries, owner, lost-create window, listener) from {@link RunnerBuilder}.
     *
     * @since 0.1.0
     */
    public static final class Builder extends RunnerBuilder<Builder> {
        private static final Pattern DNS_LABEL = Pattern.compile("[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?");
        private Config config;
        private String masterUrl;
        private String namespace;
        private String image = DEFAULT_IMAGE;
        private String runtimeClassName;
        private long uid = 1000;
        private long gid = 1000;
        private long memoryMib = 1024;
        private long diskMib = 512;
        private String cpu = "1";
        private Duration requestTimeout = Duration.ofSeconds(30);
        private Duration readyTimeout = Duration.ofSeconds(120);
        private Duration readyPoll = Duration.ofMillis(250);
        private boolean networkPolicyEnforced;
        private final java.util.List<Map.Entry<dev.sandbox4j.policy.EgressPolicy, String>> warmPools = new java.util.ArrayList<>();

        private Builder() {
        }

        @Override
        protected Builder self() {
            return this;
        }

        /**
         * A fabric8 Config to use instead of the auto-configured one (KUBECONFIG, in-cluster).
         *
         * @param config the client configuration; its credentials never appear in this runner's messages
         * @return this builder
         */
        public Builder config(Config config) {
            this.config = Objects.requireNonNull(config, "config");
            return this;
        }

        /**
         * The API server's URL, overriding the configuration's (the base-URL override every adapter has).
         *
         * @param url e.g. {@code https://10.0.0.1:6443}
         * @return this builder
         */
        public Builder masterUrl(String url) {
            this.masterUrl = Objects.requireNonNull(url, "url");
            return this;
        }

        /**
         * The namespace for Sandboxes and NetworkPolicies. Default: the configuration's, else {@code default}.
         *
         * @param namespace a DNS label
         * @return this builder
         */
        public Builder namespace(String namespace) {
            if (namespace == null || !DNS_LABEL.matcher(namespace).matches()) {
                throw new IllegalArgumentException("namespace must be a DNS label, was " + namespace);
            }
            this.namespace = namespace;
            return this;
        }

        /**
         * The image every sandbox pod runs; it needs {@code sh}, coreutils ({@code base64}, {@code head}),
         * GNU find, and the interpreters used.
         *
         * @param image an image reference
         * @return this builder
         */
        public Builder image(String image) {
            this.image = Objects.requireNonNull(image, "image");
            return this;
        }

        /**
         * The pod's RuntimeClass, e.g. {@code gvisor} or {@code kata}: the isolation boundary. Default none
         * (the node's default runtime: a container sharing the node's kernel).
         *
         * @param name a RuntimeClass name
         * @return this builder
         */
        public Builder runtimeClassName(String name) {
            if (name == null || !DNS_LABEL.matcher(name).matches()) {
                throw new IllegalArgumentException("runtimeClassName must be a DNS label, was " + name);
            }
            this.runtimeClassName = name;
            return this;
        }

        /**
         * The non-root uid and gid the pod runs as. Default 1000:1000.
         *
         * @param uid not 0
         * @param gid not 0
         * @return this builder
         */
        public Builder user(long uid, long gid) {
            if (uid <= 0 || gid <= 0) {
                throw new IllegalArgumentException("uid and gid must be positive (never root), were " + uid + ":" + gid);
            }
            this.uid = uid;
            this.gid = gid;
            return this;
        }

        /**
         * Sets the memory of a sandbox whose {@code Limits.memoryMib} is unset. Default 1024 MiB.
         *
         * @param mib the memory in MiB, at least 16
         * @throws IllegalArgumentException when below 16
         * @return this builder
         */
        public Builder defaultMemoryMib(long mib) {
            this.memoryMib = atLeast(mib, 16, "defaultMemoryMib");
            return this;
        }

        /**
         * The emptyDir sizeLimit of the work directory and of {@code /tmp}, and the ephemeral-storage limit
         * (default 512 MiB): the kubelet evicts the pod some time after they are passed, so this is a
         * backstop, not an exact disk bound ({@code Limits.diskMib} is refused).
         *
         * @param mib mebibytes
         * @return this builder
         */
        public Builder defaultDiskMib(long mib) {
            this.diskMib = atLeast(mib, 8, "defaultDiskMib");
            return this;
        }

        /**
         * Sets the CPUs of a sandbox whose {@code Limits.vcpus} is unset. Default 1.
         *
         * @param vcpus at least 1
         * @return this builder
         * @throws IllegalArgumentException when below 1
         */
        public Builder defaultVcpus(int vcpus) {
            this.cpu = Long.toString(atLeast(vcpus, 1, "defaultVcpus"));
            return this;
        }

        /**
         * Sets the deadline of each API call. Default 30 s.
         *
         * @param timeout positive
         * @return this builder
         * @throws IllegalArgumentException when null, zero or negative
         */
        public Builder requestTimeout(Duration timeout) {
            this.requestTimeout = positive(timeout, "requestTimeout");
            return this;
        }

        /**
         * Sets how long a create waits for the sandbox to be Ready (image pulls count): no read of its Ready
         * condition starts after it, and the create then fails (retriable) with the last status seen.
         * Default 120 s.
         *
         * @param timeout positive
         * @return this builder
         * @throws IllegalArgumentException when null, zero or negative
         */
        public Builder readyTimeout(Duration timeout) {
            this.readyTimeout = positive(timeout, "readyTimeout");
            return this;
        }

        /**
         * The longest pause between two reads of a Sandbox's (or claim's) Ready condition; the pauses start
         * at 20 ms (or this, when shorter) and grow 1.5 times plus 1 ms each ({@link
         * dev.sandbox4j.spi.Backoff#poll}) up to this. Default 250 ms: on a cluster a pod takes seconds, so a
         * shorter one mostly adds GETs.
         *
         * @param max at least 5 ms
         * @return this builder
         */
        public Builder readyPoll(Duration max) {
            if (max == null || max.toMillis() < 5) {
                throw new IllegalArgumentException("readyPoll must be at least 5 ms, was " + max);
            }
            this.readyPoll = max;
            return this;
        }

        /**
         * The required acknowledgement that the cluster's CNI enforces NetworkPolicy (Calico, Cilium,
         * Antrea, GKE Dataplane V2, ...). The runner cannot observe enforcement: without it every egress
         * rule, deny-all included, is ignored by the cluster. {@link #build()} refuses until this is true.
         *
         * @param enforced true when the cluster enforces NetworkPolicy
         * @return this builder
         */
        public Builder networkPolicyEnforced(boolean enforced) {
            this.networkPolicyEnforced = enforced;
            return this;
        }

        /**
         * Creates sandboxes by {@code SandboxClaim} against this {@code SandboxWarmPool} (agent-sandbox's
         * extensions) for specs whose egress is {@code egress}, instead of a Sandbox per sandbox. In v1beta1 a
         * claim names a warm pool and the pool names the {@code SandboxTemplate}; a pool of 0 replicas makes
         * every claim a cold start. Call once per egress (one template fixes one egress); once any pool is
         * set, a spec whose egress has no pool is refused before any call, and so are resource limits and
         * environment variables (the template fixes them).
         *
         * <p>Before every claim the runner reads the pool, its template and the NetworkPolicy the controller
         * made from it, and refuses ({@code UnsupportedPolicyException}, no claim sent) unless the template's
         * pod spec is exactly the one this runner builds (see {@link KubernetesSandboxRunner#sandboxTemplate})
         * and its policy is exactly {@code egress}; once the claim is bound, the Sandbox it got is checked to
         * be the claim's alone and to run that pod spec under that policy, else the claim is deleted.
         *
         * @param egress the egress of the pool's template
         * @param warmPool the SandboxWarmPool's name
         * @return this builder
         */
        public Builder warmPool(dev.sandbox4j.policy.EgressPolicy egress, String warmPool) {
            Objects.requireNonNull(egress, "egress");
            if (warmPool == null || !DNS_LABEL.matcher(warmPool).matches()) {
                throw new IllegalArgumentException("warmPool must be a DNS label, was " + warmPool);
            }
            warmPools.removeIf(e -> e.getKey().equals(egress));
            warmPools.add(Map.entry(egress, warmPool));
            return this;
        }

        /**
         * Builds the runner; the cluster is first called at the first open.
         *
         * @return the runner
         * @throws SandboxConfigurationException without the NetworkPolicy acknowledgement
         */
        public KubernetesSandboxRunner build() {
            if (!networkPolicyEnforced) {
                throw new SandboxConfigurationException("kubernetes: egress is a NetworkPolicy, which only a CNI that enforces"
                        + " NetworkPolicy applies (a cluster without one runs every sandbox with full egress, and the runner"
                        + " cannot tell): confirm it with KubernetesSandboxRunner.builder().networkPolicyEnforced(true) or "
                        + NETWORK_POLICY_ENFORCED_VARIABLE + "=true");
            }
            Config c = config != null ? config : Config.autoConfigure(null);
            if (masterUrl != null) {
                c.setMasterUrl(masterUrl);
            }
            // never a re-sent request: a create (or an exec) goes once; the lifecycle retries what is idempotent
            c.setRequestRetryBackoffLimit(0);
            c.setRequestTimeout((int) requestTimeout.toMillis());
            String ns = namespace != null ? namespace : c.getNamespace() != null ? c.getNamespace() : "default";
            KubernetesClient client = new KubernetesClientBuilder().withConfig(c).withHttpClientFactory(new JdkHttpClientFactory())
                    .build();
            KubernetesSettings s = new KubernetesSettings(ns, image, runtimeClassName, uid, gid, "/sandbox", memoryMib, diskMib,
                    cpu, requestTimeout, readyTimeout, Duration.ofSeconds(5), 32 * 1024, warmPools, readyPoll);
            // the driver's re-sent creates wait as the lifecycle's retries do
            dev.sandbox4j.spi.Backoff backoff = dev.sandbox4j.spi.Backoff.builder()
                    .base(lifecycleOptions().retryBaseDelay().orElse(Duration.ofMillis(500))).build();
            KubernetesDriver driver = new KubernetesDriver(s, client, Clock.systemUTC(), backoff);
            ManagedSandboxRunner<KubernetesHandle> lifecycle = ManagedSandboxRunner.builder(driver)
                    .options(lifecycleOptions()).build();
            return new KubernetesSandboxRunner(lifecycle, driver, "KubernetesSandboxRunner[" + c.getMasterUrl() + ", namespace="
                    + ns + ", image=" + image + (runtimeClassName == null ? "" : ", runtimeClass=" + runtimeClassName)
                    + (warmPools.isEmpty() ? "" : ", warmPools=" + warmPools.stream().map(Map.Entry::getValue).toList()) + "]");
        }

        private static long atLeast(long n, long min, String what) {
            if (n < min) {
                throw new IllegalArgumentException(what + " must be at least " + min + ", was " + n);
            }
            return n;
        }

        private static Duration positive(Duration d, String what) {
            if (d == null || d.isNegative() || d.isZero()) {
                throw new IllegalArgumentException(what + " must be positive, was " + d);
            }
            return d;
        }

        @Override
        public String toString() {
            return "KubernetesSandboxRunner.Builder[image=" + image + ", namespace=" + namespace + "]";
        }
    }
}
