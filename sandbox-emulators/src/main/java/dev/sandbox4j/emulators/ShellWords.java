package dev.sandbox4j.emulators;

import java.util.List;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * What the emulators need to turn a provider's argv into the code of a Bash {@link
 * dev.sandbox4j.api.Execution} without a second interpretation: single-quoting, recognising
 * {@code bash|sh [-l] -c CMD}, and the environment variable names they pass on.
 *
 * @since 0.1.0
 */
public final class ShellWords {
    private static final Set<String> SHELLS = Set.of("bash", "/bin/bash", "/usr/bin/bash", "sh", "/bin/sh", "/usr/bin/sh");
    private static final Pattern ENV_NAME = Pattern.compile("[A-Za-z_][A-Za-z0-9_]*");

    private ShellWords() {
    }

    /**
     * One shell word, whatever it contains: everything literal, {@code '} written as {@code '\''}.
     *
     * @param s the text to quote; may be empty
     * @return {@code s} in single quotes, read back by the shell as exactly {@code s}
     */
    public static String quote(String s) {
        return "'" + s.replace("'", "'\\''") + "'";
    }

    /**
     * The words, each {@link #quote quoted}, separated by spaces.
     *
     * @param words the words, in order
     * @return the quoted words joined by single spaces; empty for no words
     */
    public static String quoteAll(List<String> words) {
        StringBuilder sb = new StringBuilder();
        for (String w : words) {
            if (sb.length() > 0) {
                sb.append(' ');
            }
            sb.append(quote(w));
        }
        return sb.toString();
    }

    /**
     * CMD of {@code bash|sh [-l] -c CMD} (program then arguments), or null for any other command.
     *
     * @param program the command's program, as given (a bare or absolute shell name is recognised)
     * @param args the arguments after the program
     * @return the command string the shell would run, or null when the command is not of that form
     */
    public static String shellCommand(String program, List<String> args) {
        if (!SHELLS.contains(program)) {
            return null;
        }
        if (args.size() == 2 && args.get(0).equals("-c")) {
            return args.get(1);
        }
        if (args.size() == 3 && args.get(0).equals("-l") && args.get(1).equals("-c")) {
            return args.get(2);
        }
        return null;
    }

    /**
     * Whether {@code program} is one of the shells {@link #shellCommand} recognises.
     *
     * @param program the program name or path, as given
     * @return true for {@code bash} or {@code sh}, bare or under {@code /bin} or {@code /usr/bin}
     */
    public static boolean isShell(String program) {
        return SHELLS.contains(program);
    }

    /**
     * A variable name a shell can export ({@code [A-Za-z_][A-Za-z0-9_]*}).
     *
     * @param name the candidate variable name
     * @return whether {@code name} matches that pattern in full
     */
    public static boolean validEnvName(String name) {
        return ENV_NAME.matcher(name).matches();
    }
}
