package dev.sandbox4j.kubernetes;

import dev.sandbox4j.api.SandboxRunner;
import dev.sandbox4j.tck.SandboxRunnerContract;
import java.util.OptionalLong;
import org.junit.jupiter.api.AfterAll;

/**
 * The contract suite against the Kubernetes runner talking to the agent-sandbox emulator (an API
 * server and controller of this project, not a cluster), whose pods are real local bubblewrap
 * sandboxes with the egress of the NetworkPolicy the runner created: the canary fails if the runner
 * drops or weakens the policy, and the allow-all control reaches it. Leaks: pods running, objects
 * stored (Sandboxes, NetworkPolicies, pods) and local sandboxes open, back to zero after every test.
 */
class KubernetesEmulatorContractTest extends SandboxRunnerContract {
    private EmulatedCluster cluster;

    @Override
    protected SandboxRunner createRunner() {
        cluster = new EmulatedCluster();
        return cluster.runner().build();
    }

    @Override
    public OptionalLong liveResources() {
        return OptionalLong.of(cluster.leaks());
    }

    @AfterAll
    void stopEmulator() {
        cluster.close();
    }
}
