package dev.sandbox4j.spring;

import dev.sandbox4j.api.ConcurrencyLimiter;
import dev.sandbox4j.api.FailoverRunner;
import dev.sandbox4j.api.LifecycleListener;
import dev.sandbox4j.api.SandboxRunner;
import dev.sandbox4j.api.SandboxRunners;
import dev.sandbox4j.api.tool.CodeExecutionTool;
import dev.sandbox4j.policy.EgressPolicy;
import dev.sandbox4j.policy.Language;
import dev.sandbox4j.policy.Limits;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;

/**
 * The {@link SandboxRunner}, the optional {@link ConcurrencyLimiter} and the {@link CodeExecutionTool}
 * from {@code sandbox4j.*} properties ({@link Sandbox4jProperties}); every bean is
 * {@code @ConditionalOnMissingBean}, so an application overrides any of them by declaring its own.
 *
 * <p>The runner is the {@code sandbox4j.provider}, or a {@link FailoverRunner} over it and
 * {@code sandbox4j.failover}, each found by {@link SandboxRunners#byName(String, Map, LifecycleListener)}
 * and configured from its own environment variables (read through {@link ProviderEnvironment}), with
 * the application's {@link LifecycleListener} bean if there is one (the observation auto-configuration
 * provides one). The tool checks the policy and limits against the runner's capabilities when it is
 * built, so a policy the provider cannot enforce fails the application's startup with the rule named.
 *
 * @since 0.1.0
 */
@AutoConfiguration
@EnableConfigurationProperties(Sandbox4jProperties.class)
public class Sandbox4jAutoConfiguration {

    /** Creates the auto-configuration (Spring does). */
    public Sandbox4jAutoConfiguration() {
    }

    /**
     * The process environment, where providers read their credentials.
     *
     * @return {@link ProviderEnvironment#SYSTEM}
     */
    @Bean
    @ConditionalOnMissingBean
    public ProviderEnvironment sandbox4jProviderEnvironment() {
        return ProviderEnvironment.SYSTEM;
    }

    /**
     * The runner: the provider, or failover over the provider and {@code sandbox4j.failover}.
     *
     * @param properties  the properties
     * @param environment where providers read their variables
     * @param listener    the lifecycle listener, if any
     * @return the runner, closed with the context
     */
    @Bean(destroyMethod = "close")
    @ConditionalOnMissingBean
    public SandboxRunner sandboxRunner(Sandbox4jProperties properties, ProviderEnvironment environment,
            ObjectProvider<LifecycleListener> listener) {
        LinkedHashSet<String> names = new LinkedHashSet<>();
        names.add(properties.getProvider().trim());
        properties.getFailover().forEach(n -> names.add(n.trim()));
        LifecycleListener l = listener.getIfUnique(() -> LifecycleListener.NONE);
        Map<String, String> env = environment.variables();
        List<SandboxRunner> runners = new ArrayList<>();
        try {
            for (String name : names) {
                runners.add(SandboxRunners.byName(name, env, l));
            }
        } catch (RuntimeException e) {
            runners.forEach(SandboxRunner::close);
            throw e;
        }
        if (runners.size() == 1) {
            return runners.get(0);
        }
        FailoverRunner.Builder b = FailoverRunner.builder()
                .failoverOnUnsupportedPolicy(properties.isFailoverOnUnsupportedPolicy());
        runners.forEach(b::runner);
        return b.build();
    }

    /**
     * Caps on sandboxes open at once, when {@code sandbox4j.caps.per-key} is set. Declare your own to
     * share permits across replicas (a {@code RedisPermitStore} from {@code sandbox-redis}).
     *
     * @param properties the properties
     * @return the limiter
     */
    @Bean
    @ConditionalOnMissingBean
    @ConditionalOnProperty(prefix = "sandbox4j.caps", name = "per-key")
    public ConcurrencyLimiter sandbox4jConcurrencyLimiter(Sandbox4jProperties properties) {
        Sandbox4jProperties.Caps caps = properties.getCaps();
        ConcurrencyLimiter.Builder b = ConcurrencyLimiter.builder().perKey(caps.getPerKey()).maxWait(caps.getMaxWait());
        if (caps.getGlobal() != null) {
            b.global(caps.getGlobal());
        }
        return b.build();
    }

    /**
     * The code-execution tool with the configured policy, limits and budgets, under the caps when
     * there is a limiter.
     *
     * @param runner     the runner
     * @param properties the properties
     * @param limiter    the limiter, if any
     * @return the tool
     * @throws dev.sandbox4j.policy.UnsupportedPolicyException naming each rule the runner cannot enforce
     */
    @Bean
    @ConditionalOnMissingBean
    public CodeExecutionTool codeExecutionTool(SandboxRunner runner, Sandbox4jProperties properties,
            ObjectProvider<ConcurrencyLimiter> limiter) {
        // getIfAvailable: two limiters fail startup instead of leaving the tool uncapped
        ConcurrencyLimiter caps = limiter.getIfAvailable();
        if (caps == null && properties.getCaps().getGlobal() != null) {
            throw new IllegalStateException("sandbox4j.caps.global is set but sandbox4j.caps.per-key is not: caps are on"
                    + " only with a per-key cap (set both), so the global cap would be ignored");
        }
        SandboxRunner toolRunner = caps == null ? runner : caps.forKey(runner, properties.getCaps().getKey());
        CodeExecutionTool.Builder b = CodeExecutionTool.builder(toolRunner)
                .egress(egress(properties.getEgress()))
                .limits(limits(properties.getLimits()))
                .defaultBudget(properties.getBudget())
                .maxBudget(properties.getMaxBudget())
                .sessionLifetime(properties.getSessionLifetime())
                .outputLimit(properties.getOutputLimit());
        if (!properties.getLanguages().isEmpty()) {
            b.languages(properties.getLanguages().toArray(new Language[0]));
        }
        if (properties.getDefaultLanguage() != null) {
            b.defaultLanguage(properties.getDefaultLanguage());
        }
        return b.build();
    }

    static EgressPolicy egress(Sandbox4jProperties.Egress e) {
        if (e.isAllowAll()) {
            if (!e.getAllowedDomains().isEmpty() || !e.getAllowedCidrs().isEmpty()) {
                throw new IllegalStateException("set sandbox4j.egress.allow-all or sandbox4j.egress.allowed-domains"
                        + " / allowed-cidrs, not both");
            }
            EgressPolicy.Builder b = EgressPolicy.builder(EgressPolicy.Default.ALLOW);
            e.getDeniedCidrs().forEach(b::denyCidr);
            return b.build();
        }
        EgressPolicy.Builder b = EgressPolicy.builder(EgressPolicy.Default.DENY).allowDomains(e.getAllowedDomains());
        e.getAllowedCidrs().forEach(b::allowCidr);
        e.getDeniedCidrs().forEach(b::denyCidr);
        return b.build();
    }

    static Limits limits(Sandbox4jProperties.Limits l) {
        Limits.Builder b = Limits.builder();
        if (l.getMemoryMib() != null) {
            b.memoryMib(l.getMemoryMib());
        }
        if (l.getVcpus() != null) {
            b.vcpus(l.getVcpus());
        }
        if (l.getDiskMib() != null) {
            b.diskMib(l.getDiskMib());
        }
        return b.build();
    }
}
