package dev.sandbox4j.spring;

import dev.sandbox4j.api.LifecycleListener;
import dev.sandbox4j.micrometer.MicrometerLifecycleListener;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.observation.ObservationRegistry;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * A {@link MicrometerLifecycleListener} as the runner's {@link LifecycleListener} when the application
 * has an {@link ObservationRegistry} bean (Spring Boot's actuator makes one): observations
 * {@code sandbox4j.create}, {@code sandbox4j.exec}, {@code sandbox4j.teardown} and, with a
 * {@code MeterRegistry} bean, the counter {@code sandbox4j.leaks.suspected}. Off with
 * {@code sandbox4j.observations.enabled=false}; replaced by any {@code LifecycleListener} bean of the
 * application's.
 *
 * @since 0.1.0
 */
@AutoConfiguration(before = Sandbox4jAutoConfiguration.class, afterName = {
        "org.springframework.boot.actuate.autoconfigure.observation.ObservationAutoConfiguration",
        "org.springframework.boot.micrometer.observation.autoconfigure.ObservationAutoConfiguration",
        "org.springframework.boot.actuate.autoconfigure.metrics.MetricsAutoConfiguration",
        "org.springframework.boot.actuate.autoconfigure.metrics.CompositeMeterRegistryAutoConfiguration"})
@ConditionalOnClass(ObservationRegistry.class)
@ConditionalOnBean(ObservationRegistry.class)
@ConditionalOnProperty(prefix = "sandbox4j.observations", name = "enabled", matchIfMissing = true)
public class Sandbox4jObservationAutoConfiguration {

    /** Creates the auto-configuration (Spring does). */
    public Sandbox4jObservationAutoConfiguration() {
    }

    /** With micrometer-core on the classpath: leaks go to the MeterRegistry bean when there is one. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(name = "io.micrometer.core.instrument.MeterRegistry")
    static class WithMeters {
        @Bean
        @ConditionalOnMissingBean
        LifecycleListener sandbox4jLifecycleListener(ObservationRegistry observations,
                ObjectProvider<MeterRegistry> meters) {
            MicrometerLifecycleListener.Builder b = MicrometerLifecycleListener.builder(observations);
            MeterRegistry m = meters.getIfUnique();
            if (m != null) {
                b.meterRegistry(m);
            }
            return b.build();
        }
    }

    /** Without micrometer-core: each suspected leak is an observation of its own. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnMissingClass("io.micrometer.core.instrument.MeterRegistry")
    static class WithoutMeters {
        @Bean
        @ConditionalOnMissingBean
        LifecycleListener sandbox4jLifecycleListener(ObservationRegistry observations) {
            return MicrometerLifecycleListener.builder(observations).build();
        }
    }
}
