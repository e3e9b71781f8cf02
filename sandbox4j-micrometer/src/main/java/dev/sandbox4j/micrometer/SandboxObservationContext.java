package dev.sandbox4j.micrometer;

import dev.sandbox4j.api.LifecycleEvent;
import io.micrometer.observation.Observation;
import java.util.Objects;
import java.util.Optional;

/**
 * The context of one sandbox4j observation: which phase, which provider, and, once it ended, the
 * {@link LifecycleEvent} saying how. Conventions read it to name and tag the observation.
 *
 * @since 0.1.0
 */
public final class SandboxObservationContext extends Observation.Context {
    private final LifecycleEvent.Phase phase;
    private final String provider;
    private volatile LifecycleEvent event;

    /**
     * A context for an operation just started.
     *
     * @param phase    create, exec or teardown
     * @param provider the runner's provider name
     */
    public SandboxObservationContext(LifecycleEvent.Phase phase, String provider) {
        this.phase = Objects.requireNonNull(phase, "phase");
        this.provider = Objects.requireNonNull(provider, "provider");
    }

    /** @return create, exec or teardown */
    public LifecycleEvent.Phase phase() {
        return phase;
    }

    /** @return the runner's provider name */
    public String provider() {
        return provider;
    }

    /** @return how the operation ended; empty while it runs */
    public Optional<LifecycleEvent> event() {
        return Optional.ofNullable(event);
    }

    void ended(LifecycleEvent event) {
        this.event = event;
    }
}
