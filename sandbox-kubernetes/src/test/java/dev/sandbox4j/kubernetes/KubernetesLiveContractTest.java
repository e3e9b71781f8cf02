package dev.sandbox4j.kubernetes;

import dev.sandbox4j.api.SandboxRunner;
import dev.sandbox4j.tck.LiveProvider;
import dev.sandbox4j.tck.SandboxRunnerContract;
import java.net.InetAddress;
import java.time.Duration;
import org.junit.jupiter.api.Tag;

/**
 * The contract suite against the cluster of {@code KUBECONFIG} (or {@code SANDBOX4J_K8S_API_URL}); only
 * with {@code -Plive}, skipped with the reason unless {@code SANDBOX4J_K8S_NETWORK_POLICY_ENFORCED=true}.
 * See {@link LiveProvider}. Never run here: no cluster is reachable from this build machine.
 */
@Tag("live")
class KubernetesLiveContractTest extends SandboxRunnerContract {
    private static final LiveProvider LIVE = LiveProvider.of("kubernetes",
            "KUBECONFIG and " + KubernetesSandboxRunner.NETWORK_POLICY_ENFORCED_VARIABLE + "=true",
            KubernetesSandboxRunner.API_URL_VARIABLE);

    @Override
    protected SandboxRunner createRunner() {
        return LIVE.runner();
    }

    @Override
    public String canaryHost() {
        return LIVE.canaryHost();
    }

    @Override
    public InetAddress canaryBindAddress() {
        return LIVE.canaryBindAddress();
    }

    @Override
    public Duration timeoutGrace() {
        // the kill is a second exec through the API server and the kubelet
        return LIVE.isLocalEmulator() ? super.timeoutGrace() : Duration.ofSeconds(15);
    }
}
