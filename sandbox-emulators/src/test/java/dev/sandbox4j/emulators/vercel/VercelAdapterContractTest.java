package dev.sandbox4j.emulators.vercel;

import dev.sandbox4j.api.SandboxRunner;
import dev.sandbox4j.egress.EgressResolver;
import dev.sandbox4j.emulators.LocalMachines;
import dev.sandbox4j.local.LocalSandboxRunner;
import dev.sandbox4j.tck.ListCanary;
import dev.sandbox4j.tck.SandboxRunnerContract;
import dev.sandbox4j.vercel.VercelSandboxRunner;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.parallel.Isolated;

/**
 * The contract suite: our Vercel adapter against the emulator, which runs every command in a local
 * sandbox with the network the adapter's policy asked for. The canary (deny-all) and its allow-all
 * control go through the adapter's policy translation and the emulator's reading of it; the domain
 * list goes on to the local runner's egress proxy, set up for the list canary (its resolver answers
 * only the canary's names, with the canary's loopback address).
 */
@Isolated("it counts this JVM's child processes, which another class's sandboxes would add to")
class VercelAdapterContractTest extends SandboxRunnerContract {
    private LocalSandboxRunner local;
    private VercelEmulator emulator;

    @Override
    protected SandboxRunner createRunner() {
        // 2 GiB of address space is enough for node and keeps the memory-hog case quick
        ListCanary c = ListCanary.shared();
        // the list case: the emulator's local sandboxes go through their own proxy, set up for the list canary
        local = LocalSandboxRunner.builder().maxAddressSpaceMib(2048)
                .egressProxy(b -> b.resolver(EgressResolver.fixed(c.resolution())).domainPorts(List.of(80, 443, c.port()))
                        .route(ListCanary.ALLOWED, c.port(), c.routeTarget()))
                .build();
        try {
            emulator = VercelEmulator.builder().token("contract-token-5b2e9d").teamId("team_tck").projectId("prj_tck")
                    .machines(LocalMachines.using(local)).build();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return VercelSandboxRunner.builder().token("contract-token-5b2e9d").teamId("team_tck").projectId("prj_tck")
                .baseUrl(emulator.baseUrl() + "/api").build();
    }

    @Override
    public Optional<ListCanary> listCanary() {
        return Optional.of(ListCanary.shared());
    }

    /** A live update from allow-all to a list switches the running local sandbox to its egress proxy. */
    @org.junit.jupiter.api.Test
    void aLockDownToADomainListGoesThroughTheProxy() throws Exception {
        dev.sandbox4j.emulators.ListLockDown.check(ListCanary.shared(), this::run);
    }

    /** Live sessions in the emulator, open local sandboxes, and every process this JVM started. */
    @Override
    public OptionalLong liveResources() {
        return OptionalLong.of(emulator.ledger().live() + local.openSandboxes()
                + ProcessHandle.current().descendants().count());
    }

    @AfterAll
    void stopTheEmulator() {
        if (emulator != null) {
            emulator.close();
            // the suite went through the emulator, not around it
            org.junit.jupiter.api.Assertions.assertTrue(emulator.ledger().created() > 10, emulator.ledger().toString());
        }
        if (local != null) {
            local.close();
        }
    }
}
