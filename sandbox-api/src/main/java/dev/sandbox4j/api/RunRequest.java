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

    /**
     * A run of {@code execution} in a sandbox made to {@code spec}.
     *
     * @param spec not null
     * @param execution not null
     * @return the request
     */
    public static RunRequest of(SandboxSpec spec, Execution execution) {
        return new RunRequest(Objects.requireNonNull(spec, "spec"), Objects.requireNonNull(execution, "execution"));
    }

    /**
     * Python code in a deny-all sandbox with the defaults.
     *
     * @param code the Python source; not null
     * @return the request
     */
    public static RunRequest python(String code) {
        return of(SandboxSpec.defaults(), Execution.python(code));
    }

    /**
     * Starts a request for {@code code}: Python in a deny-all sandbox with the defaults.
     *
     * @param code the source; not null
     * @return a new builder
     */
    public static Builder builder(String code) {
        return new Builder(code);
    }

    /**
     * {@return the sandbox the run opens, as given (see {@link #oneShotSpec()} for its default lifetime)}
     */
    public SandboxSpec spec() {
        return spec;
    }

    /**
     * The spec a one-shot run opens its sandbox with: unless the spec sets a lifetime, the setup budgets plus
     * the execution budget plus {@link SandboxSpec#LIFETIME_MARGIN}, so the provider's own clock kills what a
     * crashed client leaves behind.
     *
     * @return the spec with that default lifetime
     */
    public SandboxSpec oneShotSpec() {
        if (spec.lifetime().isPresent()) {
            return spec;
        }
        java.time.Duration lifetime = execution.budget().plus(SandboxSpec.LIFETIME_MARGIN)
                .plus(spec.setupBudget().multipliedBy(spec.setupCommands().size()));
        return spec.toBuilder().defaultLifetime(lifetime).build();
    }

    /** {@return the code to run and its budget and output limits} */
    public Execution execution() {
        return execution;
    }

    @Override
    public String toString() {
        return "RunRequest[" + spec + ", " + execution + "]";
    }

    /**
     * Shorthand for the common case; use {@link #of} for full control.
     *
     * @since 0.1.0
     */
    public static final class Builder {
        private final Execution.Builder execution;
        private SandboxSpec.Builder spec = SandboxSpec.builder();

        private Builder(String code) {
            this.execution = Execution.builder(code);
        }

        /**
         * Sets the interpreter, as {@link Execution.Builder#language} does.
         *
         * @param language not null
         * @return this builder
         */
        public Builder language(Language language) {
            execution.language(language);
            return this;
        }

        /**
         * Sets the budget, as {@link Execution.Builder#budget} does.
         *
         * @param budget positive
         * @return this builder
         * @throws IllegalArgumentException when the budget is null, zero or negative
         */
        public Builder budget(Duration budget) {
            execution.budget(budget);
            return this;
        }

        /**
         * Sets the characters kept per stream, as {@link Execution.Builder#outputLimit} does.
         *
         * @param chars zero or more
         * @return this builder
         * @throws IllegalArgumentException when negative
         */
        public Builder outputLimit(int chars) {
            execution.outputLimit(chars);
            return this;
        }

        /**
         * Adds a path or glob to collect before teardown; see {@link Execution#collect()}.
         *
         * @param glob relative to the working directory
         * @return this builder
         * @throws IllegalArgumentException when the glob is empty, absolute, or holds {@code ..} or a control
         *     character
         */
        public Builder collect(String glob) {
            execution.collect(glob);
            return this;
        }

        /**
         * Sets the egress the code runs under. Default deny-all.
         *
         * @param egress not null
         * @return this builder
         */
        public Builder egress(EgressPolicy egress) {
            spec.egress(egress);
            return this;
        }

        /**
         * Replaces every sandbox setting made so far (the egress included) with those of {@code spec}.
         *
         * @param spec not null
         * @return this builder
         */
        public Builder spec(SandboxSpec spec) {
            this.spec = spec.toBuilder();
            return this;
        }

        /** {@return the request} */
        public RunRequest build() {
            return of(spec.build(), execution.build());
        }
    }
}
