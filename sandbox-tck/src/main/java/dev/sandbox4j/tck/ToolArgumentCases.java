package dev.sandbox4j.tck;

import java.util.List;

/**
 * One refusal table for every agent surface of the code-execution tool (LangChain4j's {@code @Tool}
 * path and {@code SandboxToolExecutor}, Spring AI's callbacks, MCP): the model's arguments, as JSON, and
 * the exact text each surface must answer with, nothing having run. An argument the policy does not
 * allow is refused with the same message everywhere, never ignored.
 *
 * @since 0.1.0
 */
public final class ToolArgumentCases {
    private ToolArgumentCases() {
    }

    /**
     * A model's arguments and the refusal they must get.
     *
     * @since 0.1.0
     */
    public record Case(String argumentsJson, String refusal) {
    }

    private static final String UNKNOWN = "'; the arguments are code, language and timeoutSeconds (the policy is fixed by the application). Nothing ran.";

    /**
     * The table.
     *
     * @return the cases, in a fixed order
     */
    public static List<Case> refusals() {
        return List.of(
                new Case("{\"code\":\"print(1)\",\"network\":\"allow-all\"}", "error: unknown argument 'network" + UNKNOWN),
                new Case("{\"code\":\"print(1)\",\"egress\":{\"allow\":[\"*\"]}}", "error: unknown argument 'egress" + UNKNOWN),
                new Case("{\"code\":\"print(1)\",\"memoryMb\":65536}", "error: unknown argument 'memoryMb" + UNKNOWN),
                new Case("{\"code\":\"print(1)\",\"timeoutSeconds\":-5}", "error: timeoutSeconds must be at least 1, was -5. Nothing ran."),
                new Case("{\"code\":\"print(1)\",\"timeoutSeconds\":0}", "error: timeoutSeconds must be at least 1, was 0. Nothing ran."),
                new Case("{\"code\":\"print(1)\",\"timeoutSeconds\":\"soon\"}", "error: timeoutSeconds must be a whole number of seconds. Nothing ran."),
                new Case("{\"code\":\"print(1)\",\"timeoutSeconds\":2.5}", "error: timeoutSeconds must be a whole number of seconds. Nothing ran."),
                new Case("{\"code\":\"print(1)\",\"timeoutSeconds\":1e20}", "error: timeoutSeconds must be a whole number of seconds. Nothing ran."),
                new Case("{\"language\":\"python\"}", "error: code is missing. Nothing ran."),
                new Case("{\"code\":42}", "error: code must be a string. Nothing ran."),
                new Case("{\"code\":\"print(1)\",\"language\":3}", "error: language must be a string. Nothing ran."),
                new Case("{\"code\":\"puts 1\",\"language\":\"ruby\"}",
                        "error: unknown language 'ruby'; use one of python, javascript, bash. Nothing ran."));
    }
}
