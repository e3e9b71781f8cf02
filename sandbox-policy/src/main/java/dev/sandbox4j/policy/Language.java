package dev.sandbox4j.policy;

import java.util.Locale;

/**
 * The interpreters a sandbox can run code in.
 *
 * @since 0.1.0
 */
public enum Language {
    /** Python 3. */
    PYTHON,
    /** JavaScript, run by Node.js. */
    JAVASCRIPT,
    /** A bash script. */
    BASH;

    /**
     * Parses {@code python} (or {@code python3}, {@code py}), {@code javascript} (or {@code js}, {@code
     * node}) and {@code bash} (or {@code sh}, {@code shell}), ignoring case and surrounding blanks.
     *
     * @param name the language's name or alias
     * @return the language
     * @throws IllegalArgumentException for any other name
     */
    public static Language parse(String name) {
        switch (name.trim().toLowerCase(Locale.ROOT)) {
            case "python": case "python3": case "py": return PYTHON;
            case "javascript": case "js": case "node": return JAVASCRIPT;
            case "bash": case "sh": case "shell": return BASH;
            default: throw new IllegalArgumentException("unknown language '" + name + "' (python, javascript or bash)");
        }
    }

    /**
     * {@return the language's canonical name in lower case: {@code python}, {@code javascript} or {@code
     * bash}}
     */
    public String id() {
        return name().toLowerCase(Locale.ROOT);
    }
}
