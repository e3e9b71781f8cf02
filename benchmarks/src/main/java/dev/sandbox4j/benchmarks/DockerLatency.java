package dev.sandbox4j.benchmarks;

import static dev.sandbox4j.benchmarks.Interleaved.check;

import dev.sandbox4j.api.Execution;
import dev.sandbox4j.api.RunRequest;
import dev.sandbox4j.api.Sandbox;
import dev.sandbox4j.api.SandboxSpec;
import dev.sandbox4j.benchmarks.Interleaved.Case;
import dev.sandbox4j.docker.DockerSandboxRunner;
import dev.sandbox4j.local.LocalSandboxRunner;
import java.util.List;
import java.util.Locale;

/**
 * The Docker runner's added latency over a bare {@code /usr/bin/python3 -c 'print(1)'} on the host, beside
 * the local runner's, all from Java. Five cases run interleaved (round robin, the order rotating each
 * round) so that load changes on a shared machine hit them alike:
 * <ul>
 *   <li>bare: {@code ProcessBuilder("/usr/bin/python3", "-c", "print(1)")}, output read, exit awaited;</li>
 *   <li>docker run: {@code runner.run(RunRequest.python("print(1)"))}: container create and start, one
 *       exec (create, attached start, inspect), force removal with its volume;</li>
 *   <li>docker exec: {@code sandbox.exec(...)} on an open container: one exec;</li>
 *   <li>local run and local exec: the same on the bubblewrap runner.</li>
 * </ul>
 * The image is {@code SANDBOX4J_DOCKER_IMAGE} (default the runner's); the engine {@code DOCKER_HOST} or the
 * usual socket. Usage: {@code DockerLatency [rounds]} (default 20), after a warm-up of 5 rounds.
 */
public final class DockerLatency {
    private DockerLatency() {
    }

    public static void main(String[] args) throws Exception {
        int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 20;
        try (DockerSandboxRunner docker = DockerSandboxRunner.fromEnv();
             LocalSandboxRunner local = LocalSandboxRunner.create().verify()) {
            docker.verify();
            try (Sandbox dockerSession = docker.open(SandboxSpec.defaults());
                 Sandbox localSession = local.open(SandboxSpec.defaults())) {
                List<Case> cases = List.of(
                        Interleaved.bare(),
                        new Case("docker run (open+exec+close)", () -> check(docker.run(RunRequest.python("print(1)")))),
                        new Case("docker exec (open session)", () -> check(dockerSession.exec(Execution.python("print(1)")))),
                        new Case("local run (open+exec+close)", () -> check(local.run(RunRequest.python("print(1)")))),
                        new Case("local exec (open session)", () -> check(localSession.exec(Execution.python("print(1)")))));
                Interleaved.measure(cases, 5, rounds, "; " + docker.engine().orElse("?") + "; " + docker);
                double bare = cases.get(0).median();
                System.out.printf(Locale.ROOT, "added latency (median - bare median): docker run %+.1f ms, docker exec %+.1f ms;"
                        + " local run %+.1f ms, local exec %+.1f ms%n",
                        cases.get(1).median() - bare, cases.get(2).median() - bare,
                        cases.get(3).median() - bare, cases.get(4).median() - bare);
            }
        }
    }
}
