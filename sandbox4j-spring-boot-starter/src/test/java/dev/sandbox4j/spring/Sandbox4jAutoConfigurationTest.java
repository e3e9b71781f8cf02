package dev.sandbox4j.spring;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sandbox4j.api.Attempt;
import dev.sandbox4j.compose.ConcurrencyLimiter;
import dev.sandbox4j.compose.FailoverRunner;
import dev.sandbox4j.api.LifecycleListener;
import dev.sandbox4j.api.RunRequest;
import dev.sandbox4j.api.RunResult;
import dev.sandbox4j.api.Sandbox;
import dev.sandbox4j.api.exception.SandboxConfigurationException;
import dev.sandbox4j.api.SandboxRunner;
import dev.sandbox4j.api.SandboxSpec;
import dev.sandbox4j.tool.CodeExecutionTool;
import dev.sandbox4j.local.LocalSandboxRunner;
import dev.sandbox4j.micrometer.MicrometerLifecycleListener;
import dev.sandbox4j.policy.EgressPolicy;
import dev.sandbox4j.policy.Language;
import dev.sandbox4j.policy.UnsupportedPolicyException;
import dev.sandbox4j.spring.ai.Sandbox4jSpringAiAutoConfiguration;
import dev.sandbox4j.spring.ai.SandboxCodeTool;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.observation.DefaultMeterObservationHandler;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.micrometer.observation.ObservationRegistry;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.springframework.ai.tool.ToolCallbackProvider;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.context.properties.bind.UnboundConfigurationPropertiesException;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/** Properties to beans, overrides and failing startups, under Spring Boot's ApplicationContextRunner. */
class Sandbox4jAutoConfigurationTest {
    private final ApplicationContextRunner contexts = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(Sandbox4jObservationAutoConfiguration.class,
                    Sandbox4jAutoConfiguration.class, Sandbox4jSpringAiAutoConfiguration.class));

    private static Throwable rootCause(Throwable t) {
        while (t.getCause() != null) {
            t = t.getCause();
        }
        return t;
    }

    @Test
    void propertiesBecomeTheRunnerTheToolAndItsCallbacks() {
        contexts.withPropertyValues("sandbox4j.provider=local", "sandbox4j.budget=5s", "sandbox4j.max-budget=20s",
                "sandbox4j.output-limit=50", "sandbox4j.session-lifetime=2m", "sandbox4j.languages=python,bash",
                "sandbox4j.default-language=bash", "sandbox4j.egress.allow-all=true").run(context -> {
                    assertThat(context).hasNotFailed();
                    assertThat(context.getBean(SandboxRunner.class).name()).isEqualTo("local");
                    CodeExecutionTool tool = context.getBean(CodeExecutionTool.class);
                    assertThat(tool.defaultBudget()).isEqualTo(Duration.ofSeconds(5));
                    assertThat(tool.maxBudget()).isEqualTo(Duration.ofSeconds(20));
                    assertThat(tool.outputLimit()).isEqualTo(50);
                    assertThat(tool.languages()).containsExactly(Language.PYTHON, Language.BASH);
                    assertThat(tool.spec().egress()).isEqualTo(EgressPolicy.allowAll());
                    assertThat(tool.runner()).isSameAs(context.getBean(SandboxRunner.class));
                    assertThat(tool.execute("echo $((6 * 7))", null, null)).contains("\n42\n");
                    ToolCallbackProvider callbacks = context.getBean("sandbox4jToolCallbacks", ToolCallbackProvider.class);
                    assertThat(callbacks.getToolCallbacks()).extracting(c -> c.getToolDefinition().name())
                            .containsExactly("run_code");
                    assertThat(context).doesNotHaveBean(ConcurrencyLimiter.class);
                    assertThat(context).doesNotHaveBean(LifecycleListener.class);
                });
    }

    @Test
    void theDefaultsAreDenyAllEgressAndTheToolsOwnLimits() {
        contexts.run(context -> {
            CodeExecutionTool tool = context.getBean(CodeExecutionTool.class);
            assertThat(tool.spec().egress()).isEqualTo(EgressPolicy.denyAll());
            assertThat(tool.defaultBudget()).isEqualTo(Duration.ofSeconds(30));
            assertThat(tool.maxBudget()).isEqualTo(Duration.ofSeconds(120));
            assertThat(tool.outputLimit()).isEqualTo(8_000);
        });
    }

    @Test
    void aPolicyTheProviderCannotEnforceFailsStartupWithTheRuleNamed() {
        // default allow with a denied CIDR: the one egress form the local runner refuses (its egress proxy
        // enforces allow lists of domains and CIDRs)
        contexts.withPropertyValues("sandbox4j.egress.allow-all=true", "sandbox4j.egress.denied-cidrs=10.0.0.0/8").run(context -> {
            assertThat(context).hasFailed();
            Throwable root = rootCause(context.getStartupFailure());
            assertThat(root).isInstanceOf(UnsupportedPolicyException.class);
            assertThat(root.getMessage()).contains("default-allow egress with deny");
        });
        contexts.withPropertyValues("sandbox4j.limits.vcpus=64").run(context -> {
            // the local runner enforces vCPUs only as root with cgroups; either way 64 is refused or enforced, never ignored
            if (context.getStartupFailure() != null) {
                assertThat(rootCause(context.getStartupFailure())).isInstanceOf(UnsupportedPolicyException.class)
                        .hasMessageContaining("vcpu");
            } else {
                assertThat(context.getBean(CodeExecutionTool.class).spec().limits().vcpus()).hasValue(64);
            }
        });
    }

    @Test
    void contradictoryEgressAndAMissingProviderModuleFailStartupClearly() {
        contexts.withPropertyValues("sandbox4j.egress.allow-all=true", "sandbox4j.egress.allowed-domains=pypi.org")
                .run(context -> assertThat(rootCause(context.getStartupFailure()))
                        .isInstanceOf(IllegalStateException.class).hasMessageContaining("not both"));
        contexts.withPropertyValues("sandbox4j.provider=daytona").run(context -> assertThat(
                rootCause(context.getStartupFailure())).isInstanceOf(SandboxConfigurationException.class)
                .hasMessageContaining("add dev.sandbox4j:sandbox-daytona"));
    }

    @Test
    void aGlobalCapWithoutAPerKeyCapFailsStartupInsteadOfBeingIgnored() {
        contexts.withPropertyValues("sandbox4j.caps.global=5").run(context -> assertThat(
                rootCause(context.getStartupFailure())).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("sandbox4j.caps.per-key"));
    }

    @Test
    void keysAreNeverProperties() {
        // the provider reads E2B_API_KEY from its environment; a key in the properties fails startup unbound
        for (String key : List.of("sandbox4j.api-key", "sandbox4j.e2b.api-key", "sandbox4j.e2b-api-key")) {
            contexts.withPropertyValues("sandbox4j.provider=e2b", key + "=e2b_not_a_real_key").run(context -> {
                assertThat(context).hasFailed();
                UnboundConfigurationPropertiesException unbound = findCause(context.getStartupFailure(),
                        UnboundConfigurationPropertiesException.class);
                assertThat(unbound).as(key).isNotNull();
                assertThat(unbound.getUnboundProperties()).extracting(p -> p.getName().toString()).containsExactly(key);
            });
        }
        // and without the environment variable the provider says which variable to set
        contexts.withPropertyValues("sandbox4j.provider=e2b").withBean(ProviderEnvironment.class, () -> Map::of)
                .run(context -> assertThat(rootCause(context.getStartupFailure()))
                        .isInstanceOf(SandboxConfigurationException.class).hasMessageContaining("E2B_API_KEY"));
    }

    private static <T extends Throwable> T findCause(Throwable t, Class<T> type) {
        for (Throwable c = t; c != null; c = c.getCause()) {
            if (type.isInstance(c)) {
                return type.cast(c);
            }
        }
        return null;
    }

    @Test
    void anApplicationsOwnBeansReplaceEachPiece() {
        contexts.withUserConfiguration(OwnRunner.class).run(context -> {
            assertThat(context).hasSingleBean(SandboxRunner.class);
            assertThat(context.getBean(CodeExecutionTool.class).runner()).isSameAs(OwnRunner.RUNNER);
        });
        contexts.withUserConfiguration(OwnTool.class).run(context -> {
            assertThat(context.getBean(CodeExecutionTool.class).maxBudget()).isEqualTo(Duration.ofSeconds(7));
            assertThat(context.getBean(SandboxCodeTool.class)).isNotNull();
        });
        contexts.withBean("otherTools", ToolCallbackProvider.class, () -> ToolCallbackProvider.from(List.of()))
                .run(context -> assertThat(context.getBeansOfType(ToolCallbackProvider.class))
                        .containsOnlyKeys("otherTools", "sandbox4jToolCallbacks"));
    }

    @Test
    void withoutSpringAiThereAreNoToolCallbacksButTheToolIsThere() {
        contexts.withClassLoader(new FilteredClassLoader(ToolCallbackProvider.class)).run(context -> {
            assertThat(context).hasNotFailed();
            assertThat(context).hasSingleBean(CodeExecutionTool.class);
            assertThat(context).doesNotHaveBean(SandboxCodeTool.class);
        });
    }

    @Test
    void capsPutTheToolUnderALimiter() {
        contexts.withPropertyValues("sandbox4j.caps.per-key=1", "sandbox4j.caps.global=3", "sandbox4j.caps.max-wait=0s")
                .run(context -> {
                    ConcurrencyLimiter limiter = context.getBean(ConcurrencyLimiter.class);
                    assertThat(limiter.perKey()).isEqualTo(1);
                    assertThat(limiter.global()).isEqualTo(3);
                    SandboxRunner capped = context.getBean(CodeExecutionTool.class).runner();
                    assertThat(capped).isNotSameAs(context.getBean(SandboxRunner.class));
                    try (Sandbox held = capped.open(SandboxSpec.defaults())) {
                        assertThat(limiter.inUse("application")).isEqualTo(1);
                        // the key's one permit is taken: the tool reports the capacity error as text
                        assertThat(context.getBean(CodeExecutionTool.class).execute("print(1)", null, null))
                                .contains("no sandbox capacity is free right now");
                    }
                    assertThat(limiter.inUse()).isZero();
                });
    }

    @Test
    void failoverOpensOnTheNextProviderInOrder() throws IOException {
        int closedPort;
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            closedPort = s.getLocalPort();
        }
        String url = "http://127.0.0.1:" + closedPort;
        contexts.withPropertyValues("sandbox4j.provider=e2b", "sandbox4j.failover=local")
                .withBean(ProviderEnvironment.class, () -> () -> Map.of("E2B_API_KEY", "e2b_test_key",
                        "E2B_API_URL", url, "E2B_SANDBOX_URL", url))
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    SandboxRunner runner = context.getBean(SandboxRunner.class);
                    assertThat(runner).isInstanceOf(FailoverRunner.class);
                    assertThat(((FailoverRunner) runner).runners()).extracting(SandboxRunner::name)
                            .containsExactly("e2b", "local");
                    RunResult r = runner.run(RunRequest.python("print(6 * 7)"));
                    assertThat(r.stdout()).isEqualTo("42\n");
                    assertThat(r.attempts()).extracting(Attempt::runner).startsWith("e2b").endsWith("local");
                });
    }

    @Test
    void anObservationRegistryBeanTurnsObservationsOn() {
        contexts.withUserConfiguration(Observed.class).run(context -> {
            assertThat(context.getBean(LifecycleListener.class)).isInstanceOf(MicrometerLifecycleListener.class);
            context.getBean(CodeExecutionTool.class).execute("print(1)", null, null);
            MeterRegistry meters = context.getBean(MeterRegistry.class);
            assertThat(meters.get("sandbox4j.exec").tags("provider", "local", "outcome", "exited").timer().count())
                    .isEqualTo(1);
            assertThat(meters.get("sandbox4j.create").tags("outcome", "success").timer().count()).isEqualTo(1);
            assertThat(meters.get("sandbox4j.teardown").tags("outcome", "destroyed").timer().count()).isEqualTo(1);
        });
        contexts.withUserConfiguration(Observed.class).withPropertyValues("sandbox4j.observations.enabled=false")
                .run(context -> assertThat(context).doesNotHaveBean(LifecycleListener.class));
        contexts.withUserConfiguration(Observed.class).withBean(LifecycleListener.class, () -> LifecycleListener.NONE)
                .run(context -> assertThat(context.getBean(LifecycleListener.class)).isSameAs(LifecycleListener.NONE));
    }

    @Configuration(proxyBeanMethods = false)
    static class OwnRunner {
        static final SandboxRunner RUNNER = LocalSandboxRunner.create();

        @Bean
        SandboxRunner myRunner() {
            return RUNNER;
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class OwnTool {
        @Bean
        CodeExecutionTool myTool(SandboxRunner runner) {
            return CodeExecutionTool.builder(runner).defaultBudget(Duration.ofSeconds(5)).maxBudget(Duration.ofSeconds(7))
                    .build();
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class Observed {
        @Bean
        MeterRegistry meterRegistry() {
            return new SimpleMeterRegistry();
        }

        @Bean
        ObservationRegistry observationRegistry(MeterRegistry meters) {
            ObservationRegistry r = ObservationRegistry.create();
            r.observationConfig().observationHandler(new DefaultMeterObservationHandler(meters));
            return r;
        }
    }

    private static org.springframework.boot.diagnostics.FailureAnalysis analysis(Throwable startupFailure) {
        org.springframework.boot.diagnostics.FailureAnalysis a = new Sandbox4jPropertyFailureAnalyzer().analyze(startupFailure);
        assertThat(a).as("sandbox4j's analyzer reports it: " + startupFailure).isNotNull();
        return a;
    }

    @Test
    void sandbox4jsOwnRefusalsNameThePropertyItsValueAndTheFix() {
        String[][] cases = {
                {"sandbox4j.caps.per-key=0", "sandbox4j.caps.per-key=0", "1 or more"},
                {"sandbox4j.max-budget=5s", "sandbox4j.max-budget", "at most sandbox4j.max-budget"},
                {"sandbox4j.provider=daytona", "sandbox4j.provider=daytona", "module"},
                {"sandbox4j.provider=e2b", "sandbox4j.provider=e2b", "environment variables"},
                {"sandbox4j.egress.allow-all=true;sandbox4j.egress.denied-cidrs=10.0.0.0/8", "sandbox4j.egress", "cannot enforce"},
                {"sandbox4j.caps.global=5", "sandbox4j.caps.global=5", "sandbox4j.caps.per-key"},
                {"sandbox4j.output-limit=-1", "sandbox4j.output-limit=-1", "1 or more"},
        };
        for (String[] c : cases) {
            contexts.withPropertyValues(c[0].split(";")).run(context -> {
                assertThat(context).as(c[0]).hasFailed();
                org.springframework.boot.diagnostics.FailureAnalysis a = analysis(context.getStartupFailure());
                assertThat(a.getDescription()).as(c[0]).startsWith("sandbox4j cannot start with ").contains(c[1]);
                assertThat(a.getAction()).as(c[0]).contains(c[2]);
            });
        }
    }

    @Test
    void theCapsKeyIsAskedForAtEachCallSoAPerUserCapIsPerUser() {
        ThreadLocal<String> user = new ThreadLocal<>();
        contexts.withPropertyValues("sandbox4j.caps.per-key=1", "sandbox4j.caps.max-wait=0s")
                .withBean(SandboxKeyResolver.class, () -> user::get)
                .run(context -> {
                    ConcurrencyLimiter limiter = context.getBean(ConcurrencyLimiter.class);
                    SandboxRunner capped = context.getBean(CodeExecutionTool.class).runner();
                    user.set("alice");
                    try (Sandbox alice = capped.open(SandboxSpec.defaults())) {
                        assertThat(limiter.inUse("alice")).isEqualTo(1);
                        user.set("bob");
                        try (Sandbox bob = capped.open(SandboxSpec.defaults())) {
                            assertThat(limiter.inUse("bob")).isEqualTo(1);
                        }
                        user.set("alice");
                        assertThat(context.getBean(CodeExecutionTool.class).execute("print(1)", null, null))
                                .contains("no sandbox capacity is free right now");
                    }
                    assertThat(limiter.inUse()).isZero();
                });
        contexts.withPropertyValues("sandbox4j.caps.per-key=1").run(context ->
                assertThat(context.getBean(SandboxKeyResolver.class).key()).isEqualTo("application"));
    }
}
