package dev.sandbox4j.spi;

import dev.sandbox4j.api.SandboxSpec;
import dev.sandbox4j.spi.internal.PolicyLabel;
import dev.sandbox4j.policy.EgressPolicy;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * What an adapter's {@link SandboxDriver#create} must send in its one create call: the run id (as a
 * label, metadata or name, so a lost create can be found again), the lifetime for the provider's
 * clock, the egress to start with, and the spec.
 *
 * @since 0.1.0
 */
public final class CreateRequest {
    /** The label key that carries the run id on every sandbox. */
    public static final String RUN_ID_LABEL = "sandbox4j-run-id";
    /** The label key that carries the runner's owner, when the application set one. */
    public static final String OWNER_LABEL = "sandbox4j-owner";
    /**
     * The label key that records the policy the sandbox was created with (lifetime and a digest of the
     * code's egress), checked by an attach.
     */
    public static final String POLICY_LABEL = "sandbox4j-policy";
    /** The label key that carries the end of the requested lifetime (epoch seconds), sent with the owner. */
    public static final String EXPIRES_LABEL = "sandbox4j-expires";

    private final String runId;
    private final SandboxSpec spec;
    private final Duration lifetime;
    private final EgressPolicy initialEgress;
    private final Map<String, String> labels;
    private final dev.sandbox4j.api.Execution firstProcess;

    private CreateRequest(CreateRequest r, dev.sandbox4j.api.Execution firstProcess) {
        this.runId = r.runId;
        this.spec = r.spec;
        this.lifetime = r.lifetime;
        this.initialEgress = r.initialEgress;
        this.labels = r.labels;
        this.firstProcess = firstProcess;
    }

    CreateRequest(String runId, SandboxSpec spec) {
        this(runId, spec, null, null);
    }

    CreateRequest(String runId, SandboxSpec spec, String owner, java.time.Instant now) {
        this.runId = runId;
        this.spec = spec;
        this.lifetime = spec.effectiveLifetime();
        this.initialEgress = spec.needsLockDown() ? spec.setupEgress() : spec.egress();
        Map<String, String> l = new LinkedHashMap<>();
        l.put(RUN_ID_LABEL, runId);
        l.put(POLICY_LABEL, PolicyLabel.of(lifetime, spec.egress()));
        if (owner != null) {
            l.put(OWNER_LABEL, owner);
            l.put(EXPIRES_LABEL, Long.toString(now.plus(lifetime).getEpochSecond()));
        }
        l.putAll(spec.labels());
        this.labels = java.util.Collections.unmodifiableMap(l);
        this.firstProcess = null;
    }

    /**
     * Public for adapters' tests; the lifecycle makes these itself. Without owner and expiry labels.
     *
     * @param runId the run id to label the sandbox with
     * @param spec the sandbox spec
     * @return the request
     */
    public static CreateRequest of(String runId, SandboxSpec spec) {
        return new CreateRequest(runId, spec);
    }

    /**
     * Public for adapters' tests: with the owner and expiry labels a runner with an owner sends.
     *
     * @param runId the run id to label the sandbox with
     * @param spec the sandbox spec
     * @param owner the owner label's value; not null
     * @param now the create's time, from which the expiry label is computed
     * @return the request
     */
    public static CreateRequest of(String runId, SandboxSpec spec, String owner, java.time.Instant now) {
        return new CreateRequest(runId, spec, java.util.Objects.requireNonNull(owner, "owner"), now);
    }

    /**
     * {@return the run id: lower-case letters and digits, unique per sandbox, chosen before the create call}
     */
    public String runId() {
        return runId;
    }

    /** {@return the spec the sandbox is created to: files, env, setup and limits besides the egress} */
    public SandboxSpec spec() {
        return spec;
    }

    /** {@return the sandbox's lifetime on the provider's clock: {@link SandboxSpec#effectiveLifetime()}} */
    public Duration lifetime() {
        return lifetime;
    }

    /**
     * The egress to create the sandbox with: the setup egress when trusted setup commands need a wider
     * network than the code (the lifecycle then calls {@link SandboxDriver#updateEgress}), else the
     * final egress.
     *
     * @return the setup egress or the final egress
     */
    public EgressPolicy initialEgress() {
        return initialEgress;
    }

    /**
     * {@return the labels to send: the run-id label first, the policy label, the owner and expiry labels when
     * set, then the caller's labels; unmodifiable}
     */
    public Map<String, String> labels() {
        return labels;
    }

    /**
     * The same request, for a sandbox whose own first process is {@code execution}
     * ({@link SandboxDriver#runsAsFirstProcess}): the lifecycle makes it for a one-shot run the driver
     * accepted; the create makes the sandbox without starting it, and the handle's one exec starts it.
     *
     * @param execution the one-shot's execution; not null
     * @return a new request with {@link #firstProcess()} set
     */
    public CreateRequest withFirstProcess(dev.sandbox4j.api.Execution execution) {
        return new CreateRequest(this, java.util.Objects.requireNonNull(execution, "execution"));
    }

    /**
     * {@return the execution the sandbox runs as its own first process (a one-shot run), or empty for a
     * sandbox that waits for execs (a session, or a one-shot the driver runs as an exec)}
     */
    public java.util.Optional<dev.sandbox4j.api.Execution> firstProcess() {
        return java.util.Optional.ofNullable(firstProcess);
    }

    @Override
    public String toString() {
        return "CreateRequest[runId=" + runId + ", lifetime=" + lifetime + ", egress=" + initialEgress
                + (firstProcess == null ? "" : ", first process") + "]";
    }
}
