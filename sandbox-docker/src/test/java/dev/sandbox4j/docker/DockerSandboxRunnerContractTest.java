package dev.sandbox4j.docker;

import dev.sandbox4j.api.SandboxRunner;
import dev.sandbox4j.egress.EgressResolver;
import dev.sandbox4j.policy.EgressPolicy;
import dev.sandbox4j.tck.ListCanary;
import dev.sandbox4j.tck.SandboxRunnerContract;
import java.util.List;
import java.util.Optional;
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
        ListCanary c = ListCanary.shared();
        // the list case's names: the test's resolver and route, the canary's port a domain port
        docker = TestEngine.runner(b -> b.egressProxy(p -> p.resolver(EgressResolver.fixed(c.resolution()))
                .domainPorts(List.of(80, 443, c.port())).route(ListCanary.ALLOWED, c.port(), c.routeTarget())));
        return docker;
    }

    /**
     * The lock-down cases' setup egress: the canary's address as an allowed CIDR, reached through the runner's
     * proxy. Allow-all here is the host network ({@link TestEngine}), which the engine cannot take from a live
     * container, so the runner refuses a lock-down from it; a list it can lock down from.
     */
    @Override
    public Optional<EgressPolicy> lockDownCanaryPolicy() {
        return Optional.of(EgressPolicy.builder(EgressPolicy.Default.DENY).allowCidr(canaryHost() + "/32").build());
    }

    @Override
    public Optional<ListCanary> listCanary() {
        return Optional.of(ListCanary.shared());
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
