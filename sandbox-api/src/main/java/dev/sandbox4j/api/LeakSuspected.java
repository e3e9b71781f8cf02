package dev.sandbox4j.api;

import java.util.Objects;

/**
 * A sandbox that may still exist with no one left to tear it down, as told to
 * {@link LifecycleListener#leakSuspected}. Counted the same way as {@link LifecycleStats}: a
 * {@link Reason#TEARDOWN_FAILED} is one of its {@code teardownFailures}, a
 * {@link Reason#CREATE_UNRESOLVED} one of its {@code unresolved}.
 *
 * @since 0.1.0
 */
public final class LeakSuspected {
    /**
     * Why a leak is suspected.
     *
     * @since 0.1.0
     */
    public enum Reason {
        /** The teardown of an opened sandbox ended in {@link Teardown#FAILED}. */
        TEARDOWN_FAILED,
        /** The search after an ambiguous create ended without finding and destroying it or proving it absent. */
        CREATE_UNRESOLVED
    }

    private final String provider;
    private final Reason reason;
    private final String runId;

    private LeakSuspected(String provider, Reason reason, String runId) {
        this.provider = Objects.requireNonNull(provider, "provider");
        this.reason = Objects.requireNonNull(reason, "reason");
        this.runId = Objects.requireNonNull(runId, "runId");
    }

    /**
     * A suspected leak.
     *
     * @param provider the provider name
     * @param reason   why
     * @param runId    the run id the sandbox carries (pass it to a sweep)
     * @return the value
     */
    public static LeakSuspected of(String provider, Reason reason, String runId) {
        return new LeakSuspected(provider, reason, runId);
    }

    /** @return the provider name */
    public String provider() {
        return provider;
    }

    /** @return why a leak is suspected */
    public Reason reason() {
        return reason;
    }

    /** @return the run id the sandbox carries */
    public String runId() {
        return runId;
    }

    @Override
    public String toString() {
        return "LeakSuspected[" + provider + " " + reason + " run id " + runId + "]";
    }
}
