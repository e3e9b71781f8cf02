package dev.sandbox4j.benchmarks;

import static dev.sandbox4j.benchmarks.Interleaved.check;

import dev.sandbox4j.api.RunRequest;
import dev.sandbox4j.benchmarks.Interleaved.Case;
import dev.sandbox4j.docker.DockerSandboxRunner;
import java.io.InputStream;
import java.util.List;
import java.util.Locale;

/**
 * The Docker runner's one-shot {@code run()} against {@code docker run --rm} on the same image and engine
 * (issue 35 item 4), interleaved (round robin, the order rotating each round), after 3 warm-up rounds:
 * <ul>
 *   <li>docker run --rm: {@code docker run --rm --network none <image> python3 -c 'print(1)'} through the
 *       CLI, its output read and its exit awaited;</li>
 *   <li>runner run: {@code runner.run(RunRequest.python("print(1)"))} (deny-all: network {@code none}).</li>
 * </ul>
 * The image is {@code SANDBOX4J_DOCKER_IMAGE} (default the runner's); the engine {@code DOCKER_HOST} or the
 * usual socket. Usage: {@code DockerRunRmLatency [rounds]} (default 15). Prints both medians and their ratio.
 */
public final class DockerRunRmLatency {
    private DockerRunRmLatency() {
    }

    public static void main(String[] args) throws Exception {
        int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 15;
        try (DockerSandboxRunner docker = DockerSandboxRunner.fromEnv()) {
            docker.verify();
            String image = System.getenv().getOrDefault(DockerSandboxRunner.IMAGE_VARIABLE, "");
            if (image.isEmpty()) {
                throw new IllegalStateException("set " + DockerSandboxRunner.IMAGE_VARIABLE + " to the image both cases run");
            }
            List<String> cli = List.of("docker", "run", "--rm", "--network", "none", image, "python3", "-c", "print(1)");
            System.out.println("command: " + String.join(" ", cli));
            List<Case> cases = List.of(
                    new Case("docker run --rm (CLI)", () -> cli(cli)),
                    new Case("runner.run(print(1))", () -> check(docker.run(RunRequest.python("print(1)")))));
            Interleaved.measure(cases, 3, rounds, "; " + docker.engine().orElse("?") + "; " + image);
            double rm = cases.get(0).median();
            double run = cases.get(1).median();
            System.out.printf(Locale.ROOT, "runner.run / docker run --rm: %.3fx (%+.1f ms)%n", run / rm, run - rm);
        }
    }

    private static void cli(List<String> argv) throws Exception {
        Process p = new ProcessBuilder(argv).redirectErrorStream(true).start();
        String out;
        try (InputStream in = p.getInputStream()) {
            out = new String(in.readAllBytes());
        }
        if (p.waitFor() != 0 || !out.equals("1\n")) {
            throw new IllegalStateException("docker run --rm failed: " + out);
        }
    }
}
