package dev.sandbox4j.langchain4j;

import dev.langchain4j.agent.tool.P;
import dev.langchain4j.agent.tool.Tool;
import dev.langchain4j.service.AiServices;
import dev.sandbox4j.tool.CodeExecutionTool;
import dev.sandbox4j.tool.CodeTool;
import dev.sandbox4j.tool.ToolArguments;
import java.util.Objects;

/**
 * The code-execution tool as a LangChain4j tool object: one {@code @Tool} method named
 * {@value CodeExecutionTool#NAME} with the parameters {@code code}, {@code language} and
 * {@code timeoutSeconds}.
 *
 * <pre>{@code
 * Assistant assistant = SandboxTools.addTo(AiServices.builder(Assistant.class).chatModel(model), tool)
 *         .build();
 * }</pre>
 *
 * <p>Prefer {@link #addTo} over {@code .tools(new SandboxTools(tool))}: LangChain4j drops arguments a
 * {@code @Tool} method does not declare before the method runs, so on that path an argument such as
 * {@code "network": "allow-all"} cannot be refused (it has no effect either way: the policy is fixed);
 * {@link #addTo} registers the tool through {@link SandboxToolExecutor}, which refuses it. Also, LangChain4j parses the model's
 * arguments before the method runs, and without an arguments error handler a value it cannot convert
 * ({@code "timeoutSeconds": "soon"}) makes {@code chat()} throw. {@link #addTo} also installs
 * {@link SandboxToolErrors}' handlers, which send such errors back to the model as text.
 *
 * @since 0.1.0
 */
public final class SandboxTools {
    private final CodeTool tool;

    /**
     * A tool object for {@code AiServices.builder(...).tools(...)}.
     *
     * @param tool a {@link CodeExecutionTool} (a fresh sandbox per call) or a session of one (one
     *        sandbox for a whole task)
     */
    public SandboxTools(CodeTool tool) {
        this.tool = Objects.requireNonNull(tool, "tool");
    }

    /**
     * Registers the tool on {@code services} (as {@link SandboxToolExecutor#tools}: the same name,
     * description and parameters, and arguments read by {@link dev.sandbox4j.tool.ToolArguments} as on
     * every agent surface, so an argument the tool does not have is refused, never ignored) together with {@link SandboxToolErrors#argumentsErrorHandler()}
     * and {@link SandboxToolErrors#executionErrorHandler()}, which replace any handlers set before (they
     * apply to every tool of the service).
     *
     * @param services an AiServices builder, configured with the chat model and anything else
     * @param tool the code-execution tool or a session of it
     * @param <A> the assistant interface
     * @return {@code services}, for chaining
     */
    public static <A> AiServices<A> addTo(AiServices<A> services, CodeTool tool) {
        // the executor sees the model's raw arguments, so an argument the tool does not have ("network")
        // is refused; a @Tool method would never learn of it (LangChain4j drops unknown keys)
        return services.tools(SandboxToolExecutor.tools(tool))
                .toolArgumentsErrorHandler(SandboxToolErrors.argumentsErrorHandler())
                .toolExecutionErrorHandler(SandboxToolErrors.executionErrorHandler());
    }

    /**
     * Runs the model's code; called by LangChain4j.
     *
     * @param code the program
     * @param language python, javascript or bash; null for the tool's default
     * @param timeoutSeconds the time limit asked for; null for the tool's default
     * @return the status and the fenced output, or an {@code error: ...} text
     */
    @Tool(name = CodeExecutionTool.NAME, value = CodeExecutionTool.DESCRIPTION)
    public String runCode(
            @P(name = "code", value = CodeExecutionTool.CODE_DESCRIPTION) String code,
            @P(name = "language", value = CodeExecutionTool.LANGUAGE_DESCRIPTION, required = false) String language,
            @P(name = "timeoutSeconds", value = CodeExecutionTool.TIMEOUT_DESCRIPTION, required = false) Integer timeoutSeconds) {
        // never throws: bad values and sandbox failures come back as text for the model
        return ToolArguments.of(code, language, timeoutSeconds).runOn(tool);
    }

    @Override
    public String toString() {
        return "SandboxTools[" + tool + "]";
    }
}
