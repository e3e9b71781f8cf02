package dev.sandbox4j.emulators.modal;

import dev.sandbox4j.api.SandboxRunner;
import dev.sandbox4j.egress.EgressResolver;
import dev.sandbox4j.local.LocalSandboxRunner;
import dev.sandbox4j.modal.ModalSandboxRunner;
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
 * The contract suite: the Modal adapter (sandbox-modal) against the Modal emulator over gRPC, every
 * sandbox a local one with the network_access the adapter sent. The two share no classes: each
 * compiles its own subset of Modal's protos. An ALLOWLIST goes on to the local runner's egress proxy,
 * set up for the list canary (its resolver answers only the canary's names, {@code allowed.test} on the
 * canary's port routed to it, all on loopback), so the suite's list case runs here.
 */
class ModalAdapterContractTest extends SandboxRunnerContract {
    private LocalSandboxRunner local;
    private ModalEmulator emulator;

    @Override
    protected SandboxRunner createRunner() {
        ListCanary c = ListCanary.shared();
        local = LocalSandboxRunner.builder().maxAddressSpaceMib(2048)
                .egressProxy(p -> p.resolver(EgressResolver.fixed(c.resolution())).domainPorts(List.of(80, 443, c.port()))
                        .route(ListCanary.ALLOWED, c.port(), c.routeTarget()))
                .build();
        try {
            // the emulator kills a command at its own output limit (1 MB by default): the suite's
            // 10 MB and flood cases need the adapter's cap to be the one that acts
            emulator = ModalEmulator.builder().runner(local).outputLimit(16_000_000).build();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        // the languages are probed in the emulator's first sandbox (a local one): python3, node and bash
        // are there exactly when the local runner has them, so its JavaScript cases run here too
        ModalSandboxRunner modal = ModalSandboxRunner.builder().serverUrl(emulator.serverUrl()).tokenId(emulator.tokenId())
                .tokenSecret(emulator.tokenSecret()).retryBaseDelay(Duration.ofMillis(100)).probeLanguages(true).build();
        org.junit.jupiter.api.Assertions.assertEquals(local.capabilities().languages(), modal.capabilities().languages(),
                "the probe finds the local runner's interpreters");
        return modal;
    }

    @Override
    public Optional<ListCanary> listCanary() {
        return Optional.of(ListCanary.shared());
    }

    /**
     * A lock-down from allow-all to a domain list (the adapter's TaskSetNetworkAccess after setup) switches
     * the running local sandbox from the host network to its egress proxy.
     */
    @org.junit.jupiter.api.Test
    void aLockDownToADomainListGoesThroughTheProxy() throws Exception {
        dev.sandbox4j.emulators.ListLockDown.check(ListCanary.shared(), this::run);
    }

    /** Live sandboxes in the emulator and open local sandboxes. */
    @Override
    public OptionalLong liveResources() {
        return OptionalLong.of(emulator.ledger().live() + local.openSandboxes());
    }

    @AfterAll
    void stopTheEmulator() {
        if (emulator != null) {
            emulator.close();
            org.junit.jupiter.api.Assertions.assertTrue(emulator.ledger().created() > 10, emulator.ledger().toString());
        }
        if (local != null) {
            local.close();
        }
    }
}
