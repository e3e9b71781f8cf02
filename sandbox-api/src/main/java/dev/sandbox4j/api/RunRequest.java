package dev.sandbox4j.api;

import dev.sandbox4j.policy.EgressPolicy;
import dev.sandbox4j.policy.Language;
import java.time.Duration;
import java.util.Objects;

/**
 * A one-shot run: a {@link SandboxSpec} and one {@link Execution}.
 *
 * @since 0.1.0
 */
public final class RunRequest {
    private final SandboxSpec spec;
    private final Execution execution;

    private RunRequest(SandboxSpec spec, Execution execution) {
        this.spec = spec;
        this.execution = execution;
    }

    public static RunRequest of(SandboxSpec spec, Execution execution) {
        return new RunRequest(Objects.requireNonNull(spec, "spec"), Objects.requireNonNull(execution, "execution"));
    }

    /** Python code in a deny-all sandbox with the defaults. */
    public static RunRequest python(String code) {
        return of(SandboxSpec.defaults(), Execution.python(code));
    }

    public static Builder builder(String code) {
        return new Builder(code);
    }

    public SandboxSpec spec() {
        return spec;
    }

    /**
     * The spec a one-shot run opens its sandbox with: unless the spec sets a lifetime, the setup
     * budgets plus the execution budget plus {@link SandboxSpec#LIFETIME_MARGIN}, so the provider's
     * own clock kills what a crashed client leaves behind.
     */
    public SandboxSpec oneShotSpec() {
        if (spec.lifetime().isPresent()) {
            return spec;
        }
        java.time.Duration lifetime = execution.budget().plus(SandboxSpec.LIFETIME_MARGIN)
                .plus(spec.setupBudget().multipliedBy(spec.setupCommands().size()));
        return spec.toBuilder().defaultLifetime(lifetime).build();
    }

    public Execution execution() {
        return execution;
    }

    @Override
    public String toString() {
        return "RunRequest[" + spec + ", " + execution + "]";
    }

    /** Shorthand for the common case; use {@link #of} for full control. */
    public static final class Builder {
        private final Execution.Builder execution;
        private SandboxSpec.Builder spec = SandboxSpec.builder();

        private Builder(String code) {
            this.execution = Execution.builder(code);
        }

        public Builder language(Language language) {
            execution.language(language);
            return this;
        }

        public Builder budget(Duration budget) {
            execution.budget(budget);
            return this;
        }

        public Builder outputLimit(int chars) {
            execution.outputLimit(chars);
            return this;
        }

        /** A path or glob to collect before teardown; see {@link Execution#collect()}. */
        public Builder collect(String glob) {
            execution.collect(glob);
            return this;
        }

        public Builder egress(EgressPolicy egress) {
            spec.egress(egress);
            return this;
        }

        public Builder spec(SandboxSpec spec) {
            this.spec = spec.toBuilder();
            return this;
        }

        public RunRequest build() {
            return of(spec.build(), execution.build());
        }
    }
}
