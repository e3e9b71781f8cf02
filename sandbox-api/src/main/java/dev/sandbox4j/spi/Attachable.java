package dev.sandbox4j.spi;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeSet;
import dev.sandbox4j.spi.lifecycle.ManagedSandboxRunner;

/**
 * What {@link SandboxDriver#attach} found for a sandbox id: a handle to run commands with, the labels
 * the provider reports, whether it still runs, and how the egress (and lifetime) the provider reports
 * differ from the expected spec, where the provider reports them. {@link ManagedSandboxRunner#attach}
 * decides from it; the driver only reads.
 *
 * @param <H> the adapter's handle type
 * @since 0.1.0
 */
public final class Attachable<H extends SandboxHandle> {
    private final H handle;
    private final Map<String, String> labels;
    private final String state;
    private final boolean running;
    private final boolean policyReported;
    private final List<String> reportedDifferences;

    private Attachable(Builder<H> b) {
        this.handle = Objects.requireNonNull(b.handle, "handle");
        this.labels = Map.copyOf(b.labels);
        this.state = Objects.requireNonNull(b.state, "state");
        this.running = b.running;
        this.policyReported = b.policyReported;
        this.reportedDifferences = List.copyOf(b.differences);
    }

    /**
     * Starts an answer for one sandbox.
     *
     * @param handle the handle later execs and the teardown use
     * @param <H> the adapter's handle type
     * @return a builder
     */
    public static <H extends SandboxHandle> Builder<H> builder(H handle) {
        return new Builder<>(handle);
    }

    /** @return the handle */
    public H handle() {
        return handle;
    }

    /** @return the labels (tags, metadata) as the provider reports them, the run id among them */
    public Map<String, String> labels() {
        return labels;
    }

    /** @return the provider's word for the sandbox's state, for messages */
    public String state() {
        return state;
    }

    /** @return whether the sandbox runs and takes commands */
    public boolean running() {
        return running;
    }

    /** @return whether the provider reported the sandbox's egress, so it was compared */
    public boolean policyReported() {
        return policyReported;
    }

    /** @return one sentence per rule where the provider's report differs from the expected spec */
    public List<String> reportedDifferences() {
        return reportedDifferences;
    }

    @Override
    public String toString() {
        return "Attachable[" + handle.id() + " " + state + ", " + labels + ", differences " + reportedDifferences + "]";
    }

    /**
     * Builds an {@link Attachable}.
     *
     * @param <H> the adapter's handle type
     * @since 0.1.0
     */
    public static final class Builder<H extends SandboxHandle> {
        private final H handle;
        private Map<String, String> labels = Map.of();
        private String state = "unknown";
        private boolean running;
        private boolean policyReported;
        private final List<String> differences = new ArrayList<>();

        private Builder(H handle) {
            this.handle = handle;
        }

        /**
         * @param labels the labels as reported
         * @return this builder
         */
        public Builder<H> labels(Map<String, String> labels) {
            this.labels = Objects.requireNonNull(labels, "labels");
            return this;
        }

        /**
         * @param state the provider's state word
         * @param running whether that state takes commands
         * @return this builder
         */
        public Builder<H> state(String state, boolean running) {
            this.state = state == null ? "unknown" : state;
            this.running = running;
            return this;
        }

        /**
         * Compares one reported field with what the driver would send for the expected spec, as sets
         * (order is not policy); a difference is recorded naming the field and both values.
         *
         * @param field the wire field, e.g. {@code network.allowOut}
         * @param expected what a create for the expected spec sends
         * @param reported what the provider reports
         * @return this builder
         */
        public Builder<H> compare(String field, Collection<?> expected, Collection<?> reported) {
            policyReported = true;
            TreeSet<String> e = new TreeSet<>();
            expected.forEach(x -> e.add(String.valueOf(x)));
            TreeSet<String> r = new TreeSet<>();
            reported.forEach(x -> r.add(String.valueOf(x)));
            if (!e.equals(r)) {
                differences.add(field + ": the provider reports " + r + ", the expected spec needs " + e);
            }
            return this;
        }

        /**
         * Compares one reported scalar with what the driver would send for the expected spec.
         *
         * @param field the wire field
         * @param expected what a create for the expected spec sends (null: absent)
         * @param reported what the provider reports (null: absent)
         * @return this builder
         */
        public Builder<H> compare(String field, Object expected, Object reported) {
            policyReported = true;
            if (!Objects.equals(String.valueOf(expected), String.valueOf(reported))) {
                differences.add(field + ": the provider reports " + reported + ", the expected spec needs " + expected);
            }
            return this;
        }

        /**
         * Records a difference the driver found its own way (for example a reported egress weaker than
         * the expected one).
         *
         * @param sentence one sentence naming the rule
         * @return this builder
         */
        public Builder<H> difference(String sentence) {
            policyReported = true;
            differences.add(Objects.requireNonNull(sentence, "sentence"));
            return this;
        }

        /**
         * Notes that the provider reported the egress and the driver compared it, without a difference.
         *
         * @return this builder
         */
        public Builder<H> policyReported() {
            policyReported = true;
            return this;
        }

        /** @return the answer */
        public Attachable<H> build() {
            return new Attachable<>(this);
        }
    }
}
