package dev.sandbox4j.emulators.modal.internal;

import dev.sandbox4j.api.Execution;
import dev.sandbox4j.emulators.ShellWords;
import dev.sandbox4j.policy.Language;
import java.time.Duration;
import java.util.List;
import java.util.Map;

/**
 * Turns an exec's argv, workdir and env into one Bash {@link Execution} for the local sandbox:
 * {@code [cd WORKDIR &&] exec [env K=V ...] ARGV...}, every word single-quoted, so the argv reaches the
 * program byte for byte and nothing is interpreted twice (the program runs by {@code exec}, as the router
 * would start it, with no shell in between that could see its arguments).
 */
public final class Commands {
    /** What the SDK itself enforces before sending (modal.md 3.7). */
    public static final int MAX_ARGV_BYTES = 65_536;

    private Commands() {
    }

    public static Execution toExecution(List<String> argv, String workdir, Map<String, String> env, Duration budget,
            int outputLimit) {
        return toExecution(argv, workdir, env, budget, outputLimit, false);
    }

    /**
     * With {@code mergeStderr} (TASK_EXEC_STDERR_CONFIG_STDOUT) stderr goes into the stdout pipe itself
     * ({@code 2>&1}), so the two interleave exactly as the program wrote them, one pipe as on Modal.
     */
    public static Execution toExecution(List<String> argv, String workdir, Map<String, String> env, Duration budget,
            int outputLimit, boolean mergeStderr) {
        StringBuilder line = new StringBuilder();
        if (workdir != null) {
            line.append("cd ").append(ShellWords.quote(workdir)).append(" && ");
        }
        line.append(mergeStderr ? "exec 2>&1" : "exec");
        if (!env.isEmpty()) {
            line.append(" env");
            env.forEach((k, v) -> line.append(' ').append(ShellWords.quote(k + "=" + v)));
        }
        line.append(' ').append(ShellWords.quoteAll(argv));
        return Execution.builder(line.toString()).language(Language.BASH).budget(budget)
                .outputLimit(outputLimit).hardCapBytes(Math.max(1, outputLimit) * 4L).build();
    }
}
