package dev.sandbox4j.langchain4j;

import dev.langchain4j.service.tool.ToolArgumentsErrorHandler;
import dev.langchain4j.service.tool.ToolErrorContext;
import dev.langchain4j.service.tool.ToolErrorHandlerResult;
import dev.langchain4j.service.tool.ToolExecutionErrorHandler;
import dev.sandbox4j.tool.CodeExecutionTool;

/**
 * Error handlers for {@code AiServices} that answer the model with a short text instead of letting
 * {@code chat()} throw. The texts are built from the tool's name and the error's type only, never from
 * an exception's message, so nothing a library wrote (a URL, a header) reaches the model.
 *
 * <pre>{@code
 * AiServices.builder(Assistant.class)
 *         .chatModel(model)
 *         .tools(new SandboxTools(tool))
 *         .toolArgumentsErrorHandler(SandboxToolErrors.argumentsErrorHandler())
 *         .toolExecutionErrorHandler(SandboxToolErrors.executionErrorHandler())
 *         .build();
 * }</pre>
 *
 * @since 0.1.0
 */
public final class SandboxToolErrors {
    /** The answer to arguments of {@value CodeExecutionTool#NAME} that LangChain4j could not convert. */
    public static final String ARGUMENTS_ERROR = "error: the arguments of " + CodeExecutionTool.NAME
            + " could not be read; send code and language as strings and timeoutSeconds as a whole number. Nothing ran.";

    private static final ToolArgumentsErrorHandler ARGUMENTS = (error, context) ->
            ToolErrorHandlerResult.text(argumentsError(name(context)));

    private static final ToolExecutionErrorHandler EXECUTION = (error, context) ->
            ToolErrorHandlerResult.text("error: the tool " + name(context) + " failed ("
                    + (error == null ? "unknown error" : error.getClass().getSimpleName()) + ").");

    private SandboxToolErrors() {
    }

    /**
     * A handler for arguments that do not parse or convert: the model is told which tool's arguments
     * were wrong and what types they take. Applies to every tool of the service; for the other tools
     * the text names the tool only.
     *
     * @return a stateless handler
     */
    public static ToolArgumentsErrorHandler argumentsErrorHandler() {
        return ARGUMENTS;
    }

    /**
     * A handler for a tool method that throws. The code-execution tool never throws; this is for the
     * service's other tools, so that one of them failing does not end the conversation.
     *
     * @return a stateless handler
     */
    public static ToolExecutionErrorHandler executionErrorHandler() {
        return EXECUTION;
    }

    static String argumentsError(String toolName) {
        return CodeExecutionTool.NAME.equals(toolName) ? ARGUMENTS_ERROR
                : "error: the arguments of " + toolName + " could not be read. Nothing ran.";
    }

    private static String name(ToolErrorContext context) {
        String name = context == null || context.toolExecutionRequest() == null ? null : context.toolExecutionRequest().name();
        // the name comes from the model: keep it short and printable
        if (name == null || name.isBlank()) {
            return "(unnamed)";
        }
        String clean = name.replaceAll("[^A-Za-z0-9_.-]", "_");
        return clean.length() > 64 ? clean.substring(0, 64) : clean;
    }
}
