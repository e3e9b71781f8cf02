package dev.sandbox4j.tool;

/**
 * The one call an agent framework's tool method makes: code, a language and an optional time budget
 * from the model in, one compact text for the model out. Implemented by {@link CodeExecutionTool}
 * (a fresh sandbox per call) and {@link CodeExecutionSession} (one sandbox for a whole task).
 *
 * <p>Never throws for anything the model or the infrastructure does: bad arguments and failures come
 * back as a short text the model can act on. Only the application's own mistakes (a null tool, say)
 * are exceptions.
 *
 * @since 0.1.0
 */
public interface CodeTool {
    /**
     * Runs {@code code} and describes what happened.
     *
     * @param code the program text, passed to the interpreter byte for byte
     * @param language {@code python}, {@code javascript} or {@code bash} (and their usual aliases);
     *        null or blank means the tool's default language
     * @param timeoutSeconds the time budget the model asks for; null means the tool's default, and a
     *        value above the tool's maximum is clamped to it
     * @return status, exit code, stdout and stderr (truncated, fenced as untrusted data), or a short
     *         error message
     */
    String execute(String code, String language, Integer timeoutSeconds);

    /** {@return a description for the model, naming the languages, the maximum budget and the network access} */
    String description();
}
