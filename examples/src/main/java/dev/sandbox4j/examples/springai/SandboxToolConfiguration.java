package dev.sandbox4j.examples.springai;

import dev.sandbox4j.api.SandboxRunner;
import dev.sandbox4j.api.SandboxRunners;
import dev.sandbox4j.api.tool.CodeExecutionTool;
import dev.sandbox4j.policy.EgressPolicy;
import org.springframework.ai.tool.ToolCallbackProvider;
import org.springframework.ai.tool.method.MethodToolCallbackProvider;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

// tag::spring-ai-config[]
/**
 * The runner and the tool from {@code sandbox4j.*} properties. A policy the provider cannot enforce
 * fails the application's startup, not a model's tool call.
 */
@Configuration(proxyBeanMethods = false)
@EnableConfigurationProperties(SandboxToolProperties.class)
public class SandboxToolConfiguration {

    /** The provider's keys come from its own environment variables (E2B_API_KEY, ...), never from properties files. */
    @Bean(destroyMethod = "close")
    @ConditionalOnMissingBean
    public SandboxRunner sandboxRunner(SandboxToolProperties properties) {
        return SandboxRunners.byName(properties.getProvider(), System.getenv());
    }

    @Bean
    public CodeExecutionTool codeExecutionTool(SandboxRunner runner, SandboxToolProperties properties) {
        return CodeExecutionTool.builder(runner)
                .egress(egress(properties.getEgress()))
                .defaultBudget(properties.getBudget())
                .maxBudget(properties.getMaxBudget())
                .outputLimit(properties.getOutputLimit())
                .build();
    }

    @Bean
    public SandboxTool sandboxTool(CodeExecutionTool codeExecutionTool) {
        return new SandboxTool(codeExecutionTool);
    }

    @Bean
    public ToolCallbackProvider sandboxToolCallbacks(SandboxTool sandboxTool) {
        return MethodToolCallbackProvider.builder().toolObjects(sandboxTool).build();
    }

    static EgressPolicy egress(SandboxToolProperties.Egress egress) {
        if (egress.isAllowAll()) {
            if (!egress.getAllowedDomains().isEmpty()) {
                throw new IllegalStateException("set sandbox4j.egress.allow-all or sandbox4j.egress.allowed-domains, not both");
            }
            return EgressPolicy.allowAll();
        }
        return EgressPolicy.builder().allowDomains(egress.getAllowedDomains()).build();
    }
}
// end::spring-ai-config[]
