package dev.sandbox4j.api;

/**
 * Hears what a runner's lifecycle does, for metrics and traces: every create (the whole
 * {@link SandboxRunner#open open}: create attempts, input files, setup commands, egress lock-down),
 * every exec and every teardown (on the caller's path, in sweeps and of sandboxes found after an
 * ambiguous create), and every sandbox that may have leaked ({@link LeakSuspected}).
 *
 * <p>Events carry the provider and the outcome (status, teardown outcome, exception), never code,
 * output, environment values or credentials. Set one on a runner's builder
 * ({@code lifecycleListener(...)}) or through {@link SandboxRunners#byName(String, java.util.Map,
 * LifecycleListener)}; {@code dev.sandbox4j:sandbox4j-micrometer} turns them into Micrometer
 * observations.
 *
 * <p>{@link #started} is called on the thread that does the work, just before it, and the returned
 * {@link Operation}'s {@link Operation#ended ended} on the same thread just after, so a listener may
 * open a tracing scope around the provider's own calls. A listener must be thread-safe and quick; an
 * exception it throws is logged and never changes what the lifecycle does.
 *
 * @since 0.1.0
 */
public interface LifecycleListener {
    /** Hears nothing. */
    LifecycleListener NONE = new LifecycleListener() {
        @Override
        public String toString() {
            return "LifecycleListener.NONE";
        }
    };

    /**
     * A create, exec or teardown is about to start.
     *
     * @param phase    which one
     * @param provider the runner's provider name, e.g. {@code e2b}
     * @return what to tell when it ends; never null
     */
    default Operation started(LifecycleEvent.Phase phase, String provider) {
        return Operation.NONE;
    }

    /**
     * A sandbox may still exist that no one will tear down (its teardown failed, or the search after
     * an ambiguous create ended without proof either way). Its own lifetime still bounds it; the run
     * id can be passed to {@link SandboxRunner#sweep}. May be called on any thread, the runner's reaper
     * included.
     *
     * @param leak what is suspected
     */
    default void leakSuspected(LeakSuspected leak) {
    }

    /**
     * One create, exec or teardown under way.
     *
     * @since 0.1.0
     */
    interface Operation {
        /** Does nothing when told. */
        Operation NONE = event -> { };

        /**
         * The operation ended, with its outcome.
         *
         * @param event how it ended
         */
        void ended(LifecycleEvent event);
    }
}
