package dev.sandbox4j.spring;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sandbox4j.api.LifecycleListener;
import dev.sandbox4j.tool.CodeExecutionTool;
import dev.sandbox4j.micrometer.MicrometerLifecycleListener;
import dev.sandbox4j.spring.ai.Sandbox4jSpringAiAutoConfiguration;
import io.micrometer.core.instrument.MeterRegistry;
import org.junit.jupiter.api.Test;
import org.springframework.boot.actuate.autoconfigure.metrics.CompositeMeterRegistryAutoConfiguration;
import org.springframework.boot.actuate.autoconfigure.metrics.MetricsAutoConfiguration;
import org.springframework.boot.actuate.autoconfigure.metrics.export.simple.SimpleMetricsExportAutoConfiguration;
import org.springframework.boot.actuate.autoconfigure.observation.ObservationAutoConfiguration;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/**
 * With Spring Boot's actuator auto-configuration (its ObservationRegistry, its meter handler, its
 * MeterRegistry), listed in any order: the starter's listener is there and a tool call shows up in
 * the application's metrics.
 */
class ActuatorObservationTest {
    private final ApplicationContextRunner contexts = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(Sandbox4jSpringAiAutoConfiguration.class,
                    Sandbox4jAutoConfiguration.class, Sandbox4jObservationAutoConfiguration.class,
                    ObservationAutoConfiguration.class, MetricsAutoConfiguration.class,
                    SimpleMetricsExportAutoConfiguration.class, CompositeMeterRegistryAutoConfiguration.class));

    @Test
    void aToolCallIsInTheActuatorsMetrics() {
        contexts.run(context -> {
            assertThat(context).hasNotFailed();
            assertThat(context.getBean(LifecycleListener.class)).isInstanceOf(MicrometerLifecycleListener.class);
            String text = context.getBean(CodeExecutionTool.class).execute("print(6 * 7)", null, null);
            assertThat(text).contains("\n42\n");
            MeterRegistry meters = context.getBean(MeterRegistry.class);
            assertThat(meters.get("sandbox4j.create").tags("provider", "local", "outcome", "success").timer().count())
                    .isEqualTo(1);
            assertThat(meters.get("sandbox4j.exec").tags("provider", "local", "outcome", "exited", "exception", "none")
                    .timer().count()).isEqualTo(1);
            assertThat(meters.get("sandbox4j.teardown").tags("outcome", "destroyed").timer().count()).isEqualTo(1);
        });
    }

    @Test
    void offWhenAskedEvenWithTheActuator() {
        contexts.withPropertyValues("sandbox4j.observations.enabled=false")
                .run(context -> assertThat(context).doesNotHaveBean(LifecycleListener.class));
    }
}
