package dev.sandbox4j.docker;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sandbox4j.api.Execution;
import dev.sandbox4j.api.RunRequest;
import dev.sandbox4j.api.RunResult;
import dev.sandbox4j.api.SandboxSpec;
import dev.sandbox4j.api.exception.SandboxConfigurationException;
import dev.sandbox4j.policy.Language;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Issue 30 item 3 on a real engine: the runner declares the languages its image really has when asked to
 * find them ({@code probeLanguages(true)}, one container at build, removed), or the ones configured, and
 * refuses code in any other before a container is made. The image without Node.js is the test image
 * with {@code node} removed, built here from it offline ({@code docker build --network none}).
 */
class DockerLanguagesTest {
    private static final String NO_NODE = TestEngine.image() + "-nonode";

    @BeforeAll
    static void imageWithoutNode() throws Exception {
        TestEngine.runner().close(); // skipped (failed in CI) with the reason when there is no engine or test image
        Path dir = Files.createTempDirectory("sandbox4j-nonode");
        try {
            Files.writeString(dir.resolve("Dockerfile"), "FROM " + TestEngine.image() + "\nUSER root\n"
                    + "RUN rm -f /usr/bin/node /usr/bin/nodejs && ! command -v node\nUSER 1000:1000\n", StandardCharsets.UTF_8);
            ProcessBuilder pb = new ProcessBuilder("docker", "build", "--network", "none", "-q", "-t", NO_NODE, dir.toString())
                    .redirectErrorStream(true).redirectOutput(dir.resolve("build.log").toFile());
            Process p;
            try {
                p = pb.start();
            } catch (java.io.IOException e) {
                String reason = "the docker CLI is not on PATH, so no image without node can be built: " + e.getMessage();
                if ("true".equalsIgnoreCase(System.getenv("CI"))) {
                    throw new AssertionError("CI=true: " + reason, e);
                }
                Assumptions.abort(reason);
                return;
            }
            if (!p.waitFor(120, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new AssertionError("docker build did not finish in 120 s");
            }
            assertEquals(0, p.exitValue(), "docker build: " + Files.readString(dir.resolve("build.log")));
        } finally {
            try (var files = Files.list(dir)) {
                for (Path f : (Iterable<Path>) files::iterator) {
                    Files.delete(f);
                }
            }
            Files.delete(dir);
        }
    }

    @Test
    void theProbeFindsWhatEachImageHasAndLeavesNoContainer() {
        try (DockerSandboxRunner full = TestEngine.runner(b -> b.probeLanguages(true))) {
            assertEquals(Set.of(Language.PYTHON, Language.JAVASCRIPT, Language.BASH), full.capabilities().languages());
            assertEquals(0, full.openSandboxes(), "the probe's container is gone");
        }
        java.util.concurrent.atomic.AtomicInteger creates = new java.util.concurrent.atomic.AtomicInteger();
        dev.sandbox4j.api.LifecycleListener counting = new dev.sandbox4j.api.LifecycleListener() {
            @Override
            public Operation started(dev.sandbox4j.api.LifecycleEvent.Phase phase, String provider) {
                if (phase == dev.sandbox4j.api.LifecycleEvent.Phase.CREATE) {
                    creates.incrementAndGet();
                }
                return Operation.NONE;
            }
        };
        try (DockerSandboxRunner noNode = TestEngine.runner(b -> b.image(NO_NODE).probeLanguages(true)
                .lifecycleListener(counting))) {
            assertEquals(1, creates.get(), "the probe made one container");
            assertEquals(Set.of(Language.PYTHON, Language.BASH), noNode.capabilities().languages());
            assertEquals(0, noNode.openSandboxes(), "the probe's container is gone");
            SandboxConfigurationException e = assertThrows(SandboxConfigurationException.class, () -> noNode.run(
                    RunRequest.of(SandboxSpec.defaults(), Execution.builder("console.log(1)").language(Language.JAVASCRIPT).build())));
            assertTrue(e.getMessage().contains("does not run javascript"), e.getMessage());
            assertEquals(1, creates.get(), "refused before any container");
            RunResult py = noNode.run(RunRequest.of(SandboxSpec.defaults(), Execution.builder("print(6 * 7)").build()));
            assertEquals("42\n", py.stdout());
            // the contract suite's own case, on the one runner here that lacks a language
            new OneCase(noNode).codeInALanguageTheRunnerDoesNotDeclareIsRefused();
            assertEquals(2, creates.get(), "the contract case made no container either");
        }
    }

    /**
     * The contract case {@code codeInALanguageTheRunnerDoesNotDeclareIsRefused} outside the whole suite
     * (every contract class here runs a runner that declares all three languages, where it skips): it
     * reads only the runner and the leak count.
     */
    private static final class OneCase implements dev.sandbox4j.tck.BasicsCases {
        private final DockerSandboxRunner runner;
        private final int baseline;

        OneCase(DockerSandboxRunner runner) {
            this.runner = runner;
            this.baseline = runner.openSandboxes();
        }

        @Override
        public dev.sandbox4j.api.SandboxRunner runner() {
            return runner;
        }

        @Override
        public java.util.OptionalLong liveResources() {
            return java.util.OptionalLong.of(runner.openSandboxes());
        }

        @Override
        public void assertLeakCountBackToBaseline() {
            assertEquals(baseline, runner.openSandboxes(), "open sandboxes");
        }

        @Override
        public java.util.Optional<dev.sandbox4j.policy.EgressPolicy> canaryReachingPolicy() {
            throw new UnsupportedOperationException();
        }

        @Override
        public java.util.Optional<dev.sandbox4j.policy.EgressPolicy> lockDownCanaryPolicy() {
            throw new UnsupportedOperationException();
        }

        @Override
        public java.util.Optional<dev.sandbox4j.tck.ListCanary> listCanary() {
            throw new UnsupportedOperationException();
        }

        @Override
        public String canaryHost() {
            throw new UnsupportedOperationException();
        }

        @Override
        public java.net.InetAddress canaryBindAddress() {
            throw new UnsupportedOperationException();
        }

        @Override
        public String dnsProbeName() {
            throw new UnsupportedOperationException();
        }

        @Override
        public java.time.Duration timeoutGrace() {
            throw new UnsupportedOperationException();
        }
    }

    @Test
    void withoutTheProbeTheConfiguredLanguagesAreDeclaredAndTheUnprobedImageFailsInside() {
        // what a wrong declaration costs: the code runs and the shell cannot find node
        try (DockerSandboxRunner wrong = TestEngine.runner(b -> b.image(NO_NODE))) {
            assertTrue(wrong.capabilities().supports(Language.JAVASCRIPT), "the default declaration: all three");
            RunResult r = wrong.run(RunRequest.of(SandboxSpec.defaults(),
                    Execution.builder("console.log(1)").language(Language.JAVASCRIPT).build()));
            assertTrue(r.exitCode().orElse(0) != 0, "node is missing from the image: " + r);
        }
        try (DockerSandboxRunner declared = TestEngine.runner(b -> b.image(NO_NODE).languages(Language.PYTHON, Language.BASH))) {
            assertEquals(Set.of(Language.PYTHON, Language.BASH), declared.capabilities().languages());
        }
        try (DockerSandboxRunner fromEnv = DockerSandboxRunner.builderFromEnv(Map.of(
                DockerSandboxRunner.IMAGE_VARIABLE, NO_NODE, DockerSandboxRunner.LANGUAGES_VARIABLE, "probe"))
                .allowAllNetwork("host").build()) {
            assertEquals(Set.of(Language.PYTHON, Language.BASH), fromEnv.capabilities().languages());
        }
        assertThrows(SandboxConfigurationException.class, () -> DockerSandboxRunner.builderFromEnv(
                Map.of(DockerSandboxRunner.LANGUAGES_VARIABLE, "python,cobol")));
    }
}
