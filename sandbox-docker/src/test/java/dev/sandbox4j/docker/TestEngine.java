package dev.sandbox4j.docker;

import dev.sandbox4j.api.exception.SandboxConfigurationException;
import dev.sandbox4j.docker.internal.DockerDriver;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.Assumptions;

/**
 * The engine and image this module's tests use: the image docker/build-test-image.sh builds offline
 * ({@value #DEFAULT_TEST_IMAGE}, or SANDBOX4J_DOCKER_TEST_IMAGE), allow-all on the host network so the
 * egress canary's control run reaches a host loopback listener. Without a reachable engine or the image
 * the tests are skipped with the reason; in CI (CI=true) they fail instead, so CI cannot pass without them.
 */
public final class TestEngine {
    static final String DEFAULT_TEST_IMAGE = "sandbox4j-test:bookworm-1";

    private TestEngine() {
    }

    static String image() {
        String v = System.getenv("SANDBOX4J_DOCKER_TEST_IMAGE");
        return v == null || v.isBlank() ? DEFAULT_TEST_IMAGE : v.trim();
    }

    /** The builder the tests start from (the test image, allow-all on the host network). */
    public static DockerSandboxRunner.Builder builder() {
        return DockerSandboxRunner.builder().image(image()).allowAllNetwork("host");
    }

    /** A verified runner, or the test is skipped (failed in CI) with the reason. */
    public static DockerSandboxRunner runner(UnaryOperator<DockerSandboxRunner.Builder> config) {
        DockerSandboxRunner r = config.apply(builder()).build();
        try {
            r.verify();
        } catch (SandboxConfigurationException e) {
            r.close();
            String reason = "no usable Docker engine, so the Docker runner's tests do not run: " + e.getMessage()
                    + " (build the image with docker/build-test-image.sh)";
            if ("true".equalsIgnoreCase(System.getenv("CI"))) {
                throw new AssertionError("CI=true: " + reason, e);
            }
            Assumptions.abort(reason);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
        return r;
    }

    /** The runner's driver, for tests in the internal package. */
    public static DockerDriver driver(DockerSandboxRunner runner) {
        return runner.driver();
    }

    static DockerSandboxRunner runner() {
        return runner(b -> b);
    }
}
