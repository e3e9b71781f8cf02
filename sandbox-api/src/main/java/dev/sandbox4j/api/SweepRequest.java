package dev.sandbox4j.api;

import java.util.Collection;
import java.util.LinkedHashSet;
import java.util.Objects;
import java.util.Set;
import dev.sandbox4j.api.exception.SandboxException;

/**
 * Which of this library's sandboxes {@link SandboxRunner#sweep} destroys. A sweep only ever looks at
 * sandboxes carrying the library's run-id label, and, unless it names run ids only, only at those
 * carrying the owner label of the runner (set with the adapter's {@code owner(...)} builder method),
 * so one replica never destroys a sibling's live sandboxes. Of those it destroys the ones that match
 * any of:
 * <ul>
 *   <li>{@link Builder#expired()}: the lifetime the create asked for has passed (the provider should
 *       have killed it; it did not);</li>
 *   <li>{@link Builder#runIds}: the run ids the application names (e.g. {@link LifecycleStats#unresolvedRunIds()}
 *       or {@link SandboxException#runId()} recorded before a crash);</li>
 *   <li>{@link Builder#allOfOwner()}: every sandbox of this owner, for a replica that restarts under a
 *       stable owner name after a crash, when none of its old sandboxes can still be in use.</li>
 * </ul>
 *
 * @since 0.1.0
 */
public final class SweepRequest {
    private final boolean expired;
    private final boolean allOfOwner;
    private final Set<String> runIds;

    private SweepRequest(Builder b) {
        this.expired = b.expired;
        this.allOfOwner = b.allOfOwner;
        this.runIds = Set.copyOf(b.runIds);
    }

    /** {@return a new builder matching nothing yet; {@link Builder#build()} needs at least one criterion} */
    public static Builder builder() {
        return new Builder();
    }

    /**
     * Sandboxes of this owner whose requested lifetime has passed.
     *
     * @return the request
     */
    public static SweepRequest expired() {
        return builder().expired().build();
    }

    /**
     * The sandboxes with these run ids (owner or not: a run id is unique to one create).
     *
     * @param runIds at least one; none null
     * @return the request
     * @throws IllegalArgumentException when {@code runIds} is empty
     */
    public static SweepRequest runIds(Collection<String> runIds) {
        return builder().runIds(runIds).build();
    }

    /** {@return true when sandboxes of this owner whose requested lifetime has passed are destroyed} */
    public boolean includesExpired() {
        return expired;
    }

    /** {@return true when every sandbox of this owner is destroyed} */
    public boolean includesAllOfOwner() {
        return allOfOwner;
    }

    /**
     * {@return the run ids whose sandboxes are destroyed, whatever their owner; unmodifiable, may be empty}
     */
    public Set<String> runIdsToDestroy() {
        return runIds;
    }

    /** {@return true when this sweep needs the runner's owner label (expired or all-of-owner)} */
    public boolean needsOwner() {
        return expired || allOfOwner;
    }

    @Override
    public String toString() {
        return "SweepRequest[expired=" + expired + ", allOfOwner=" + allOfOwner + ", runIds=" + runIds + "]";
    }

    /**
     * Collects the criteria of a sweep; a sandbox matching any of them is destroyed.
     *
     * @since 0.1.0
     */
    public static final class Builder {
        private boolean expired;
        private boolean allOfOwner;
        private final Set<String> runIds = new LinkedHashSet<>();

        private Builder() {
        }

        /**
         * Also destroys this owner's sandboxes whose requested lifetime has passed.
         *
         * @return this builder
         */
        public Builder expired() {
            this.expired = true;
            return this;
        }

        /**
         * Also destroys every sandbox of this owner, in use or not.
         *
         * @return this builder
         */
        public Builder allOfOwner() {
            this.allOfOwner = true;
            return this;
        }

        /**
         * Also destroys the sandboxes with these run ids; adds to earlier calls.
         *
         * @param ids none null
         * @return this builder
         */
        public Builder runIds(Collection<String> ids) {
            for (String id : ids) {
                runIds.add(Objects.requireNonNull(id, "run id"));
            }
            return this;
        }

        /**
         * Also destroys the sandbox with this run id; adds to earlier calls.
         *
         * @param id not null
         * @return this builder
         */
        public Builder runId(String id) {
            runIds.add(Objects.requireNonNull(id, "run id"));
            return this;
        }

        /**
         * Builds the request.
         *
         * @return the request
         * @throws IllegalArgumentException when the sweep would match nothing
         */
        public SweepRequest build() {
            if (!expired && !allOfOwner && runIds.isEmpty()) {
                throw new IllegalArgumentException("a sweep needs expired(), allOfOwner() or run ids");
            }
            return new SweepRequest(this);
        }
    }
}
