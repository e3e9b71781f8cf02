package dev.sandbox4j.spring;

import dev.sandbox4j.compose.ConcurrencyLimiter;
import dev.sandbox4j.compose.FailoverRunner;
import dev.sandbox4j.api.LifecycleListener;
import dev.sandbox4j.api.SandboxRunner;
import dev.sandbox4j.api.SandboxRunners;
import dev.sandbox4j.tool.CodeExecutionTool;
import dev.sandbox4j.policy.EgressPolicy;
import dev.sandbox4j.policy.Language;
import dev.sandbox4j.policy.Limits;
import dev.sandbox4j.policy.UnsupportedPolicyException;
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
        String provider = properties.getProvider().trim();
        try {
            for (String name : names) {
                try {
                    runners.add(SandboxRunners.byName(name, env, l));
                } catch (RuntimeException e) {
                    throw new Sandbox4jPropertyException(name.equals(provider) ? "sandbox4j.provider" : "sandbox4j.failover", name,
                            "Use one of local, docker, auto, e2b, vercel, daytona, modal; put its module"
                                    + " (dev.sandbox4j:sandbox-<name>) on the classpath and set the environment variables"
                                    + " the message names (credentials are never sandbox4j.* properties).", e);
                }
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
        ConcurrencyLimiter.Builder b = ConcurrencyLimiter.builder();
        property("sandbox4j.caps.per-key", caps.getPerKey(), "Set it to 1 or more (sandboxes open at once per key).",
                () -> b.perKey(caps.getPerKey()));
        property("sandbox4j.caps.max-wait", caps.getMaxWait(), "Set a duration of zero or more, such as 10s.",
                () -> b.maxWait(caps.getMaxWait()));
        if (caps.getGlobal() != null) {
            property("sandbox4j.caps.global", caps.getGlobal(), "Set it to 1 or more, and at least sandbox4j.caps.per-key.",
                    () -> b.global(caps.getGlobal()));
        }
        return property("sandbox4j.caps.global", caps.getGlobal(), "Set it to at least sandbox4j.caps.per-key, or remove it.",
                b::build);
    }

    /**
     * The caps key of each call: {@code sandbox4j.caps.key}, the same for every call. Declare your own
     * {@link SandboxKeyResolver} bean to cap per user.
     *
     * @param properties the properties
     * @return the resolver
     */
    @Bean
    @ConditionalOnMissingBean
    public SandboxKeyResolver sandbox4jKeyResolver(Sandbox4jProperties properties) {
        String key = properties.getCaps().getKey();
        return () -> key;
    }

    /**
     * The code-execution tool with the configured policy, limits and budgets, under the caps when
     * there is a limiter.
     *
     * @param runner     the runner
     * @param properties the properties
     * @param limiter    the limiter, if any
     * @param keys       the bean naming the caller's key for the caps, if any; else every call uses {@code sandbox4j.caps.key}
     * @return the tool
     * @throws dev.sandbox4j.policy.UnsupportedPolicyException naming each rule the runner cannot enforce
     */
    @Bean
    @ConditionalOnMissingBean
    public CodeExecutionTool codeExecutionTool(SandboxRunner runner, Sandbox4jProperties properties,
            ObjectProvider<ConcurrencyLimiter> limiter, ObjectProvider<SandboxKeyResolver> keys) {
        // getIfAvailable: two limiters fail startup instead of leaving the tool uncapped
        ConcurrencyLimiter caps = limiter.getIfAvailable();
        if (caps == null && properties.getCaps().getGlobal() != null) {
            throw new Sandbox4jPropertyException("sandbox4j.caps.global", properties.getCaps().getGlobal(),
                    "Set sandbox4j.caps.per-key too (caps are on only with a per-key cap), or remove sandbox4j.caps.global.",
                    new IllegalStateException("sandbox4j.caps.global is set but sandbox4j.caps.per-key is not: caps are on"
                            + " only with a per-key cap (set both), so the global cap would be ignored"));
        }
        String fixedKey = properties.getCaps().getKey();
        SandboxKeyResolver resolver = keys.getIfAvailable(() -> () -> fixedKey);
        SandboxRunner toolRunner = caps == null ? runner : new KeyedRunner(runner, caps, resolver);
        Sandbox4jProperties.Egress egressProperties = properties.getEgress();
        CodeExecutionTool.Builder b = CodeExecutionTool.builder(toolRunner);
        property("sandbox4j.egress", describe(egressProperties), "Give domains (example.com, *.example.com) and CIDRs"
                + " (10.0.0.0/8) in sandbox4j.egress.allowed-domains / allowed-cidrs / denied-cidrs, or allow-all=true alone.",
                () -> b.egress(egress(egressProperties)));
        property("sandbox4j.limits", describe(properties.getLimits()), "Give positive numbers, or leave them unset for the"
                + " provider's defaults.", () -> b.limits(limits(properties.getLimits())));
        property("sandbox4j.budget", properties.getBudget(), "Set a positive duration, such as 30s.",
                () -> b.defaultBudget(properties.getBudget()));
        property("sandbox4j.max-budget", properties.getMaxBudget(), "Set a positive duration of at least sandbox4j.budget.",
                () -> b.maxBudget(properties.getMaxBudget()));
        property("sandbox4j.session-lifetime", properties.getSessionLifetime(), "Set a positive duration, or leave it unset.",
                () -> b.sessionLifetime(properties.getSessionLifetime()));
        property("sandbox4j.output-limit", properties.getOutputLimit(), "Set a number of characters, 1 or more.",
                () -> b.outputLimit(properties.getOutputLimit()));
        if (!properties.getLanguages().isEmpty()) {
            property("sandbox4j.languages", properties.getLanguages(), "Name languages the provider runs (python, javascript,"
                    + " bash).", () -> b.languages(properties.getLanguages().toArray(new Language[0])));
        }
        if (properties.getDefaultLanguage() != null) {
            property("sandbox4j.default-language", properties.getDefaultLanguage(), "Name one of sandbox4j.languages.",
                    () -> b.defaultLanguage(properties.getDefaultLanguage()));
        }
        try {
            return b.build();
        } catch (UnsupportedPolicyException e) {
            boolean limits = e.getMessage() != null && e.getMessage().matches("(?is).*\\b(vcpu|memory|disk|limit).*");
            throw new Sandbox4jPropertyException(limits ? "sandbox4j.limits" : "sandbox4j.egress",
                    limits ? describe(properties.getLimits()) : describe(egressProperties),
                    "The provider " + properties.getProvider() + " cannot enforce this exactly: relax the rule the message"
                            + " names, or choose a provider that enforces it (see the capability table in README.md).", e);
        } catch (IllegalArgumentException | IllegalStateException e) {
            throw new Sandbox4jPropertyException("sandbox4j.budget / sandbox4j.max-budget / sandbox4j.session-lifetime",
                    properties.getBudget() + " / " + properties.getMaxBudget() + " / " + properties.getSessionLifetime(),
                    "Make sandbox4j.budget at most sandbox4j.max-budget, and the session lifetime at least the max-budget.", e);
        }
    }

    /** Runs one builder step; a refusal becomes a {@link Sandbox4jPropertyException} naming the property. */
    private static <T> T property(String name, Object value, String fix, java.util.function.Supplier<T> step) {
        try {
            return step.get();
        } catch (Sandbox4jPropertyException e) {
            throw e;
        } catch (IllegalArgumentException | IllegalStateException | NullPointerException e) {
            throw new Sandbox4jPropertyException(name, value, fix, e);
        }
    }

    private static String describe(Sandbox4jProperties.Egress e) {
        return "{allow-all=" + e.isAllowAll() + ", allowed-domains=" + e.getAllowedDomains() + ", allowed-cidrs="
                + e.getAllowedCidrs() + ", denied-cidrs=" + e.getDeniedCidrs() + "}";
    }

    private static String describe(Sandbox4jProperties.Limits l) {
        return "{memory-mib=" + l.getMemoryMib() + ", vcpus=" + l.getVcpus() + ", disk-mib=" + l.getDiskMib() + "}";
    }

    /** The tool's runner under the caps, with the key asked for at each open or run. */
    static final class KeyedRunner extends dev.sandbox4j.api.ForwardingSandboxRunner<SandboxRunner> {
        private final ConcurrencyLimiter caps;
        private final SandboxKeyResolver keys;

        KeyedRunner(SandboxRunner runner, ConcurrencyLimiter caps, SandboxKeyResolver keys) {
            super(runner);
            this.caps = caps;
            this.keys = keys;
        }

        private SandboxRunner forCall() {
            return caps.forKey(delegate(), keys.key());
        }

        @Override
        public dev.sandbox4j.api.Sandbox open(dev.sandbox4j.api.SandboxSpec spec) {
            return forCall().open(spec);
        }

        @Override
        public dev.sandbox4j.api.RunResult run(dev.sandbox4j.api.RunRequest request) {
            return forCall().run(request);
        }

        @Override
        public dev.sandbox4j.api.Sandbox attach(String sandboxId, dev.sandbox4j.api.SandboxSpec expected) {
            return forCall().attach(sandboxId, expected);
        }

        @Override
        public void close() {
            // the runner is the context's bean: closed with the context, not by the tool
        }
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
