package dev.sandbox4j.emulators.campaign;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sandbox4j.api.Execution;
import dev.sandbox4j.api.RunRequest;
import dev.sandbox4j.api.RunResult;
import dev.sandbox4j.api.RunStatus;
import dev.sandbox4j.api.exception.SandboxException;
import dev.sandbox4j.api.SandboxRunner;
import dev.sandbox4j.api.SandboxSpec;
import dev.sandbox4j.emulators.Faults.Fault;
import dev.sandbox4j.emulators.HttpEmulator;
import dev.sandbox4j.emulators.Ledger;
import dev.sandbox4j.emulators.daytona.DaytonaEmulator;
import dev.sandbox4j.emulators.e2b.E2bEmulator;
import dev.sandbox4j.emulators.vercel.VercelEmulator;
import dev.sandbox4j.local.LocalSandboxRunner;
import dev.sandbox4j.policy.EgressPolicy;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Each new fault knob, once, through each adapter against its emulator with the adapter's own client
 * (no hidden retries): the knob fires exactly once, and the ledger shows what it did. These hold
 * whatever the lifecycle does about the fault, before issue 13's fixes and after.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class FaultKnobsTest {
    /**
     * The adapters' deadlines here: far above the machine's worst pause. No check below needs the client
     * to give up on its own (a late create and a hung lookup drop or answer on the emulator's clock), so
     * the campaign's 1 s deadline would only turn a loaded machine into a failure (issue 29).
     */
    static final Duration REQUEST = Duration.ofSeconds(60);
    static final Duration TEARDOWN = Duration.ofSeconds(60);

    private Path workRoot;
    private LocalSandboxRunner local;

    @BeforeAll
    void start() throws IOException {
        workRoot = Files.createTempDirectory("knobs-local-");
        Files.setPosixFilePermissions(workRoot, PosixFilePermissions.fromString("rwx--x--x"));
        local = LocalSandboxRunner.builder().workRoot(workRoot).maxAddressSpaceMib(2048).build().verify();
    }

    @AfterAll
    void stop() throws IOException {
        WorkRoots.closeAndDelete(local, workRoot);
    }

    /** One emulator and the adapter pointed at it. */
    private final class Target implements AutoCloseable {
        final HttpEmulator emulator;
        final SandboxRunner runner;

        Target(String adapter) throws IOException {
            switch (adapter) {
                case "e2b": {
                    E2bEmulator e = E2bEmulator.builder().apiKey(FaultCampaignTest.E2B_KEY).localRunner(local).build();
                    emulator = e;
                    runner = FaultCampaignTest.e2bRunner(e, null, REQUEST, TEARDOWN);
                    break;
                }
                case "vercel": {
                    VercelEmulator e = VercelEmulator.builder().token(FaultCampaignTest.VERCEL_TOKEN)
                            .teamId(FaultCampaignTest.VERCEL_TEAM).projectId(FaultCampaignTest.VERCEL_PROJECT)
                            .machines(dev.sandbox4j.emulators.LocalMachines.using(local)).build();
                    emulator = e;
                    runner = FaultCampaignTest.vercelRunner(e, null, REQUEST, TEARDOWN);
                    break;
                }
                default: {
                    DaytonaEmulator e = DaytonaEmulator.builder(dev.sandbox4j.emulators.LocalMachines.using(local))
                            .apiKey(FaultCampaignTest.DAYTONA_KEY).build();
                    emulator = e;
                    runner = FaultCampaignTest.daytonaRunner(e, null, REQUEST, TEARDOWN);
                }
            }
        }

        Object run(String code) {
            try {
                return runner.run(RunRequest.of(SandboxSpec.builder().egress(EgressPolicy.denyAll())
                        .label(FaultCampaignTest.RUN_LABEL, "1").build(),
                        Execution.builder(code).budget(Duration.ofSeconds(10)).build()));
            } catch (RuntimeException e) {
                return e;
            }
        }

        /** Waits (bounded) until the emulator has no request in hand: late creates have landed. */
        void quiet() throws InterruptedException {
            long end = System.nanoTime() + Duration.ofSeconds(120).toNanos();
            while (emulator.inFlight() > 0 && System.nanoTime() < end) {
                Thread.sleep(10);
            }
            assertEquals(0, emulator.inFlight(), "requests still in hand");
        }

        List<Ledger.SandboxRecord> sandboxes() {
            return emulator.ledger().sandboxes();
        }

        @Override
        public void close() {
            runner.close();
            emulator.close();
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"e2b", "vercel", "daytona"})
    void aLateCreateDropsTheConnectionAndTheSandboxAppearsAfterwards(String adapter) throws Exception {
        try (Target t = new Target(adapter)) {
            t.emulator.faults().lateCreate(1, Duration.ofMillis(800));
            Object outcome = t.run("print(1)");
            assertTrue(outcome instanceof SandboxException, String.valueOf(outcome));
            t.quiet();
            assertEquals(1, t.emulator.faults().fired(Fault.LATE_CREATE));
            assertEquals(1, t.emulator.ledger().created(), "the create took effect after the client gave up");
            assertEquals("1", t.sandboxes().get(0).labels().get(FaultCampaignTest.RUN_LABEL), "listed by its labels");
            assertTrue(t.sandboxes().get(0).execs().isEmpty(), "no code ran");
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"e2b", "vercel", "daytona"})
    void aHungLookupFiresOnTheLookupAfterALostCreate(String adapter) throws Exception {
        try (Target t = new Target(adapter)) {
            t.emulator.faults().loseCreateResponse(1).hangLookup(1, Duration.ofMillis(1500));
            Object outcome = t.run("print(1)");
            assertTrue(outcome instanceof SandboxException, String.valueOf(outcome));
            t.quiet();
            assertEquals(1, t.emulator.faults().fired(Fault.LOSE_CREATE_RESPONSE));
            assertEquals(1, t.emulator.faults().fired(Fault.HANG_LOOKUP), "the lookup by run id was the one hung");
            assertEquals(1, t.emulator.ledger().created());
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"e2b", "vercel", "daytona"})
    void aGarbledCreateAnswerComesAfterTheCreateTookEffect(String adapter) throws Exception {
        try (Target t = new Target(adapter)) {
            t.emulator.faults().garbleCreate(1);
            Object outcome = t.run("print(1)");
            assertTrue(outcome instanceof SandboxException e && e.requestMayHaveSucceeded(), String.valueOf(outcome));
            t.quiet();
            assertEquals(1, t.emulator.faults().fired(Fault.GARBLE_CREATE));
            assertEquals(1, t.emulator.ledger().created());
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"e2b", "vercel", "daytona"})
    void aLostExecAnswerLeavesTheCodeRunningAndSaysItMayHaveRun(String adapter) throws Exception {
        try (Target t = new Target(adapter)) {
            t.emulator.faults().loseExecResponse(1);
            Object outcome = t.run("print('lost-exec-nonce')");
            assertTrue(outcome instanceof SandboxException e && e.codeMayHaveRun(), String.valueOf(outcome));
            t.quiet();
            assertEquals(1, t.emulator.faults().fired(Fault.LOSE_EXEC_RESPONSE));
            Ledger.SandboxRecord s = t.sandboxes().get(0);
            assertEquals(1, s.execs().size(), "the adapter's own client sent the code once: " + s.execs());
            assertTrue(s.execs().get(0).code().contains("lost-exec-nonce"));
            assertFalse(s.execs().get(0).hostNetwork(), "deny-all got no network");
            assertTrue(s.killedByClient(), "torn down after the lost answer");
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"e2b", "vercel", "daytona"})
    void aGarbledAnswerWaitsForABodyAndTheRunEndsInATypedError(String adapter) throws Exception {
        try (Target t = new Target(adapter)) {
            RunResult ok = (RunResult) t.run("print(2)");
            assertEquals(RunStatus.EXITED, ok.status());
            assertEquals(0, t.emulator.faults().fired(Fault.GARBLE_ANSWER));
            t.emulator.faults().garbleAnswer(1);
            t.emulator.clearCalls();
            Object outcome = t.run("print(3)");
            t.quiet();
            assertEquals(1, t.emulator.faults().fired(Fault.GARBLE_ANSWER));
            if (adapter.equals("daytona")) {
                // Daytona's first answer with a body is the program's upload, which is safe to send again:
                // sent twice, the run goes through (a garbled exec answer: DaytonaFailureTest)
                assertTrue(outcome instanceof RunResult r && r.status() == RunStatus.EXITED && r.stdout().equals("3\n"),
                        String.valueOf(outcome));
                assertEquals(2, t.emulator.calls().stream().filter(c -> c.path().endsWith("/files/bulk-upload")).count(),
                        t.emulator.calls().toString());
            } else {
                assertTrue(outcome instanceof SandboxException, String.valueOf(outcome));
            }
            for (Ledger.SandboxRecord s : t.sandboxes()) {
                assertTrue(s.killedByClient() || !s.live(), "left: " + s);
            }
        }
    }

    /**
     * A machine paused past the campaign's 1 s client deadline (every answer held 1.1 s, as a loaded
     * two-core machine holds one): the checks above must still hold, so a plain run still succeeds.
     */
    @ParameterizedTest
    @ValueSource(strings = {"e2b", "vercel", "daytona"})
    void aRunSucceedsOnAMachinePausedPastTheCampaignsDeadline(String adapter) throws Exception {
        try (Target t = new Target(adapter)) {
            t.emulator.faults().slow(Duration.ofMillis(1100));
            Object outcome = t.run("print(5)");
            assertTrue(outcome instanceof RunResult r && r.status() == RunStatus.EXITED, String.valueOf(outcome));
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"e2b", "vercel", "daytona"})
    void theLedgerRecordsClientTeardownsApartFromTheEmulatorsClose(String adapter) throws Exception {
        Target t = new Target(adapter);
        RunResult r = (RunResult) t.run("print(4)");
        assertEquals(RunStatus.EXITED, r.status());
        t.close();
        Ledger.SandboxRecord s = t.sandboxes().get(0);
        assertTrue(s.killedByClient(), s.toString());
        assertFalse(s.live());
        assertThrows(IllegalArgumentException.class, () -> t.emulator.faults().arm(Fault.HOSTILE_FRAMING, 1));
    }
}
