package dev.sandbox4j.policy;

import java.util.Locale;

/**
 * The interpreters a sandbox can run code in.
 *
 * @since 0.1.0
 */
public enum Language {
    PYTHON, JAVASCRIPT, BASH;

    /** Parses {@code python}, {@code javascript} (or {@code js}, {@code node}) and {@code bash} (or {@code sh}). */
    public static Language parse(String name) {
        switch (name.trim().toLowerCase(Locale.ROOT)) {
            case "python": case "python3": case "py": return PYTHON;
            case "javascript": case "js": case "node": return JAVASCRIPT;
            case "bash": case "sh": case "shell": return BASH;
            default: throw new IllegalArgumentException("unknown language '" + name + "' (python, javascript or bash)");
        }
    }

    public String id() {
        return name().toLowerCase(Locale.ROOT);
    }
}
