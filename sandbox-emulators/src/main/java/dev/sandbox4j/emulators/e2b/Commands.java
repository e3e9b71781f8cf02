package dev.sandbox4j.emulators.e2b;

import dev.sandbox4j.api.Execution;
import dev.sandbox4j.policy.Language;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.UnaryOperator;
import java.util.regex.Pattern;

/**
 * Turns what envd would exec ({@code cmd} plus {@code args}, a working directory, extra environment)
 * into one Bash line for the local sandbox. The line first sends the command's stdout and stderr to
 * two files in the workspace, which the emulator streams while the command runs (a local sandbox
 * returns output only at the end). Then {@code bash [-l] -c CMD} runs CMD in that same shell, and
 * anything else ({@code python3 -c CODE}, {@code node -e CODE}, a program and its arguments) is
 * {@code exec}ed with every argument single-quoted, so nothing is interpreted twice.
 */
final class Commands {
    private static final Set<String> PYTHON = Set.of("python3", "/usr/bin/python3", "/usr/local/bin/python3");
    private static final Set<String> NODE = Set.of("node", "/usr/bin/node", "/usr/local/bin/node");
    private static final Set<String> SHELLS = Set.of("bash", "/bin/bash", "/usr/bin/bash", "sh", "/bin/sh", "/usr/bin/sh");
    private static final Pattern ENV_NAME = Pattern.compile("[A-Za-z_][A-Za-z0-9_]*");
    /** The wrapper's own output (a failed redirect) is all the local sandbox keeps. */
    private static final int WRAPPER_OUTPUT_CHARS = 16 * 1024;

    private Commands() {
    }

    /**
     * @param argv {@code cmd} then {@code args}
     * @param cwd the working directory as the sandbox sees it, relative to the workspace or absolute
     *            ("" for the workspace itself)
     * @param env extra variables for this command only
     * @param paths rewrites sandbox paths in arguments and shell strings (never in interpreter code)
     * @param output where the command's output goes, as the sandbox sees it
     * @throws IllegalArgumentException for an empty command, a NUL byte or a bad variable name
     */
    static Execution toExecution(List<String> argv, String cwd, Map<String, String> env, UnaryOperator<String> paths,
                                 OutputFiles.Inside output, Duration budget) {
        if (argv.isEmpty() || argv.get(0).isEmpty()) {
            throw new IllegalArgumentException("empty command");
        }
        for (String a : argv) {
            if (a.indexOf('\0') >= 0) {
                throw new IllegalArgumentException("argument contains a NUL byte");
            }
        }
        StringBuilder line = new StringBuilder();
        line.append("mkdir -p -- ").append(quote(output.dir))
                .append(" && exec >").append(quote(output.stdout)).append(" 2>").append(quote(output.stderr))
                .append(" </dev/null && ");
        if (!cwd.isEmpty()) {
            line.append("cd -- ").append(quote(cwd)).append(" && ");
        }
        for (Map.Entry<String, String> e : env.entrySet()) {
            if (!ENV_NAME.matcher(e.getKey()).matches()) {
                throw new IllegalArgumentException("invalid environment variable name '" + e.getKey() + "'");
            }
            if (e.getValue().indexOf('\0') >= 0) {
                throw new IllegalArgumentException("environment variable " + e.getKey() + " contains a NUL byte");
            }
            line.append("export ").append(e.getKey()).append('=').append(quote(e.getValue())).append(" && ");
        }
        String shellCommand = shellCommand(argv);
        if (shellCommand != null) {
            line.append("eval ").append(quote(paths.apply(shellCommand)));
        } else {
            line.append("exec ").append(quoteAll(rewriteArgs(argv, paths)));
        }
        return Execution.builder(line.toString()).language(Language.BASH).budget(budget)
                .outputLimit(WRAPPER_OUTPUT_CHARS).hardCapBytes(1024 * 1024).build();
    }

    /** Paths rewritten in every argument except the code of {@code -c}/{@code -e}. */
    private static List<String> rewriteArgs(List<String> argv, UnaryOperator<String> paths) {
        String cmd = argv.get(0);
        boolean interpreter = PYTHON.contains(cmd) || NODE.contains(cmd) || SHELLS.contains(cmd);
        List<String> out = new ArrayList<>(argv.size());
        for (int i = 0; i < argv.size(); i++) {
            String a = argv.get(i);
            boolean code = interpreter && i > 0 && (argv.get(i - 1).equals("-c") || argv.get(i - 1).equals("-e"));
            out.add(code ? a : paths.apply(a));
        }
        return out;
    }

    /** CMD of {@code bash [-l] -c CMD}, or null. */
    private static String shellCommand(List<String> argv) {
        if (!SHELLS.contains(argv.get(0))) {
            return null;
        }
        if (argv.size() == 3 && argv.get(1).equals("-c")) {
            return argv.get(2);
        }
        if (argv.size() == 4 && argv.get(1).equals("-l") && argv.get(2).equals("-c")) {
            return argv.get(3);
        }
        return null;
    }

    static String quoteAll(List<String> argv) {
        StringBuilder sb = new StringBuilder();
        for (String a : argv) {
            if (sb.length() > 0) {
                sb.append(' ');
            }
            sb.append(quote(a));
        }
        return sb.toString();
    }

    /** One shell word, whatever it contains: {@code 'it'\''s'}. */
    static String quote(String s) {
        return "'" + s.replace("'", "'\\''") + "'";
    }
}
