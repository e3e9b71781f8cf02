package dev.sandbox4j.micrometer;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;

/**
 * The leak counter, in a class of its own so that micrometer-core (optional) is loaded only when a
 * meter registry was given.
 */
final class LeakCounter {
    private final MeterRegistry registry;

    private LeakCounter(MeterRegistry registry) {
        this.registry = registry;
    }

    static LeakCounter of(Object registry) {
        return new LeakCounter((MeterRegistry) registry);
    }

    void increment(String provider, String reason) {
        Counter.builder(MicrometerLifecycleListener.LEAKS)
                .description("Sandboxes that may still exist with no one left to tear them down")
                .tag(SandboxObservationConvention.PROVIDER, provider)
                .tag("reason", reason)
                .register(registry)
                .increment();
    }
}
