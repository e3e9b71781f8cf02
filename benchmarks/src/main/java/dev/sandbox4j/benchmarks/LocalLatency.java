package dev.sandbox4j.benchmarks;

import static dev.sandbox4j.benchmarks.Interleaved.check;

import dev.sandbox4j.api.Execution;
import dev.sandbox4j.api.RunRequest;
import dev.sandbox4j.api.Sandbox;
import dev.sandbox4j.api.SandboxSpec;
import dev.sandbox4j.benchmarks.Interleaved.Case;
import dev.sandbox4j.local.LocalSandboxRunner;
import java.util.List;
import java.util.Locale;

/**
 * The local runner's added latency over a bare {@code /usr/bin/python3 -c 'print(1)'}, all from Java.
 * Three cases run interleaved (round robin, the order rotating each round) so that load changes on a
 * shared machine hit them alike:
 * <ul>
 *   <li>bare: {@code ProcessBuilder("/usr/bin/python3", "-c", "print(1)")}, output read, exit awaited;</li>
 *   <li>run: {@code runner.run(RunRequest.python("print(1)"))}: create the sandbox directory, one
 *       bwrap execution, teardown;</li>
 *   <li>exec: {@code sandbox.exec(...)} on an open sandbox: one bwrap execution;</li>
 *   <li>the same two with {@code kernelLimits(false)}: no per-sandbox file system or cgroups (as a JVM
 *       that is not root runs), to show what those cost.</li>
 * </ul>
 * Usage: {@code LocalLatency [rounds]} (default 20), after a warm-up of 5 rounds.
 */
public final class LocalLatency {
    private LocalLatency() {
    }

    public static void main(String[] args) throws Exception {
        int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 20;
        try (LocalSandboxRunner runner = LocalSandboxRunner.create().verify();
             Sandbox session = runner.open(SandboxSpec.defaults());
             LocalSandboxRunner plain = LocalSandboxRunner.builder().kernelLimits(false).build().verify();
             Sandbox plainSession = plain.open(SandboxSpec.defaults())) {
            List<Case> cases = List.of(
                    Interleaved.bare(),
                    new Case("runner.run (open+exec+close)", () -> check(runner.run(RunRequest.python("print(1)")))),
                    new Case("sandbox.exec (open session)", () -> check(session.exec(Execution.python("print(1)")))),
                    // without the per-sandbox file system and cgroups (what a JVM that is not root gets)
                    new Case("run, kernelLimits(false)", () -> check(plain.run(RunRequest.python("print(1)")))),
                    new Case("exec, kernelLimits(false)", () -> check(plainSession.exec(Execution.python("print(1)")))));
            Interleaved.measure(cases, 5, rounds, "");
            double bare = cases.get(0).median();
            System.out.printf(Locale.ROOT, "added latency (median - bare median): run %+.1f ms, exec %+.1f ms;"
                    + " kernelLimits(false): run %+.1f ms, exec %+.1f ms%n",
                    cases.get(1).median() - bare, cases.get(2).median() - bare,
                    cases.get(3).median() - bare, cases.get(4).median() - bare);
        }
    }
}
