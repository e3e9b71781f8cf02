package dev.sandbox4j.cli.internal;

import java.util.regex.Pattern;

/**
 * A library message retold for a CLI user: the runners' configuration errors name the environment
 * variable and, for Java callers, a builder method; on the command line only the variable (or a flag)
 * can be acted on, so the builder part goes.
 */
public final class CliLanguage {
    // "or call apiKey(...)", "or call DaytonaSandboxRunner.builder().apiKey(...)", "or call tokenId(...) and tokenSecret(...)"
    private static final Pattern BUILDER_HINT = Pattern.compile(
            ",?\\s+or call [\\w.]+(?:\\(\\))?(?:\\.[\\w]+)*\\(\\.\\.\\.\\)(?:\\s+and\\s+[\\w.]+\\(\\.\\.\\.\\))*");
    private static final Pattern LOCAL_HINT = Pattern.compile("call SandboxRunners\\.local\\(\\)");
    private static final Pattern BUILDER_AT_ALL = Pattern.compile("\\s*\\([\\w]+\\.builder\\(\\)[^)]*\\)+");

    private CliLanguage() {
    }

    public static String of(String message) {
        if (message == null) {
            return "";
        }
        String m = BUILDER_HINT.matcher(message).replaceAll("");
        m = LOCAL_HINT.matcher(m).replaceAll("pass --provider local");
        return BUILDER_AT_ALL.matcher(m).replaceAll("");
    }
}
