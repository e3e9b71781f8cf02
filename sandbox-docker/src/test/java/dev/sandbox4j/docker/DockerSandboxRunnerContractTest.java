package dev.sandbox4j.docker;

import dev.sandbox4j.api.SandboxRunner;
import dev.sandbox4j.tck.SandboxRunnerContract;
import java.util.OptionalLong;

/**
 * The contract suite against a real Docker engine (skipped with the reason without one; failed in CI).
 * The leak count is this runner's open sandboxes plus every container and volume on the engine that
 * carries the run-id label.
 */
class DockerSandboxRunnerContractTest extends SandboxRunnerContract {
    private DockerSandboxRunner docker;

    @Override
    protected SandboxRunner createRunner() {
        docker = TestEngine.runner();
        return docker;
    }

    @Override
    public OptionalLong liveResources() {
        try {
            return OptionalLong.of(docker.openSandboxes() + docker.driver().labelledResources());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }
}
