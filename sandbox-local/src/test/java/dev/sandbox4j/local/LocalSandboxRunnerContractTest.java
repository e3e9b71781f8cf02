package dev.sandbox4j.local;

import dev.sandbox4j.api.SandboxRunner;
import dev.sandbox4j.egress.EgressResolver;
import dev.sandbox4j.tck.ListCanary;
import dev.sandbox4j.tck.SandboxRunnerContract;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import org.junit.jupiter.api.AfterAll;

/** The contract suite against the real bubblewrap runner. */
class LocalSandboxRunnerContractTest extends SandboxRunnerContract {
    private Path workRoot;
    private LocalSandboxRunner local;

    @Override
    protected SandboxRunner createRunner() {
        try {
            workRoot = TestDirs.workRoot();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        // 2 GiB of address space is enough for node and keeps the memory-hog case quick
        ListCanary c = ListCanary.shared();
        local = LocalSandboxRunner.builder().workRoot(workRoot).maxAddressSpaceMib(2048)
                // the list case's names: the test's resolver and route, the canary's port a domain port
                .egressProxy(b -> b.resolver(EgressResolver.fixed(c.resolution())).domainPorts(List.of(80, 443, c.port()))
                        .route(ListCanary.ALLOWED, c.port(), c.routeTarget()))
                .build();
        return local;
    }

    @Override
    public Optional<ListCanary> listCanary() {
        return Optional.of(ListCanary.shared());
    }

    /** Open sandboxes, their directories, and every process this JVM started (bwrap and all inside it). */
    @Override
    public OptionalLong liveResources() {
        try {
            return OptionalLong.of(local.openSandboxes() + TestDirs.entries(workRoot)
                    + ProcessHandle.current().descendants().count());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @AfterAll
    void deleteWorkRoot() throws IOException {
        TestDirs.delete(workRoot);
    }
}
