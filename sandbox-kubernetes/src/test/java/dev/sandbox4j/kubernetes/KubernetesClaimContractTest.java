package dev.sandbox4j.kubernetes;

import dev.sandbox4j.api.SandboxRunner;
import dev.sandbox4j.tck.SandboxRunnerContract;
import java.util.OptionalLong;
import org.junit.jupiter.api.AfterAll;

/**
 * The contract suite on the claim path: every sandbox is a SandboxClaim against a SandboxWarmPool of the
 * emulator (deny-all and allow-all templates as the runner renders them, warm pools of 2 and 1, so some
 * claims adopt a warm Sandbox and the concurrent ones start cold). The canary fails if the template's
 * NetworkPolicy (which the emulated controller makes and the pods' egress follows) is dropped or widened.
 * Leaks: claims, claimed Sandboxes and their pods (the pools' own warm ones aside), back to zero.
 */
class KubernetesClaimContractTest extends SandboxRunnerContract {
    private EmulatedCluster cluster;

    @Override
    protected SandboxRunner createRunner() {
        cluster = new EmulatedCluster();
        return cluster.claimRunner(2, 1).build();
    }

    @Override
    public OptionalLong liveResources() {
        return OptionalLong.of(cluster.claimLeaks());
    }

    @AfterAll
    void stopEmulator() {
        cluster.close();
    }
}
