package dev.sandbox4j.vercel;

import dev.sandbox4j.api.SandboxRunner;
import dev.sandbox4j.tck.LiveProvider;
import dev.sandbox4j.tck.SandboxRunnerContract;
import java.net.InetAddress;
import java.time.Duration;
import org.junit.jupiter.api.Tag;

/**
 * The contract suite against the Vercel account (or emulator) the environment names; only with
 * {@code -Plive}, skipped with the reason when VERCEL_TOKEN with VERCEL_TEAM_ID and VERCEL_PROJECT_ID, or VERCEL_OIDC_TOKEN is not set. See {@link LiveProvider}.
 */
@Tag("live")
class VercelLiveContractTest extends SandboxRunnerContract {
    private static final LiveProvider LIVE = LiveProvider.of("vercel", "VERCEL_TOKEN with VERCEL_TEAM_ID and VERCEL_PROJECT_ID, or VERCEL_OIDC_TOKEN", "VERCEL_API_URL");

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
