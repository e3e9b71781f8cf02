package dev.sandbox4j.langchain4j;

import com.fasterxml.jackson.core.JacksonException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.langchain4j.agent.tool.ToolExecutionRequest;
import dev.langchain4j.agent.tool.ToolSpecification;
import dev.langchain4j.model.chat.request.json.JsonObjectSchema;
import dev.langchain4j.service.tool.ToolExecutor;
import dev.sandbox4j.api.tool.CodeExecutionTool;
import dev.sandbox4j.api.tool.CodeTool;
import java.util.Iterator;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

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
 * <p>Arguments that are not a JSON object, a missing or non-string {@code code}, a {@code timeoutSeconds}
 * that is not a whole number, and any argument other than {@code code}, {@code language} and
 * {@code timeoutSeconds} are answered with an {@code error: ...} text and nothing runs, so
 * {@code chat()} never throws because of them and no error handler is needed.
 *
 * @since 0.1.0
 */
public final class SandboxToolExecutor implements ToolExecutor {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Set<String> ARGUMENTS = Set.of("code", "language", "timeoutSeconds");

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
        for (Iterator<String> names = args.fieldNames(); names.hasNext(); ) {
            String name = names.next();
            if (!ARGUMENTS.contains(name)) {
                return error("unknown argument '" + printable(name) + "'; the arguments are code, language and timeoutSeconds");
            }
        }
        JsonNode code = args.get("code");
        if (code == null || code.isNull()) {
            return error("code is missing");
        }
        if (!code.isTextual()) {
            return error("code must be a string");
        }
        JsonNode language = args.get("language");
        if (language != null && !language.isNull() && !language.isTextual()) {
            return error("language must be a string");
        }
        JsonNode timeout = args.get("timeoutSeconds");
        Integer timeoutSeconds = null;
        if (timeout != null && !timeout.isNull()) {
            // 10 and 10.0 are the same whole number; "10", 1.5 and 1e20 are not ints
            if (!timeout.isNumber() || !timeout.canConvertToExactIntegral() || !fitsInt(timeout)) {
                return error("timeoutSeconds must be a whole number of seconds");
            }
            timeoutSeconds = timeout.intValue();
        }
        return tool.execute(code.textValue(), language == null || language.isNull() ? null : language.textValue(),
                timeoutSeconds);
    }

    @Override
    public String toString() {
        return "SandboxToolExecutor[" + tool + "]";
    }

    private static boolean fitsInt(JsonNode n) {
        return n.canConvertToInt() || (n.isFloatingPointNumber() && n.doubleValue() >= Integer.MIN_VALUE
                && n.doubleValue() <= Integer.MAX_VALUE);
    }

    private static String error(String what) {
        return "error: " + what + ". Nothing ran.";
    }

    private static String printable(String s) {
        String clean = s.replaceAll("[^A-Za-z0-9_.-]", "_");
        return clean.length() > 40 ? clean.substring(0, 40) + "…" : clean;
    }
}
