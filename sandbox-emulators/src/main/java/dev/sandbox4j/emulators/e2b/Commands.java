package dev.sandbox4j.emulators.e2b;

import dev.sandbox4j.api.Execution;
import dev.sandbox4j.policy.Language;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.UnaryOperator;
import java.util.regex.Pattern;

/**
 * Maps what envd would exec ({@code cmd} plus {@code args}, a working directory and extra
 * environment) to one local {@link Execution}: {@code python3 -c CODE} to Python, {@code node -e CODE}
 * to JavaScript, {@code bash [-l] -c CMD} to Bash, anything else to Bash with every argument
 * single-quoted. A working directory or extra environment turns it into a Bash line that sets them
 * first; every value is single-quoted, so nothing is interpreted twice.
 */
final class Commands {
    private static final Set<String> PYTHON = Set.of("python3", "/usr/bin/python3", "/usr/local/bin/python3");
    private static final Set<String> NODE = Set.of("node", "/usr/bin/node", "/usr/local/bin/node");
    private static final Set<String> SHELLS = Set.of("bash", "/bin/bash", "/usr/bin/bash", "sh", "/bin/sh", "/usr/bin/sh");
    private static final Pattern ENV_NAME = Pattern.compile("[A-Za-z_][A-Za-z0-9_]*");

    private Commands() {
    }

    /**
     * @param argv {@code cmd} then {@code args}
     * @param cwd the working directory as the sandbox sees it, relative to the workspace or absolute
     *            ("" for the workspace itself)
     * @param env extra variables for this command only
     * @param paths rewrites sandbox paths in arguments and shell strings (never in interpreter code)
     * @throws IllegalArgumentException for an empty command, a NUL byte or a bad variable name
     */
    static Execution toExecution(List<String> argv, String cwd, Map<String, String> env, UnaryOperator<String> paths,
                                 Duration budget, int outputLimit, long hardCapBytes) {
        if (argv.isEmpty() || argv.get(0).isEmpty()) {
            throw new IllegalArgumentException("empty command");
        }
        for (String a : argv) {
            if (a.indexOf('\0') >= 0) {
                throw new IllegalArgumentException("argument contains a NUL byte");
            }
        }
        Execution.Builder b;
        if (cwd.isEmpty() && env.isEmpty()) {
            b = direct(argv, paths);
        } else {
            StringBuilder line = new StringBuilder();
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
            b = Execution.builder(line.toString()).language(Language.BASH);
        }
        return b.budget(budget).outputLimit(outputLimit).hardCapBytes(hardCapBytes).build();
    }

    private static Execution.Builder direct(List<String> argv, UnaryOperator<String> paths) {
        String cmd = argv.get(0);
        if (argv.size() == 3 && PYTHON.contains(cmd) && argv.get(1).equals("-c")) {
            return Execution.builder(argv.get(2)).language(Language.PYTHON);
        }
        if (argv.size() == 3 && NODE.contains(cmd) && argv.get(1).equals("-e")) {
            return Execution.builder(argv.get(2)).language(Language.JAVASCRIPT);
        }
        String shellCommand = shellCommand(argv);
        if (shellCommand != null) {
            return Execution.builder(paths.apply(shellCommand)).language(Language.BASH);
        }
        return Execution.builder(quoteAll(rewriteArgs(argv, paths))).language(Language.BASH);
    }

    /** Paths rewritten in every argument except the code of {@code -c}/{@code -e}. */
    private static List<String> rewriteArgs(List<String> argv, UnaryOperator<String> paths) {
        String cmd = argv.get(0);
        boolean interpreter = PYTHON.contains(cmd) || NODE.contains(cmd) || SHELLS.contains(cmd);
        List<String> out = new java.util.ArrayList<>(argv.size());
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
