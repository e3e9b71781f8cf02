package dev.sandbox4j.spring.ai;

import dev.sandbox4j.tool.CodeExecutionTool;
import dev.sandbox4j.tool.CodeTool;
import dev.sandbox4j.tool.ToolArguments;
import java.util.Objects;
import org.springframework.ai.tool.annotation.Tool;
import org.springframework.ai.tool.annotation.ToolParam;

/**
 * The code-execution tool as a Spring AI {@code @Tool} bean ({@value CodeExecutionTool#NAME}): the
 * model gives code, optionally a language and a timeout; the policy and limits were fixed at startup.
 * It never throws: bad arguments and sandbox failures come back as text for the model, and the
 * output is framed as untrusted. Spring AI drops arguments the method does not declare, so this
 * path cannot refuse one; the {@code sandbox4jToolCallbacks} bean ({@link SandboxToolCallback}) can,
 * and is what a {@code ChatClient} should get.
 *
 * @since 0.1.0
 */
public class SandboxCodeTool {
    private final CodeTool tool;

    /**
     * A tool bean over a configured tool.
     *
     * @param tool the code-execution tool (or a session of it)
     */
    public SandboxCodeTool(CodeTool tool) {
        this.tool = Objects.requireNonNull(tool, "tool");
    }

    /**
     * Runs the model's code in a fresh sandbox.
     *
     * @param code           the code
     * @param language       python, javascript or bash; null for the default
     * @param timeoutSeconds the time limit asked for; null for the default, capped by the maximum
     * @return the report for the model
     */
    @Tool(name = CodeExecutionTool.NAME, description = CodeExecutionTool.DESCRIPTION,
            resultConverter = PlainTextResultConverter.class)
    public String runCode(
            @ToolParam(description = CodeExecutionTool.CODE_DESCRIPTION) String code,
            @ToolParam(description = CodeExecutionTool.LANGUAGE_DESCRIPTION, required = false) String language,
            @ToolParam(description = CodeExecutionTool.TIMEOUT_DESCRIPTION, required = false) Integer timeoutSeconds) {
        return ToolArguments.of(code, language, timeoutSeconds).runOn(tool);
    }
}
