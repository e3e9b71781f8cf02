package dev.sandbox4j.emulators.campaign;

import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sandbox4j.api.SandboxRunner;
import dev.sandbox4j.emulators.Faults;
import dev.sandbox4j.emulators.Faults.Fault;
import dev.sandbox4j.emulators.HttpEmulator;
import dev.sandbox4j.emulators.Ledger;
import dev.sandbox4j.emulators.daytona.DaytonaEmulator;
import dev.sandbox4j.emulators.e2b.E2bEmulator;
import dev.sandbox4j.emulators.vercel.VercelEmulator;
import dev.sandbox4j.local.LocalSandboxRunner;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.parallel.Isolated;

/**
 * The pool campaign ({@link PoolCampaign}) on each REST adapter against its emulator, the three at once,
 * with the fault campaign's short client deadlines, on real local sandboxes; Modal's is in its emulator's
 * module.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(600)
@Isolated("the pool campaign's rounds wait for refills within bounds measured with the machine to itself")
class PoolFaultCampaignTest {
    private Path workRoot;
    private LocalSandboxRunner local;

    @BeforeAll
    void start() throws IOException {
        workRoot = Files.createTempDirectory("poolcampaign-local-");
        Files.setPosixFilePermissions(workRoot, PosixFilePermissions.fromString("rwx--x--x"));
        local = LocalSandboxRunner.builder().workRoot(workRoot).maxAddressSpaceMib(2048).build().verify();
    }

    @AfterAll
    void stop() throws IOException {
        WorkRoots.closeAndDelete(local, workRoot);
    }

    /**
     * The three adapters' pool campaigns at once, each on its own emulator (their faults and ledgers are
     * their own; the local runner is shared): most of a pool campaign waits out holds and client deadlines,
     * so three at once take little longer than one. A failure of any is reported with the others'.
     */
    @Test
    void e2bVercelAndDaytonaAtOnce() throws Exception {
        ExecutorService threads = Executors.newFixedThreadPool(3, r -> {
            Thread t = new Thread(r, "pool-campaign");
            t.setDaemon(true);
            return t;
        });
        try {
            List<Future<?>> runs = List.of(threads.submit(this::e2b), threads.submit(this::vercel),
                    threads.submit(this::daytona));
            List<Throwable> failed = new ArrayList<>();
            for (Future<?> f : runs) {
                try {
                    f.get(PoolCampaign.BOUND.toSeconds() * 8, TimeUnit.SECONDS); // generous: a hang, not a slow run
                } catch (ExecutionException e) {
                    failed.add(e.getCause());
                }
            }
            if (!failed.isEmpty()) {
                AssertionError all = new AssertionError(failed.size() + " of 3 pool campaigns failed: "
                        + failed.stream().map(Throwable::getMessage).reduce((x, y) -> x + "\n---\n" + y).orElse(""));
                failed.forEach(all::addSuppressed);
                throw all;
            }
        } finally {
            threads.shutdownNow();
        }
    }

    private Void e2b() throws Exception {
        TrackedMachines machines = TrackedMachines.on(local);
        try (E2bEmulator emulator = E2bEmulator.builder().apiKey(FaultCampaignTest.E2B_KEY).machines(machines).build()) {
            PoolCampaign.campaign("e2b", target(emulator, emulator::alterLabel, () -> FaultCampaignTest.e2bRunner(emulator, null)));
        }
        nothingLeftOpen("e2b", machines);
        return null;
    }

    private Void vercel() throws Exception {
        TrackedMachines machines = TrackedMachines.on(local);
        try (VercelEmulator emulator = VercelEmulator.builder().token(FaultCampaignTest.VERCEL_TOKEN)
                .teamId(FaultCampaignTest.VERCEL_TEAM).projectId(FaultCampaignTest.VERCEL_PROJECT)
                .machines(machines).build()) {
            PoolCampaign.campaign("vercel", target(emulator, emulator::alterLabel,
                    () -> FaultCampaignTest.vercelRunner(emulator, null)));
        }
        nothingLeftOpen("vercel", machines);
        return null;
    }

    private Void daytona() throws Exception {
        TrackedMachines machines = TrackedMachines.on(local);
        try (DaytonaEmulator emulator = DaytonaEmulator.builder(machines)
                .apiKey(FaultCampaignTest.DAYTONA_KEY).startingPolls(1).build()) {
            PoolCampaign.campaign("daytona", target(emulator, emulator::alterLabel,
                    () -> FaultCampaignTest.daytonaRunner(emulator, null)));
        }
        nothingLeftOpen("daytona", machines);
        return null;
    }

    interface Relabel {
        boolean alter(String id, String key, String value);
    }

    private static PoolCampaign.Target target(HttpEmulator e, Relabel relabel, Supplier<SandboxRunner> runners) {
        return new PoolCampaign.Target() {
            public Faults faults() {
                return e.faults();
            }

            public Ledger ledger() {
                return e.ledger();
            }

            public int inFlight() {
                return e.inFlight();
            }

            public Set<Fault> knobs() {
                return Set.of(Campaign.CAMPAIGN_FAULTS);
            }

            public boolean alterLabel(String id, String key, String value) {
                return relabel.alter(id, key, value);
            }

            public SandboxRunner runner() {
                return runners.get();
            }

            public Duration requestTimeout() {
                return FaultCampaignTest.CLIENT_TIMEOUT;
            }
        };
    }

    /** After the emulator's close, every machine it opened is closed (the ledger's count is the emulator's word). */
    private static void nothingLeftOpen(String adapter, TrackedMachines machines) {
        List<String> open = machines.stillOpen(Duration.ofSeconds(30));
        assertTrue(open.isEmpty(), adapter + ": " + open.size() + " of " + machines.count()
                + " machines still open after the emulator's close:\n" + String.join("\n", open));
    }
}
