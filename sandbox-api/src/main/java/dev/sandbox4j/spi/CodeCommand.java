package dev.sandbox4j.spi;

import dev.sandbox4j.policy.Language;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Objects;

/**
 * The command line that runs one piece of code in a sandbox's interpreter: the code inline on the
 * command line when it fits ({@code python3 -c CODE}), else a file the driver wrote first
 * ({@code python3 /path/code.py}). One table for every adapter that starts interpreters itself, so
 * the interpreters, flags and file extensions cannot drift apart between providers.
 *
 * @since 0.1.0
 */
public final class CodeCommand {
    private final String interpreter;
    private final List<String> options;
    private final String inlineFlag;
    private final String extension;

    private CodeCommand(String interpreter, List<String> options, String inlineFlag, String extension) {
        this.interpreter = interpreter;
        this.options = options;
        this.inlineFlag = inlineFlag;
        this.extension = extension;
    }

    /**
     * The command for code in {@code language}: {@code python3 -c}, {@code node -e} or {@code bash -c}.
     *
     * @param language not null
     * @return the command
     */
    public static CodeCommand of(Language language) {
        switch (Objects.requireNonNull(language, "language")) {
            case JAVASCRIPT:
                return new CodeCommand("node", List.of(), "-e", ".js");
            case BASH:
                return new CodeCommand("bash", List.of(), "-c", ".sh");
            default:
                return new CodeCommand("python3", List.of(), "-c", ".py");
        }
    }

    /**
     * As {@link #of}, with the interpreter told not to buffer its output ({@code python3 -u}), for a
     * provider whose command output reaches the caller only as the process writes it to a pipe (no
     * {@code PYTHONUNBUFFERED} in its environment); the same for {@code node} and {@code bash}, which
     * do not hold back what they print.
     *
     * @param language the code's language, not null
     * @return the command, with {@code -u} for Python
     */
    public static CodeCommand unbuffered(Language language) {
        CodeCommand c = of(language);
        return c.interpreter.equals("python3") ? new CodeCommand(c.interpreter, List.of("-u"), c.inlineFlag, c.extension) : c;
    }

    /** {@return the interpreter's program name, looked up on the sandbox's {@code PATH}} */
    public String interpreter() {
        return interpreter;
    }

    /** {@return the interpreter with its options, before the code or the file: {@code [python3]}, {@code [python3, -u]}} */
    public List<String> program() {
        List<String> argv = new java.util.ArrayList<>(options.size() + 1);
        argv.add(interpreter);
        argv.addAll(options);
        return List.copyOf(argv);
    }

    /** {@return the extension of a code file for this interpreter, with its dot ({@code .py})} */
    public String extension() {
        return extension;
    }

    /**
     * Whether {@code code} can go on the command line: no NUL byte (no argv can carry one), and at
     * most {@code maxBytes} in UTF-8 together with the interpreter and its flag.
     *
     * @param code the source
     * @param maxBytes the longest command line the provider takes, in bytes
     * @return true when {@link #inline(String)} may be used
     */
    public boolean fitsInline(String code, long maxBytes) {
        long bytes = code.getBytes(StandardCharsets.UTF_8).length;
        long options = this.options.stream().mapToLong(o -> o.length() + 1).sum();
        return code.indexOf('\0') < 0 && bytes + interpreter.length() + options + inlineFlag.length() + 2 <= maxBytes;
    }

    /**
     * {@return the code on the command line: {@code [python3, -c, code]}}
     *
     * @param code the source, one argument byte for byte
     */
    public List<String> inline(String code) {
        List<String> argv = new java.util.ArrayList<>(options.size() + 3);
        argv.add(interpreter);
        argv.addAll(options);
        argv.add(inlineFlag);
        argv.add(code);
        return List.copyOf(argv);
    }

    /**
     * {@return the command for a code file the driver has written: {@code [python3, path]}}
     *
     * @param path the file's path in the sandbox
     */
    public List<String> file(String path) {
        List<String> argv = new java.util.ArrayList<>(options.size() + 2);
        argv.add(interpreter);
        argv.addAll(options);
        argv.add(path);
        return List.copyOf(argv);
    }
}
