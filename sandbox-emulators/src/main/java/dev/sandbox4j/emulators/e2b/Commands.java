package dev.sandbox4j.emulators.e2b;

import static dev.sandbox4j.emulators.ShellWords.quote;

import dev.sandbox4j.api.Execution;
import dev.sandbox4j.emulators.ShellWords;
import dev.sandbox4j.policy.Language;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.UnaryOperator;

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
            if (!ShellWords.validEnvName(e.getKey())) {
                throw new IllegalArgumentException("invalid environment variable name '" + e.getKey() + "'");
            }
            if (e.getValue().indexOf('\0') >= 0) {
                throw new IllegalArgumentException("environment variable " + e.getKey() + " contains a NUL byte");
            }
            line.append("export ").append(e.getKey()).append('=').append(quote(e.getValue())).append(" && ");
        }
        String shellCommand = ShellWords.shellCommand(argv.get(0), argv.subList(1, argv.size()));
        if (shellCommand != null) {
            line.append("eval ").append(quote(paths.apply(shellCommand)));
        } else {
            line.append("exec ").append(ShellWords.quoteAll(rewriteArgs(argv, paths)));
        }
        return Execution.builder(line.toString()).language(Language.BASH).budget(budget)
                .outputLimit(WRAPPER_OUTPUT_CHARS).hardCapBytes(1024 * 1024).build();
    }

    /** Paths rewritten in every argument except the code of {@code -c}/{@code -e}. */
    private static List<String> rewriteArgs(List<String> argv, UnaryOperator<String> paths) {
        String cmd = argv.get(0);
        boolean interpreter = PYTHON.contains(cmd) || NODE.contains(cmd) || ShellWords.isShell(cmd);
        List<String> out = new ArrayList<>(argv.size());
        for (int i = 0; i < argv.size(); i++) {
            String a = argv.get(i);
            boolean code = interpreter && i > 0 && (argv.get(i - 1).equals("-c") || argv.get(i - 1).equals("-e"));
            out.add(code ? a : paths.apply(a));
        }
        return out;
    }
}
