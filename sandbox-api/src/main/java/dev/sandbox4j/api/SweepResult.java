package dev.sandbox4j.api;

import java.util.List;

/**
 * What {@link SandboxRunner#sweep} found and did. Ids are the provider's sandbox ids.
 *
 * @since 0.1.0
 */
public final class SweepResult {
    private final int listed;
    private final List<String> destroyed;
    private final List<String> alreadyGone;
    private final List<String> failed;

    private SweepResult(Builder b) {
        this.listed = b.listed;
        this.destroyed = List.copyOf(b.destroyed);
        this.alreadyGone = List.copyOf(b.alreadyGone);
        this.failed = List.copyOf(b.failed);
    }

    /** {@return a new builder: nothing listed, nothing destroyed} */
    public static Builder builder() {
        return new Builder();
    }

    /**
     * {@return the number of sandboxes of this library (and owner, where the sweep was scoped to it) the
     * provider listed}
     */
    public int listed() {
        return listed;
    }

    /** {@return the ids of the sandboxes the sweep destroyed} */
    public List<String> destroyed() {
        return destroyed;
    }

    /** {@return the ids of the sandboxes that matched but were gone by the time of the teardown} */
    public List<String> alreadyGone() {
        return alreadyGone;
    }

    /**
     * {@return the ids of the sandboxes that matched and whose teardown failed (their lifetime still bounds
     * them)}
     */
    public List<String> failed() {
        return failed;
    }

    @Override
    public String toString() {
        return "SweepResult[listed=" + listed + ", destroyed=" + destroyed + ", alreadyGone=" + alreadyGone
                + ", failed=" + failed + "]";
    }

    /**
     * Builds a {@link SweepResult}; for runners. Every count and list defaults to zero or empty.
     *
     * @since 0.1.0
     */
    public static final class Builder {
        private int listed;
        private List<String> destroyed = List.of();
        private List<String> alreadyGone = List.of();
        private List<String> failed = List.of();

        private Builder() {
        }

        /**
         * Sets how many sandboxes the provider listed.
         *
         * @param n zero or more
         * @return this builder
         */
        public Builder listed(int n) {
            this.listed = n;
            return this;
        }

        /**
         * Sets the ids of the sandboxes destroyed.
         *
         * @param ids copied
         * @return this builder
         */
        public Builder destroyed(List<String> ids) {
            this.destroyed = List.copyOf(ids);
            return this;
        }

        /**
         * Sets the ids of the sandboxes found gone at teardown.
         *
         * @param ids copied
         * @return this builder
         */
        public Builder alreadyGone(List<String> ids) {
            this.alreadyGone = List.copyOf(ids);
            return this;
        }

        /**
         * Sets the ids of the sandboxes whose teardown failed.
         *
         * @param ids copied
         * @return this builder
         */
        public Builder failed(List<String> ids) {
            this.failed = List.copyOf(ids);
            return this;
        }

        /** {@return the result} */
        public SweepResult build() {
            return new SweepResult(this);
        }
    }
}
