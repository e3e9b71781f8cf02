package dev.sandbox4j.api;

import java.util.List;
import java.util.Objects;

/**
 * What a runner's lifecycle did with sandboxes that were not torn down on the caller's path: creates
 * whose outcome was unknown (a lost or garbled answer, a timeout, a dropped connection, a 5xx, an
 * interrupt) and teardowns that failed. Counts since the runner was built; a snapshot.
 *
 * <p>{@link #unresolvedRunIds()} lists run ids whose sandbox may still exist (lookup kept failing,
 * the runner closed before the search ended, or a teardown failed): pass them to
 * {@link SandboxRunner#sweep} later. Each such sandbox is still bounded by its own lifetime.
 *
 * @since 0.1.0
 */
public final class LifecycleStats {
    /** A runner with nothing to report (the local runner, which has no ambiguous create). */
    public static final LifecycleStats EMPTY = builder().build();

    private final long ambiguousCreates;
    private final long lateCreatesDestroyed;
    private final long resolvedNothingCreated;
    private final long unresolved;
    private final int pending;
    private final long teardownFailures;
    private final List<String> unresolvedRunIds;

    private LifecycleStats(Builder b) {
        this.ambiguousCreates = b.ambiguousCreates;
        this.lateCreatesDestroyed = b.lateCreatesDestroyed;
        this.resolvedNothingCreated = b.resolvedNothingCreated;
        this.unresolved = b.unresolved;
        this.pending = b.pending;
        this.teardownFailures = b.teardownFailures;
        this.unresolvedRunIds = List.copyOf(b.unresolvedRunIds);
    }

    /** {@return a new builder with every count at zero and no run ids} */
    public static Builder builder() {
        return new Builder();
    }

    /** {@return the creates whose outcome was unknown, each then looked up by run id} */
    public long ambiguousCreates() {
        return ambiguousCreates;
    }

    /** {@return the sandboxes found by run id after an ambiguous create, and destroyed} */
    public long lateCreatesDestroyed() {
        return lateCreatesDestroyed;
    }

    /**
     * {@return the ambiguous creates that provably created nothing: no sandbox with the run id once the
     * search window had passed}
     */
    public long resolvedNothingCreated() {
        return resolvedNothingCreated;
    }

    /**
     * {@return the ambiguous creates whose search ended without proof either way (lookups failing, teardown
     * failing, runner closed)}
     */
    public long unresolved() {
        return unresolved;
    }

    /** {@return the searches still going on in the background} */
    public int pending() {
        return pending;
    }

    /** {@return the teardowns of open sandboxes that ended in {@link Teardown#FAILED}} */
    public long teardownFailures() {
        return teardownFailures;
    }

    /**
     * {@return the run ids (the most recent 1,000 per runner) whose sandbox may still exist; unmodifiable}
     */
    public List<String> unresolvedRunIds() {
        return unresolvedRunIds;
    }

    /**
     * This snapshot plus another runner's (for decorators over several runners): counts added, run ids
     * concatenated.
     *
     * @param o the other snapshot; not null
     * @return the sum
     */
    public LifecycleStats plus(LifecycleStats o) {
        Objects.requireNonNull(o, "o");
        Builder b = builder()
                .ambiguousCreates(ambiguousCreates + o.ambiguousCreates)
                .lateCreatesDestroyed(lateCreatesDestroyed + o.lateCreatesDestroyed)
                .resolvedNothingCreated(resolvedNothingCreated + o.resolvedNothingCreated)
                .unresolved(unresolved + o.unresolved)
                .pending(pending + o.pending)
                .teardownFailures(teardownFailures + o.teardownFailures);
        b.unresolvedRunIds = new java.util.ArrayList<>(unresolvedRunIds);
        b.unresolvedRunIds.addAll(o.unresolvedRunIds);
        return b.build();
    }

    @Override
    public String toString() {
        return "LifecycleStats[ambiguousCreates=" + ambiguousCreates + ", lateCreatesDestroyed=" + lateCreatesDestroyed
                + ", resolvedNothingCreated=" + resolvedNothingCreated + ", unresolved=" + unresolved
                + ", pending=" + pending + ", teardownFailures=" + teardownFailures
                + ", unresolvedRunIds=" + unresolvedRunIds + "]";
    }

    /**
     * Builds a {@link LifecycleStats} snapshot; for runners and decorators. Every count defaults to zero.
     *
     * @since 0.1.0
     */
    public static final class Builder {
        private long ambiguousCreates;
        private long lateCreatesDestroyed;
        private long resolvedNothingCreated;
        private long unresolved;
        private int pending;
        private long teardownFailures;
        private List<String> unresolvedRunIds = List.of();

        private Builder() {
        }

        /**
         * Sets the count of creates whose outcome was unknown.
         *
         * @param n zero or more
         * @return this builder
         */
        public Builder ambiguousCreates(long n) {
            this.ambiguousCreates = n;
            return this;
        }

        /**
         * Sets the count of sandboxes found and destroyed after an ambiguous create.
         *
         * @param n zero or more
         * @return this builder
         */
        public Builder lateCreatesDestroyed(long n) {
            this.lateCreatesDestroyed = n;
            return this;
        }

        /**
         * Sets the count of ambiguous creates that provably created nothing.
         *
         * @param n zero or more
         * @return this builder
         */
        public Builder resolvedNothingCreated(long n) {
            this.resolvedNothingCreated = n;
            return this;
        }

        /**
         * Sets the count of ambiguous creates whose search ended without proof either way.
         *
         * @param n zero or more
         * @return this builder
         */
        public Builder unresolved(long n) {
            this.unresolved = n;
            return this;
        }

        /**
         * Sets the number of searches still going on.
         *
         * @param n zero or more
         * @return this builder
         */
        public Builder pending(int n) {
            this.pending = n;
            return this;
        }

        /**
         * Sets the count of teardowns that failed.
         *
         * @param n zero or more
         * @return this builder
         */
        public Builder teardownFailures(long n) {
            this.teardownFailures = n;
            return this;
        }

        /**
         * Sets the run ids whose sandbox may still exist. Default none.
         *
         * @param ids copied
         * @return this builder
         */
        public Builder unresolvedRunIds(List<String> ids) {
            this.unresolvedRunIds = List.copyOf(ids);
            return this;
        }

        /** {@return the snapshot} */
        public LifecycleStats build() {
            return new LifecycleStats(this);
        }
    }
}
