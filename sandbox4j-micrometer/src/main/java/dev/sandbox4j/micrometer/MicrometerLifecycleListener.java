package dev.sandbox4j.micrometer;

import dev.sandbox4j.api.LeakSuspected;
import dev.sandbox4j.api.LifecycleEvent;
import dev.sandbox4j.api.LifecycleListener;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import java.util.Locale;
import java.util.Objects;

/**
 * A {@link LifecycleListener} that makes one Micrometer {@link Observation} per sandbox create, exec
 * and teardown, and counts suspected leaks.
 *
 * <pre>{@code
 * ObservationRegistry observations = ObservationRegistry.create();
 * observations.observationConfig().observationHandler(new DefaultMeterObservationHandler(meters));
 * SandboxRunner runner = LocalSandboxRunner.builder()
 *         .lifecycleListener(MicrometerLifecycleListener.builder(observations).meterRegistry(meters).build())
 *         .build();
 * }</pre>
 *
 * <h2>What is recorded</h2>
 * <ul>
 *   <li>observations {@value #CREATE} (a whole open: create attempts, input files, setup commands,
 *       lock-down), {@value #EXEC} (one exec) and {@value #TEARDOWN} (one teardown with its retries:
 *       on the caller's path, in sweeps, and of sandboxes found after an ambiguous create), with the
 *       low-cardinality keys {@code provider}, {@code outcome} and {@code exception} (see
 *       {@link SandboxObservationConvention}). With a {@code DefaultMeterObservationHandler} each
 *       becomes a timer of that name (and a long-task timer {@code <name>.active}); with a tracing
 *       handler, a span, opened in scope on the calling thread so the provider's HTTP calls nest in it;
 *       an operation that threw is also {@link Observation#error(Throwable) marked} with its exception;</li>
 *   <li>the counter {@value #LEAKS} (keys {@code provider} and {@code reason}: {@code teardown_failed}
 *       or {@code create_unresolved}) when a {@link Builder#meterRegistry meter registry} is given;
 *       without one, each suspected leak is an observation {@value #LEAKS} of its own, so handlers still
 *       see it.</li>
 * </ul>
 * Never code, output, environment values, credentials or sandbox ids.
 *
 * @since 0.1.0
 */
public final class MicrometerLifecycleListener implements LifecycleListener {
    /** The create observation's name. */
    public static final String CREATE = "sandbox4j.create";
    /** The exec observation's name. */
    public static final String EXEC = "sandbox4j.exec";
    /** The teardown observation's name. */
    public static final String TEARDOWN = "sandbox4j.teardown";
    /** The suspected-leak counter's name. */
    public static final String LEAKS = "sandbox4j.leaks.suspected";

    private final ObservationRegistry observations;
    private final SandboxObservationConvention convention;
    private final LeakCounter leaks;

    private MicrometerLifecycleListener(Builder b) {
        this.observations = b.observations;
        this.convention = b.convention;
        this.leaks = b.meterRegistry == null ? null : LeakCounter.of(b.meterRegistry);
    }

    /**
     * A listener recording into {@code observations}.
     *
     * @param observations the registry observations go to
     * @return a builder
     */
    public static Builder builder(ObservationRegistry observations) {
        return new Builder(observations);
    }

    @Override
    public Operation started(LifecycleEvent.Phase phase, String provider) {
        if (observations.isNoop()) {
            return Operation.NONE;
        }
        SandboxObservationContext context = new SandboxObservationContext(phase, provider);
        Observation observation = Observation.createNotStarted(convention, SandboxObservationConvention.DEFAULT,
                () -> context, observations);
        if (observation.isNoop()) {
            return Operation.NONE;
        }
        context.setName(nameOf(phase));
        observation.start();
        Observation.Scope scope = observation.openScope();
        return event -> {
            context.ended(event);
            event.error().ifPresent(observation::error);
            scope.close();
            observation.stop();
        };
    }

    @Override
    public void leakSuspected(LeakSuspected leak) {
        String reason = leak.reason().name().toLowerCase(Locale.ROOT);
        if (leaks != null) {
            leaks.increment(leak.provider(), reason);
            return;
        }
        Observation.createNotStarted(LEAKS, observations)
                .lowCardinalityKeyValue(SandboxObservationConvention.PROVIDER, leak.provider())
                .lowCardinalityKeyValue("reason", reason)
                .start().stop();
    }

    static String nameOf(LifecycleEvent.Phase phase) {
        switch (phase) {
            case CREATE:
                return CREATE;
            case EXEC:
                return EXEC;
            default:
                return TEARDOWN;
        }
    }

    @Override
    public String toString() {
        return "MicrometerLifecycleListener[" + (leaks == null ? "leaks as observations" : "leak counter") + "]";
    }

    /**
     * Builds a {@link MicrometerLifecycleListener}.
     *
     * @since 0.1.0
     */
    public static final class Builder {
        private final ObservationRegistry observations;
        private SandboxObservationConvention convention;
        private Object meterRegistry;

        private Builder(ObservationRegistry observations) {
            this.observations = Objects.requireNonNull(observations, "observations");
        }

        /**
         * Names and tags the observations instead of the {@link SandboxObservationConvention#DEFAULT default}.
         *
         * @param convention the convention
         * @return this
         */
        public Builder convention(SandboxObservationConvention convention) {
            this.convention = convention;
            return this;
        }

        /**
         * Where the {@value #LEAKS} counter goes (needs micrometer-core). Default none: a suspected
         * leak is then an observation of its own.
         *
         * @param meterRegistry an {@code io.micrometer.core.instrument.MeterRegistry}
         * @return this
         */
        public Builder meterRegistry(io.micrometer.core.instrument.MeterRegistry meterRegistry) {
            this.meterRegistry = Objects.requireNonNull(meterRegistry, "meterRegistry");
            return this;
        }

        /** @return the listener */
        public MicrometerLifecycleListener build() {
            return new MicrometerLifecycleListener(this);
        }
    }
}
