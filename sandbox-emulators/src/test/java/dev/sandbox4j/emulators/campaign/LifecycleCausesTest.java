package dev.sandbox4j.emulators.campaign;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;

import dev.sandbox4j.api.Execution;
import dev.sandbox4j.api.RunRequest;
import dev.sandbox4j.api.RunResult;
import dev.sandbox4j.api.exception.SandboxException;
import dev.sandbox4j.api.SandboxRunner;
import dev.sandbox4j.api.SandboxSpec;
import dev.sandbox4j.emulators.Faults.Fault;
import dev.sandbox4j.emulators.HttpEmulator;
import dev.sandbox4j.emulators.LocalMachines;
import dev.sandbox4j.emulators.daytona.DaytonaEmulator;
import dev.sandbox4j.emulators.e2b.E2bEmulator;
import dev.sandbox4j.emulators.vercel.VercelEmulator;
import dev.sandbox4j.local.LocalSandboxRunner;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import okhttp3.OkHttpClient;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Issue 13's three causes, each with one fixed fault, through each REST adapter on its emulator (issue
 * 29: E2B alone before). They use only the API that existed before the fixes, and each failed there on
 * E2B (cause A: two creates, one leaked; B: the late sandbox never torn down; C: the lookup abandoned on
 * the interrupt). Modal's are in {@code ModalLifecycleCausesTest} (its emulator's module): its emulator
 * has no late-create or hung-lookup knob, so the test holds the call on the server and interrupts the
 * caller, and cause A is the create sent once over gRPC rather than through a caller's OkHttpClient.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(120)
class LifecycleCausesTest {
    private LocalSandboxRunner local;

    @BeforeAll
    void start() {
        local = LocalSandboxRunner.builder().maxAddressSpaceMib(2048).build();
    }

    @AfterAll
    void stop() {
        local.close();
    }

    /** An emulator of {@code adapter} on the shared local runner. */
    private HttpEmulator emulator(String adapter) throws java.io.IOException {
        switch (adapter) {
            case "e2b":
                return E2bEmulator.builder().apiKey(FaultCampaignTest.E2B_KEY).localRunner(local).build();
            case "vercel":
                return VercelEmulator.builder().token(FaultCampaignTest.VERCEL_TOKEN).teamId(FaultCampaignTest.VERCEL_TEAM)
                        .projectId(FaultCampaignTest.VERCEL_PROJECT).machines(LocalMachines.using(local)).build();
            default:
                return DaytonaEmulator.builder(LocalMachines.using(local)).apiKey(FaultCampaignTest.DAYTONA_KEY)
                        .startingPolls(1).build();
        }
    }

    /** The adapter on {@code emulator}, with deadlines far above a loaded machine's pauses; {@code client} may be null. */
    private static SandboxRunner runner(HttpEmulator emulator, OkHttpClient client) {
        Duration d = FaultKnobsTest.REQUEST;
        if (emulator instanceof E2bEmulator e) {
            return FaultCampaignTest.e2bRunner(e, client, d, d);
        }
        if (emulator instanceof VercelEmulator v) {
            return FaultCampaignTest.vercelRunner(v, client, d, d);
        }
        return FaultCampaignTest.daytonaRunner((DaytonaEmulator) emulator, client, d, d);
    }

    private static RunRequest nonce(String n) {
        return RunRequest.of(SandboxSpec.defaults(), Execution.builder("print('" + n + "')").budget(Duration.ofSeconds(10)).build());
    }

    /** Waits (bounded) until the emulator has answered everything, so the ledger is final. */
    private static void settle(HttpEmulator emulator) {
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (emulator.inFlight() > 0 && System.nanoTime() < until) {
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(20));
        }
    }

    /** Cause A: a caller's default OkHttpClient must not re-send a create whose answer was lost. */
    @ParameterizedTest
    @ValueSource(strings = {"e2b", "vercel", "daytona"})
    void aCallersClientDoesNotSendTheCreateTwice(String adapter) throws Exception {
        try (HttpEmulator emulator = emulator(adapter)) {
            SandboxRunner runner = runner(emulator, new OkHttpClient.Builder().build());
            runner.run(nonce("warm")); // pools a connection, as a busy application's client has
            emulator.faults().loseCreateResponse(1);
            assertInstanceOf(SandboxException.class, catching(() -> runner.run(nonce("lost"))));
            runner.close();
            settle(emulator);
            assertEquals(2, emulator.ledger().created(), "the lost create went out once (plus the warm-up)");
            assertEquals(0, emulator.ledger().live(), "leaked: " + emulator.ledger().liveIds());
        }
    }

    /** Cause B: a create that takes effect after the client gave up is still found and destroyed. */
    @ParameterizedTest
    @ValueSource(strings = {"e2b", "vercel", "daytona"})
    void aCreateThatLandsAfterTheClientGaveUpIsDestroyed(String adapter) throws Exception {
        try (HttpEmulator emulator = emulator(adapter)) {
            SandboxRunner runner = runner(emulator, null);
            emulator.faults().lateCreate(1, Duration.ofMillis(1500));
            assertInstanceOf(SandboxException.class, catching(() -> runner.run(nonce("late"))));
            runner.close(); // drains the search for the late sandbox
            settle(emulator);
            assertEquals(1, emulator.faults().fired(Fault.LATE_CREATE));
            assertEquals(1, emulator.ledger().created(), "the late create landed");
            assertEquals(0, emulator.ledger().live(), "leaked: " + emulator.ledger().liveIds());
        }
    }

    /** Cause C: an interrupt while the run id is being looked up does not abandon the lookup. */
    @ParameterizedTest
    @ValueSource(strings = {"e2b", "vercel", "daytona"})
    void anInterruptDuringTheLookupDoesNotAbandonIt(String adapter) throws Exception {
        try (HttpEmulator emulator = emulator(adapter)) {
            SandboxRunner runner = runner(emulator, null);
            emulator.faults().loseCreateResponse(1).hangLookup(1, Duration.ofSeconds(3));
            assertInstanceOf(SandboxException.class, interruptedOnceTheLookupHangs(emulator.faults(),
                    () -> runner.run(nonce("hung")), emulator::inFlightRequests));
            runner.close();
            settle(emulator);
            assertEquals(1, emulator.ledger().created());
            assertEquals(0, emulator.ledger().live(), "leaked: " + emulator.ledger().liveIds());
        }
    }

    /** What {@code call} threw, or null (for the causes tests of every adapter). */
    static Throwable catching(java.util.function.Supplier<RunResult> call) {
        try {
            call.get();
            return null;
        } catch (Throwable t) {
            return t;
        }
    }

    /**
     * Cause C's moves, for every adapter's causes test: {@code run} on a thread of its own, an interrupt
     * once the hung-lookup knob has fired (from then on the lookup is in flight), and what the run threw.
     */
    static Throwable interruptedOnceTheLookupHangs(dev.sandbox4j.emulators.Faults faults,
            java.util.function.Supplier<RunResult> run, java.util.function.Supplier<Object> inFlight) throws InterruptedException {
        AtomicReference<Throwable> thrown = new AtomicReference<>();
        Thread caller = new Thread(() -> thrown.set(catching(run)));
        caller.start();
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (faults.fired(Fault.HANG_LOOKUP) == 0 && System.nanoTime() < until) {
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(5));
        }
        assertEquals(1, faults.fired(Fault.HANG_LOOKUP), "the lookup is in flight: " + inFlight.get());
        caller.interrupt();
        caller.join(60_000);
        assertFalse(caller.isAlive(), "the interrupted run returned");
        return thrown.get();
    }
}
