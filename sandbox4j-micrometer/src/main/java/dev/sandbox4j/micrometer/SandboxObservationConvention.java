package dev.sandbox4j.micrometer;

import io.micrometer.common.KeyValue;
import io.micrometer.common.KeyValues;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationConvention;
import java.util.Locale;

/**
 * Names and tags sandbox4j's observations. The default: names {@code sandbox4j.create},
 * {@code sandbox4j.exec} and {@code sandbox4j.teardown}; contextual names {@code sandbox create},
 * {@code sandbox exec}, {@code sandbox teardown}; low-cardinality keys {@code provider},
 * {@code outcome} (see {@link dev.sandbox4j.api.LifecycleEvent#outcome()}) and {@code exception}
 * (the simple class name, or {@code none}); no high-cardinality keys (no sandbox ids, never code or
 * output). Implement it, or extend the default, to rename or add keys.
 *
 * @since 0.1.0
 */
public interface SandboxObservationConvention extends ObservationConvention<SandboxObservationContext> {
    /** The default convention. */
    SandboxObservationConvention DEFAULT = new SandboxObservationConvention() { };

    /** The key of the provider tag. */
    String PROVIDER = "provider";
    /** The key of the outcome tag. */
    String OUTCOME = "outcome";
    /** The key of the exception tag. */
    String EXCEPTION = "exception";

    @Override
    default boolean supportsContext(Observation.Context context) {
        return context instanceof SandboxObservationContext;
    }

    /**
     * Null: each observation keeps its phase's name ({@code sandbox4j.create}, {@code sandbox4j.exec},
     * {@code sandbox4j.teardown}); a convention returning a name renames all three.
     */
    @Override
    default String getName() {
        return null;
    }

    @Override
    default String getContextualName(SandboxObservationContext context) {
        return "sandbox " + context.phase().name().toLowerCase(Locale.ROOT);
    }

    @Override
    default KeyValues getLowCardinalityKeyValues(SandboxObservationContext context) {
        return KeyValues.of(
                KeyValue.of(PROVIDER, context.provider()),
                KeyValue.of(OUTCOME, context.event().map(e -> e.outcome()).orElse("unknown")),
                KeyValue.of(EXCEPTION, context.event().map(e -> e.exceptionType()).orElse("none")));
    }
}
