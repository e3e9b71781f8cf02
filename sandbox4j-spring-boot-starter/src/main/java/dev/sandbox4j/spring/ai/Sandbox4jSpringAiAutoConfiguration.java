package dev.sandbox4j.spring.ai;

import dev.sandbox4j.tool.CodeExecutionTool;
import dev.sandbox4j.spring.Sandbox4jAutoConfiguration;
import org.springframework.ai.tool.ToolCallbackProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;

/**
 * When Spring AI is on the classpath: the {@link SandboxCodeTool} bean and a
 * {@link ToolCallbackProvider} named {@code sandbox4jToolCallbacks} to hand to a {@code ChatClient}
 * ({@code .defaultToolCallbacks(sandbox4jToolCallbacks)}). Both are {@code @ConditionalOnMissingBean}
 * (the provider by name, so other tool providers of the application do not switch it off).
 *
 * @since 0.1.0
 */
@AutoConfiguration(after = Sandbox4jAutoConfiguration.class)
@ConditionalOnClass(name = {"org.springframework.ai.tool.ToolCallbackProvider",
        "org.springframework.ai.tool.annotation.Tool"})
@ConditionalOnBean(CodeExecutionTool.class)
public class Sandbox4jSpringAiAutoConfiguration {

    /** Creates the auto-configuration (Spring does). */
    public Sandbox4jSpringAiAutoConfiguration() {
    }

    /**
     * The {@code @Tool} bean.
     *
     * @param tool the configured code-execution tool
     * @return the tool bean
     */
    @Bean
    @ConditionalOnMissingBean
    public SandboxCodeTool sandbox4jCodeTool(CodeExecutionTool tool) {
        return new SandboxCodeTool(tool);
    }

    /**
     * The tool's callbacks for a {@code ChatClient}: a {@link SandboxToolCallback}, which reads the
     * model's raw arguments, so an argument the tool does not have is refused as on every agent surface.
     *
     * @param tool the configured code-execution tool
     * @return the callbacks
     */
    @Bean
    @ConditionalOnMissingBean(name = "sandbox4jToolCallbacks")
    public ToolCallbackProvider sandbox4jToolCallbacks(CodeExecutionTool tool) {
        return ToolCallbackProvider.from(new SandboxToolCallback(tool));
    }
}
