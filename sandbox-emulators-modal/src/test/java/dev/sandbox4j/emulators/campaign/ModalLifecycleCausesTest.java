package dev.sandbox4j.emulators.campaign;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sandbox4j.api.Execution;
import dev.sandbox4j.api.RunRequest;
import dev.sandbox4j.api.exception.SandboxException;
import dev.sandbox4j.api.SandboxRunner;
import dev.sandbox4j.api.SandboxSpec;
import dev.sandbox4j.emulators.modal.ModalEmulator;
import dev.sandbox4j.local.LocalSandboxRunner;
import dev.sandbox4j.modal.ModalSandboxRunner;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Supplier;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;

/**
 * Issue 13's three causes on Modal (issue 29; {@code LifecycleCausesTest} has them on the REST
 * adapters), each with one fault on the Modal emulator over gRPC and deadlines far above a loaded
 * machine's pauses. The emulator has no late-create or hung-lookup knob; its create delay and slow
 * answers hold a call on the server while the test interrupts the caller, which is how the client
 * gives up on it:
 * <ul>
 *   <li>A: a create whose answer is lost is sent once (the emulator counts the SandboxCreate calls as they
 *       arrive; its idempotency key would hide a re-send from the ledger) and the sandbox is destroyed;</li>
 *   <li>B: a create the caller gave up on (interrupted while the server held it) lands afterwards, and is
 *       still found and destroyed;</li>
 *   <li>C: an interrupt while the run id is being looked up (the listing held by slow answers) does not
 *       abandon the lookup: the sandbox is destroyed.</li>
 * </ul>
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(180)
class ModalLifecycleCausesTest {
    private static final String CREATE = "modal.client.ModalClient/SandboxCreate";
    private static final String LIST = "modal.client.ModalClient/SandboxList";
    private static final Duration HOLD = Duration.ofSeconds(2);
    private LocalSandboxRunner local;

    @BeforeAll
    void start() {
        local = LocalSandboxRunner.builder().maxAddressSpaceMib(2048).build();
    }

    @AfterAll
    void stop() {
        local.close();
    }

    private ModalEmulator emulator() throws java.io.IOException {
        return ModalEmulator.builder().token(ModalFaultCampaignTest.TOKEN_ID, ModalFaultCampaignTest.TOKEN_SECRET)
                .runner(local).build();
    }

    private static SandboxRunner runner(ModalEmulator emulator) {
        Duration d = FaultKnobsTest.REQUEST;
        return ModalSandboxRunner.builder().serverUrl(emulator.serverUrl()).tokenId(ModalFaultCampaignTest.TOKEN_ID)
                .tokenSecret(ModalFaultCampaignTest.TOKEN_SECRET).requestTimeout(d).teardownTimeout(d)
                .retryBaseDelay(Duration.ofMillis(50)).lostCreateWindow(Duration.ofSeconds(30)).build();
    }

    private static RunRequest nonce(String n) {
        return RunRequest.of(SandboxSpec.defaults(), Execution.builder("print('" + n + "')").budget(Duration.ofSeconds(10)).build());
    }

    /** Create calls of either version the emulator has received. */
    private static int calls(ModalEmulator e, String method) {
        return e.callCounts().getOrDefault(method, 0) + e.callCounts().getOrDefault(method + "V2", 0);
    }

    /** Waits (bounded, generously) until the emulator holds no live sandbox, so the ledger is final. */
    private static void settle(ModalEmulator e) {
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (e.ledger().live() > 0 && System.nanoTime() < until) {
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(20));
        }
    }

    /** Runs {@code call} on its own thread, waits until {@code reached} holds, interrupts it and returns what it threw. */
    private static Throwable interruptedWhen(Supplier<Boolean> reached, Runnable call, ModalEmulator e) throws InterruptedException {
        AtomicReference<Throwable> thrown = new AtomicReference<>();
        Thread caller = new Thread(() -> {
            try {
                call.run();
            } catch (Throwable t) {
                thrown.set(t);
            }
        }, "modal-causes-caller");
        caller.start();
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (!reached.get() && System.nanoTime() < until) {
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(5));
        }
        assertTrue(reached.get(), "the call never reached the held point: " + e.callCounts());
        caller.interrupt();
        caller.join(60_000);
        assertFalse(caller.isAlive(), "the interrupted run did not end");
        return thrown.get();
    }

    @Test
    void aLostCreateIsSentOnceAndDestroyed() throws Exception {
        try (ModalEmulator emulator = emulator()) {
            SandboxRunner runner = runner(emulator);
            runner.run(nonce("warm")); // the channel is up and in use, as a busy application's is
            int before = calls(emulator, CREATE);
            emulator.faults().loseCreateResponse(1);
            assertInstanceOf(SandboxException.class, catching(() -> runner.run(nonce("lost"))));
            runner.close();
            settle(emulator);
            assertEquals(1, emulator.faults().fired(dev.sandbox4j.emulators.Faults.Fault.LOSE_CREATE_RESPONSE));
            assertEquals(1, calls(emulator, CREATE) - before, "the lost create went out once: " + emulator.callCounts());
            assertEquals(2, emulator.ledger().created(), "the lost create took effect (plus the warm-up)");
            assertEquals(0, emulator.ledger().live(), "leaked: " + emulator.ledger().liveIds());
        }
    }

    @Test
    void aCreateThatLandsAfterTheCallerGaveUpIsDestroyed() throws Exception {
        try (ModalEmulator emulator = emulator()) {
            SandboxRunner runner = runner(emulator);
            emulator.faults().createDelay(HOLD); // the server holds the create, then makes the sandbox
            // interrupted once the handler holds the create: a call only counted on arrival may be
            // cancelled before its handler starts, and gRPC then creates nothing (a CI run saw it)
            Throwable t = interruptedWhen(() -> emulator.faults().createsHeld() == 1, () -> runner.run(nonce("late")), emulator);
            assertInstanceOf(SandboxException.class, t);
            runner.close(); // drains the search for the late sandbox
            settle(emulator);
            emulator.faults().createDelay(Duration.ZERO);
            assertEquals(1, calls(emulator, CREATE), "one create was sent");
            assertEquals(1, emulator.ledger().created(), "the late create landed");
            assertEquals(0, emulator.ledger().live(), "leaked: " + emulator.ledger().liveIds());
        }
    }

    @Test
    void anInterruptDuringTheLookupDoesNotAbandonIt() throws Exception {
        try (ModalEmulator emulator = emulator()) {
            SandboxRunner runner = runner(emulator);
            runner.run(nonce("warm")); // lookups of the app and image happen once per runner: done now
            int lists = calls(emulator, LIST);
            emulator.faults().loseCreateResponse(1).slow(HOLD); // every answer, the lookup's too, is held
            Throwable t = interruptedWhen(() -> calls(emulator, LIST) > lists, () -> runner.run(nonce("hung")), emulator);
            assertInstanceOf(SandboxException.class, t);
            runner.close();
            emulator.faults().slow(Duration.ZERO);
            settle(emulator);
            assertEquals(2, emulator.ledger().created());
            assertEquals(0, emulator.ledger().live(), "leaked: " + emulator.ledger().liveIds());
        }
    }

    private static Throwable catching(Runnable call) {
        try {
            call.run();
            return null;
        } catch (Throwable t) {
            return t;
        }
    }
}
