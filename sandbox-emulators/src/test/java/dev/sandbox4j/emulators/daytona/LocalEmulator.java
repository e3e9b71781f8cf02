package dev.sandbox4j.emulators.daytona;

import dev.sandbox4j.daytona.DaytonaSandboxRunner;
import dev.sandbox4j.egress.EgressResolver;
import dev.sandbox4j.emulators.LocalMachines;
import dev.sandbox4j.local.LocalSandboxRunner;
import dev.sandbox4j.tck.ListCanary;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Stream;

/** The emulator over real local bubblewrap machines, and our Daytona adapter pointed at it. */
final class LocalEmulator implements AutoCloseable {
    final Path workRoot;
    final LocalSandboxRunner local;
    final DaytonaEmulator emulator;

    LocalEmulator(int startingPolls) throws IOException {
        this(startingPolls, null);
    }

    /**
     * @param listCanary when not null, the local runner's egress proxy is set up for it (its resolver
     *                   answers only the canary's names, with the canary's loopback address), so a domain
     *                   list the emulator receives is enforced for the list case
     */
    LocalEmulator(int startingPolls, ListCanary listCanary) throws IOException {
        // the local runner drops to nobody when the JVM is root: its work root must be traversable
        workRoot = Files.createTempDirectory("daytonaemu-local-");
        Files.setPosixFilePermissions(workRoot, PosixFilePermissions.fromString("rwx--x--x"));
        // 2 GiB of address space is enough for node and keeps the memory-hog case quick
        LocalSandboxRunner.Builder b = LocalSandboxRunner.builder().workRoot(workRoot).maxAddressSpaceMib(2048);
        if (listCanary != null) {
            ListCanary c = listCanary;
            b.egressProxy(p -> p.resolver(EgressResolver.fixed(c.resolution())).domainPorts(List.of(80, 443, c.port()))
                    .route(ListCanary.ALLOWED, c.port(), c.routeTarget()));
        }
        local = b.build().verify();
        emulator = DaytonaEmulator.builder(LocalMachines.using(local)).startingPolls(startingPolls).build();
    }

    /** The adapter as a user configures it, with short polls and retries so faults resolve quickly. */
    DaytonaSandboxRunner.Builder adapter() {
        return DaytonaSandboxRunner.builder()
                .apiKey(emulator.apiKey())
                .apiUrl(emulator.apiUrl())
                .target("us")
                .statusPollInterval(Duration.ofMillis(20))
                .lostCreateWindow(Duration.ofSeconds(1)) // the emulator creates at once: a short search suffices
                .retryBaseDelay(Duration.ofMillis(20))
                .teardownTimeout(Duration.ofSeconds(20));
    }

    /** Sandboxes the emulator holds plus local sandboxes still open. */
    long live() {
        return emulator.ledger().live() + local.openSandboxes();
    }

    @Override
    public void close() throws IOException {
        emulator.close();
        local.close();
        try (Stream<Path> s = Files.walk(workRoot)) {
            for (Path p : s.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(p);
            }
        }
    }
}
