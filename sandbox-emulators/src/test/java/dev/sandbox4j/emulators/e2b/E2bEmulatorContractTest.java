package dev.sandbox4j.emulators.e2b;

import dev.sandbox4j.api.SandboxRunner;
import dev.sandbox4j.e2b.E2bSandboxRunner;
import dev.sandbox4j.egress.EgressResolver;
import dev.sandbox4j.local.LocalSandboxRunner;
import dev.sandbox4j.tck.ListCanary;
import dev.sandbox4j.tck.SandboxRunnerContract;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import org.junit.jupiter.api.AfterAll;

/**
 * The contract suite against the E2B adapter talking to the emulator, whose sandboxes are real local
 * bubblewrap sandboxes with the egress the adapter sent applied: the canary fails if the adapter
 * drops or weakens the policy, and the allow-all control reaches it.
 */
class E2bEmulatorContractTest extends SandboxRunnerContract {
    private E2bEmulator emulator;
    private LocalSandboxRunner local;

    @Override
    protected SandboxRunner createRunner() {
        String key = "e2b_" + E2bEmulator.randomId(40);
        // 2 GiB of address space is enough for node and keeps the memory-hog case quick
        ListCanary c = ListCanary.shared();
        // the list case: the emulator's local sandboxes go through their own proxy, set up for the list canary
        local = LocalSandboxRunner.builder().maxAddressSpaceMib(2048)
                .egressProxy(b -> b.resolver(EgressResolver.fixed(c.resolution())).domainPorts(List.of(80, 443, c.port()))
                        .route(ListCanary.ALLOWED, c.port(), c.routeTarget()))
                .build();
        try {
            emulator = E2bEmulator.builder().apiKey(key).localRunner(local).build();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return E2bSandboxRunner.builder().apiKey(key).apiUrl(emulator.baseUrl()).sandboxUrl(emulator.baseUrl())
                .retryBaseDelay(Duration.ofMillis(100)).build();
    }

    @Override
    public Optional<ListCanary> listCanary() {
        return Optional.of(ListCanary.shared());
    }

    /** Sandboxes the emulator holds, and the local sandboxes behind them. */
    @Override
    public OptionalLong liveResources() {
        return OptionalLong.of(emulator.ledger().live() + local.openSandboxes());
    }

    @AfterAll
    void stopEmulator() {
        emulator.close();
        local.close();
    }
}
