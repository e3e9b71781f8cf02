package dev.sandbox4j.emulators.vercel.internal;

import static dev.sandbox4j.emulators.ShellWords.quote;

import dev.sandbox4j.api.Execution;
import dev.sandbox4j.emulators.ShellWords;
import dev.sandbox4j.policy.Language;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.UnaryOperator;

/**
 * Maps a Vercel command (program, args, cwd, env) to an {@link Execution} for the local sandbox:
 * {@code python3 -c CODE} to Python, {@code node -e CODE} to JavaScript, {@code bash|sh [-l] -c CMD}
 * to Bash, and anything else to a Bash line with every argv element single-quoted. Code reaches the
 * interpreter byte for byte; only whole argv elements naming a path the emulator maps (the session
 * directory {@code /vercel/sandbox/...}, or a file uploaded elsewhere) are rewritten to where that path
 * lives in the machine.
 */
public final class CommandLine {
    private static final Set<String> PYTHON = Set.of("python3", "/usr/bin/python3");
    private static final Set<String> NODE = Set.of("node", "/usr/bin/node");

    private CommandLine() {
    }

    /**
     * @param translate maps a Vercel path to the machine's path, or returns it unchanged
     * @param workPath the machine's working directory (where {@code /vercel/sandbox} lives)
     * @param cwd the command's cwd, or null for the session cwd
     */
    public static Execution toExecution(String command, List<String> args, Map<String, String> env, String cwd,
            UnaryOperator<String> translate, String workPath, Duration budget, int outputLimit) {
        Execution.Builder b;
        String localCwd = cwd == null ? workPath : translate.apply(cwd);
        boolean plain = env.isEmpty() && localCwd.equals(workPath);
        if (plain && args.size() == 2 && PYTHON.contains(command) && args.get(0).equals("-c")) {
            b = Execution.builder(args.get(1)).language(Language.PYTHON);
        } else if (plain && args.size() == 2 && NODE.contains(command) && args.get(0).equals("-e")) {
            b = Execution.builder(args.get(1)).language(Language.JAVASCRIPT);
        } else if (plain && ShellWords.shellCommand(command, args) != null) {
            b = Execution.builder(ShellWords.shellCommand(command, args)).language(Language.BASH);
        } else {
            StringBuilder line = new StringBuilder();
            if (!localCwd.equals(workPath)) {
                line.append("cd ").append(quote(localCwd)).append(" && ");
            }
            line.append("exec");
            if (!env.isEmpty()) {
                line.append(" env");
                env.forEach((k, v) -> line.append(' ').append(quote(k + "=" + v)));
            }
            line.append(' ').append(quote(translate.apply(command)));
            for (String a : args) {
                line.append(' ').append(quote(translate.apply(a)));
            }
            b = Execution.builder(line.toString()).language(Language.BASH);
        }
        // The emulator's own bound: past outputLimit characters the command is killed (see VercelEmulator).
        return b.budget(budget).outputLimit(outputLimit).hardCapBytes(Math.max(1, outputLimit)).build();
    }
}
