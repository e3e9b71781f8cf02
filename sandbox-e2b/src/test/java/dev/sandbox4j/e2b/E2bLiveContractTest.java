package dev.sandbox4j.e2b;

import dev.sandbox4j.api.SandboxRunner;
import dev.sandbox4j.tck.LiveProvider;
import dev.sandbox4j.tck.SandboxRunnerContract;
import java.net.InetAddress;
import java.time.Duration;
import org.junit.jupiter.api.Tag;

/**
 * The contract suite against the E2b account (or emulator) the environment names; only with
 * {@code -Plive}, skipped with the reason when E2B_API_KEY is not set. See {@link LiveProvider}.
 */
@Tag("live")
class E2bLiveContractTest extends SandboxRunnerContract {
    private static final LiveProvider LIVE = LiveProvider.of("e2b", "E2B_API_KEY", "E2B_API_URL");

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
        // a real provider's kill goes through its control plane
        return LIVE.isLocalEmulator() ? super.timeoutGrace() : Duration.ofSeconds(15);
    }
}
