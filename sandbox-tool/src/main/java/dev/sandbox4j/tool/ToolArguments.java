package dev.sandbox4j.tool;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * The model's arguments to {@value CodeExecutionTool#NAME}, read the same way on every agent surface
 * (LangChain4j, Spring AI, MCP), so that the same arguments mean the same thing everywhere: only
 * {@code code} (a string, required), {@code language} (a string) and {@code timeoutSeconds} (a whole
 * number, at least 1; {@code 10.0} counts as 10) exist. Anything else, a policy above all
 * ({@code "network": "allow-all"}), is refused with the same message on every surface, never ignored.
 *
 * <pre>{@code
 * String text = ToolArguments.of(argumentsAsMap).runOn(tool);   // an "error: ..." text when refused
 * }</pre>
 *
 * @since 0.1.0
 */
public final class ToolArguments {
    /** The argument names the tool accepts, in the order its schemas list them. */
    public static final Set<String> NAMES = Set.of("code", "language", "timeoutSeconds");

    private final String refusal;
    private final String code;
    private final String language;
    private final Integer timeoutSeconds;

    private ToolArguments(String refusal, String code, String language, Integer timeoutSeconds) {
        this.refusal = refusal;
        this.code = code;
        this.language = language;
        this.timeoutSeconds = timeoutSeconds;
    }

    /**
     * Reads {@code arguments} as a JSON object decoded to Java (strings, numbers, lists, maps).
     *
     * @param arguments the arguments; null means none
     * @return the arguments, or a refusal ({@link #refusal()})
     */
    public static ToolArguments of(Map<String, ?> arguments) {
        Map<String, ?> args = arguments == null ? Map.of() : arguments;
        for (String name : args.keySet()) {
            if (!NAMES.contains(name)) {
                return refused("unknown argument '" + printable(String.valueOf(name))
                        + "'; the arguments are code, language and timeoutSeconds (the policy is fixed by the application)");
            }
        }
        Object code = args.get("code");
        if (code == null) {
            return refused("code is missing");
        }
        if (!(code instanceof String)) {
            return refused("code must be a string");
        }
        Object language = args.get("language");
        if (language != null && !(language instanceof String)) {
            return refused("language must be a string");
        }
        Object timeout = args.get("timeoutSeconds");
        Integer seconds = null;
        if (timeout != null) {
            seconds = wholeNumber(timeout);
            if (seconds == null) {
                return refused("timeoutSeconds must be a whole number of seconds");
            }
            if (seconds < 1) {
                return refused("timeoutSeconds must be at least 1, was " + seconds);
            }
        }
        return new ToolArguments(null, (String) code, (String) language, seconds);
    }

    /**
     * The typed parameters of a tool method, checked as {@link #of} checks a map.
     *
     * @param code the code; null is refused as missing
     * @param language the language's name, or null for the tool's default
     * @param timeoutSeconds the time limit in seconds, at least 1, or null for the tool's default
     * @return the arguments, or a refusal
     */
    public static ToolArguments of(String code, String language, Integer timeoutSeconds) {
        java.util.HashMap<String, Object> m = new java.util.HashMap<>();
        m.put("code", code);
        if (language != null) {
            m.put("language", language);
        }
        if (timeoutSeconds != null) {
            m.put("timeoutSeconds", timeoutSeconds);
        }
        return of(m);
    }

    /** {@return the {@code error: ... Nothing ran.} text for the model when the arguments are refused, else null} */
    public String refusal() {
        return refusal;
    }

    /** {@return the code; null when refused} */
    public String code() {
        return code;
    }

    /** {@return the language asked for; null for the tool's default} */
    public String language() {
        return language;
    }

    /** {@return the time limit asked for; null for the tool's default} */
    public Integer timeoutSeconds() {
        return timeoutSeconds;
    }

    /**
     * Runs the code on {@code tool}, or answers with the refusal; never throws for anything the model sent.
     *
     * @param tool the tool or a session of it
     * @return the tool's text, or the refusal
     */
    public String runOn(CodeTool tool) {
        Objects.requireNonNull(tool, "tool");
        return refusal != null ? refusal : tool.execute(code, language, timeoutSeconds);
    }

    @Override
    public String toString() {
        return refusal != null ? "ToolArguments[refused]" : "ToolArguments[code=" + code.length() + " chars, language="
                + language + ", timeoutSeconds=" + timeoutSeconds + "]";
    }

    private static String printable(String s) {
        String clean = s.replaceAll("[^A-Za-z0-9_.-]", "_");
        return clean.length() > 40 ? clean.substring(0, 40) + "…" : clean;
    }

    private static ToolArguments refused(String what) {
        return new ToolArguments("error: " + what + ". Nothing ran.", null, null, null);
    }

    private static Integer wholeNumber(Object value) {
        if (!(value instanceof Number n)) {
            return null;
        }
        BigDecimal d;
        try {
            d = n instanceof BigDecimal b ? b : n instanceof BigInteger i ? new BigDecimal(i) : new BigDecimal(n.toString());
        } catch (NumberFormatException e) {
            return null; // NaN or infinity
        }
        try {
            return d.stripTrailingZeros().intValueExact();
        } catch (ArithmeticException e) {
            return null;
        }
    }
}
