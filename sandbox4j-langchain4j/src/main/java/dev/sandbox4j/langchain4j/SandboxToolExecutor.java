package dev.sandbox4j.langchain4j;

import com.fasterxml.jackson.core.JacksonException;
import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.langchain4j.agent.tool.ToolExecutionRequest;
import dev.langchain4j.agent.tool.ToolSpecification;
import dev.langchain4j.model.chat.request.json.JsonObjectSchema;
import dev.langchain4j.service.tool.ToolExecutor;
import dev.sandbox4j.tool.CodeExecutionTool;
import dev.sandbox4j.tool.CodeTool;
import dev.sandbox4j.tool.ToolArguments;
import java.util.Map;
import java.util.Objects;

/**
 * The code-execution tool on LangChain4j's programmatic path: a {@link ToolSpecification} and a
 * {@link ToolExecutor} that reads the model's JSON arguments itself.
 *
 * <pre>{@code
 * Assistant assistant = AiServices.builder(Assistant.class)
 *         .chatModel(model)
 *         .tools(SandboxToolExecutor.tools(tool))
 *         .build();
 * }</pre>
 *
 * <p>Arguments that are not a JSON object are answered with an {@code error: ...} text and nothing
 * runs; the rest are read by {@link ToolArguments}, as on every other agent surface (a missing or
 * non-string {@code code}, a {@code timeoutSeconds} that is not a whole number of at least 1, and any
 * argument other than {@code code}, {@code language} and {@code timeoutSeconds} are refused), so
 * {@code chat()} never throws because of them and no error handler is needed.
 *
 * @since 0.1.0
 */
public final class SandboxToolExecutor implements ToolExecutor {
    private static final ObjectMapper JSON = new ObjectMapper();

    private final CodeTool tool;

    /**
     * An executor that runs each call on {@code tool}.
     *
     * @param tool a {@link CodeExecutionTool} or a session of one
     */
    public SandboxToolExecutor(CodeTool tool) {
        this.tool = Objects.requireNonNull(tool, "tool");
    }

    /**
     * The tool's specification: named {@value CodeExecutionTool#NAME}, described by
     * {@link CodeTool#description()} (which names the languages, the maximum time and the network),
     * {@code code} required, no other properties allowed.
     *
     * @param tool the tool the description is taken from
     * @return a specification for {@code ChatRequest.toolSpecifications} or {@code AiServices.tools}
     */
    public static ToolSpecification specification(CodeTool tool) {
        return ToolSpecification.builder()
                .name(CodeExecutionTool.NAME)
                .description(tool.description())
                .parameters(JsonObjectSchema.builder()
                        .addStringProperty("code", CodeExecutionTool.CODE_DESCRIPTION)
                        .addStringProperty("language", CodeExecutionTool.LANGUAGE_DESCRIPTION)
                        .addIntegerProperty("timeoutSeconds", CodeExecutionTool.TIMEOUT_DESCRIPTION)
                        .required("code")
                        .additionalProperties(false)
                        .build())
                .build();
    }

    /**
     * The specification and an executor for {@code tool}, ready for {@code AiServices.builder(...).tools(map)}.
     *
     * @param tool a {@link CodeExecutionTool} or a session of one
     * @return a one-entry map
     */
    public static Map<ToolSpecification, ToolExecutor> tools(CodeTool tool) {
        return Map.of(specification(tool), new SandboxToolExecutor(tool));
    }

    /**
     * Reads the arguments and runs the code.
     *
     * @param request the model's tool call
     * @param memoryId the chat memory's id (unused: the policy is the same for every user)
     * @return the status and the fenced output, or an {@code error: ...} text; never throws for
     *         anything the model sent
     */
    @Override
    public String execute(ToolExecutionRequest request, Object memoryId) {
        String raw = request == null ? null : request.arguments();
        JsonNode args;
        try {
            args = raw == null || raw.isBlank() ? JSON.createObjectNode() : JSON.readTree(raw);
        } catch (JacksonException e) {
            return error("the arguments are not valid JSON");
        }
        if (args == null || !args.isObject()) {
            return error("the arguments must be a JSON object");
        }
        // read as every agent surface reads them (ToolArguments): the same arguments, the same refusals
        Map<String, Object> map = JSON.convertValue(args, new TypeReference<Map<String, Object>>() { });
        return ToolArguments.of(map).runOn(tool);
    }

    @Override
    public String toString() {
        return "SandboxToolExecutor[" + tool + "]";
    }

    private static String error(String what) {
        return "error: " + what + ". Nothing ran.";
    }

}
