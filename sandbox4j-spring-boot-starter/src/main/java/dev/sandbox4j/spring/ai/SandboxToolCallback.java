package dev.sandbox4j.spring.ai;

import com.fasterxml.jackson.core.JacksonException;
import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.sandbox4j.tool.CodeExecutionTool;
import dev.sandbox4j.tool.CodeTool;
import dev.sandbox4j.tool.ToolArguments;
import java.util.Map;
import java.util.Objects;
import org.springframework.ai.tool.ToolCallback;
import org.springframework.ai.tool.definition.ToolDefinition;

/**
 * The code-execution tool as a Spring AI {@link ToolCallback} that reads the model's raw arguments
 * itself ({@link ToolArguments}, as every agent surface does), so an argument the tool does not have
 * ({@code "network": "allow-all"}) is refused with the same message as on LangChain4j and MCP, never
 * ignored. A {@code @Tool} method ({@link SandboxCodeTool}) would not see it: Spring AI drops unknown
 * keys before the method runs. The text goes to the model as it is (no JSON quoting).
 *
 * @since 0.1.0
 */
public final class SandboxToolCallback implements ToolCallback {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String SCHEMA = "{\"type\":\"object\",\"properties\":{"
            + "\"code\":{\"type\":\"string\",\"description\":" + quote(CodeExecutionTool.CODE_DESCRIPTION) + "},"
            + "\"language\":{\"type\":\"string\",\"description\":" + quote(CodeExecutionTool.LANGUAGE_DESCRIPTION) + "},"
            + "\"timeoutSeconds\":{\"type\":\"integer\",\"minimum\":1,\"description\":"
            + quote(CodeExecutionTool.TIMEOUT_DESCRIPTION) + "}},"
            + "\"required\":[\"code\"],\"additionalProperties\":false}";

    private final CodeTool tool;
    private final ToolDefinition definition;

    /**
     * A callback over {@code tool}.
     *
     * @param tool the code-execution tool or a session of it
     */
    public SandboxToolCallback(CodeTool tool) {
        this.tool = Objects.requireNonNull(tool, "tool");
        this.definition = ToolDefinition.builder().name(CodeExecutionTool.NAME).description(tool.description())
                .inputSchema(SCHEMA).build();
    }

    @Override
    public ToolDefinition getToolDefinition() {
        return definition;
    }

    /**
     * Reads the arguments and runs the code; never throws for anything the model sent.
     *
     * @param toolInput the model's arguments, a JSON object
     * @return the status and the fenced output, or an {@code error: ...} text
     */
    @Override
    public String call(String toolInput) {
        JsonNode args;
        try {
            args = toolInput == null || toolInput.isBlank() ? JSON.createObjectNode() : JSON.readTree(toolInput);
        } catch (JacksonException e) {
            return "error: the arguments are not valid JSON. Nothing ran.";
        }
        if (args == null || !args.isObject()) {
            return "error: the arguments must be a JSON object. Nothing ran.";
        }
        return ToolArguments.of(JSON.convertValue(args, new TypeReference<Map<String, Object>>() { })).runOn(tool);
    }

    @Override
    public String toString() {
        return "SandboxToolCallback[" + tool + "]";
    }

    private static String quote(String s) {
        try {
            return JSON.writeValueAsString(s);
        } catch (JacksonException e) {
            throw new IllegalStateException(e);
        }
    }
}
