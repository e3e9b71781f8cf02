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

    public static Builder builder() {
        return new Builder();
    }

    /** Sandboxes of this owner whose requested lifetime has passed. */
    public static SweepRequest expired() {
        return builder().expired().build();
    }

    /** The sandboxes with these run ids (owner or not: a run id is unique to one create). */
    public static SweepRequest runIds(Collection<String> runIds) {
        return builder().runIds(runIds).build();
    }

    public boolean includesExpired() {
        return expired;
    }

    public boolean includesAllOfOwner() {
        return allOfOwner;
    }

    public Set<String> runIdsToDestroy() {
        return runIds;
    }

    /** True when this sweep needs the runner's owner label (expired or all-of-owner). */
    public boolean needsOwner() {
        return expired || allOfOwner;
    }

    @Override
    public String toString() {
        return "SweepRequest[expired=" + expired + ", allOfOwner=" + allOfOwner + ", runIds=" + runIds + "]";
    }

    public static final class Builder {
        private boolean expired;
        private boolean allOfOwner;
        private final Set<String> runIds = new LinkedHashSet<>();

        private Builder() {
        }

        public Builder expired() {
            this.expired = true;
            return this;
        }

        public Builder allOfOwner() {
            this.allOfOwner = true;
            return this;
        }

        public Builder runIds(Collection<String> ids) {
            for (String id : ids) {
                runIds.add(Objects.requireNonNull(id, "run id"));
            }
            return this;
        }

        public Builder runId(String id) {
            runIds.add(Objects.requireNonNull(id, "run id"));
            return this;
        }

        /** @throws IllegalArgumentException when the sweep would match nothing */
        public SweepRequest build() {
            if (!expired && !allOfOwner && runIds.isEmpty()) {
                throw new IllegalArgumentException("a sweep needs expired(), allOfOwner() or run ids");
            }
            return new SweepRequest(this);
        }
    }
}
