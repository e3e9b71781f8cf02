package dev.sandbox4j.kubernetes;

import dev.sandbox4j.api.SandboxRunner;
import dev.sandbox4j.tck.SandboxRunnerContract;
import java.util.OptionalLong;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;

/**
 * The contract suite on the claim path: every sandbox is a SandboxClaim against a SandboxWarmPool of the
 * emulator (deny-all and allow-all templates as the runner renders them, warm pools of 2 and 1, so some
 * claims adopt a warm Sandbox and the concurrent ones start cold). The canary fails if the template's
 * NetworkPolicy (which the emulated controller makes and the pods' egress follows) is dropped or widened.
 * Leaks: claims, claimed Sandboxes and their pods (the pools' own warm ones aside), back to zero.
 *
 * <p>The long form, only with {@code -Dsandbox4j.k8s.claimContract=true} (about 35-60 s here): the claim
 * path shares exec, files and teardown code with the Sandbox path, whose contract suite runs in every
 * build; what is the claim path's own is checked in every build by {@link KubernetesClaimTest}.
 */
@EnabledIfSystemProperty(named = "sandbox4j.k8s.claimContract", matches = "true",
        disabledReason = "the long form: -Dsandbox4j.k8s.claimContract=true (KubernetesClaimTest covers the claim path in every build)")
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
