package dev.sandbox4j.emulators.campaign;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sandbox4j.api.Execution;
import dev.sandbox4j.api.RunRequest;
import dev.sandbox4j.api.RunResult;
import dev.sandbox4j.api.SandboxException;
import dev.sandbox4j.api.SandboxRunner;
import dev.sandbox4j.api.SandboxSpec;
import dev.sandbox4j.e2b.E2bSandboxRunner;
import dev.sandbox4j.emulators.e2b.E2bEmulator;
import dev.sandbox4j.local.LocalSandboxRunner;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import okhttp3.OkHttpClient;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;

/**
 * Issue 13's three causes, each with one fixed fault, through the E2B adapter on its emulator. They
 * use only the API that existed before the fixes, and each failed there (cause A: two creates, one
 * leaked; B: the late sandbox never torn down; C: the lookup abandoned on the interrupt).
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

    private static SandboxRunner runner(E2bEmulator emulator, OkHttpClient client) {
        E2bSandboxRunner.Builder b = E2bSandboxRunner.builder().apiKey(FaultCampaignTest.E2B_KEY)
                .apiUrl(emulator.baseUrl()).sandboxUrl(emulator.baseUrl())
                .requestTimeout(Duration.ofSeconds(1)).retryBaseDelay(Duration.ofMillis(20))
                .teardownTimeout(Duration.ofSeconds(10));
        if (client != null) {
            b.httpClient(client);
        }
        return b.build();
    }

    private static RunRequest nonce(String n) {
        return RunRequest.of(SandboxSpec.defaults(), Execution.builder("print('" + n + "')").budget(Duration.ofSeconds(10)).build());
    }

    /** Waits (bounded) until the emulator has answered everything, so the ledger is final. */
    private static void settle(E2bEmulator emulator) {
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (emulator.inFlight() > 0 && System.nanoTime() < until) {
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(20));
        }
    }

    /** Cause A: a caller's default OkHttpClient must not re-send a create whose answer was lost. */
    @Test
    void aCallersClientDoesNotSendTheCreateTwice() throws Exception {
        try (E2bEmulator emulator = E2bEmulator.builder().apiKey(FaultCampaignTest.E2B_KEY).localRunner(local).build()) {
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
    @Test
    void aCreateThatLandsAfterTheClientGaveUpIsDestroyed() throws Exception {
        try (E2bEmulator emulator = E2bEmulator.builder().apiKey(FaultCampaignTest.E2B_KEY).localRunner(local).build()) {
            SandboxRunner runner = runner(emulator, null);
            emulator.faults().lateCreate(1, Duration.ofMillis(1500));
            assertInstanceOf(SandboxException.class, catching(() -> runner.run(nonce("late"))));
            runner.close(); // drains the search for the late sandbox
            settle(emulator);
            assertEquals(1, emulator.ledger().created(), "the late create landed");
            assertEquals(0, emulator.ledger().live(), "leaked: " + emulator.ledger().liveIds());
        }
    }

    /** Cause C: an interrupt while the run id is being looked up does not abandon the lookup. */
    @Test
    void anInterruptDuringTheLookupDoesNotAbandonIt() throws Exception {
        try (E2bEmulator emulator = E2bEmulator.builder().apiKey(FaultCampaignTest.E2B_KEY).localRunner(local).build()) {
            SandboxRunner runner = runner(emulator, null);
            emulator.faults().loseCreateResponse(1).hangLookup(1, Duration.ofSeconds(3));
            AtomicReference<Throwable> thrown = new AtomicReference<>();
            Thread caller = new Thread(() -> thrown.set(catching(() -> runner.run(nonce("hung")))));
            caller.start();
            long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
            while (emulator.inFlightRequests().stream().noneMatch(r -> r.startsWith("GET /v2/sandboxes"))
                    && System.nanoTime() < until) {
                LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(5));
            }
            assertTrue(emulator.inFlightRequests().stream().anyMatch(r -> r.startsWith("GET /v2/sandboxes")),
                    "the lookup is in flight: " + emulator.inFlightRequests());
            caller.interrupt();
            caller.join(20_000);
            assertFalse(caller.isAlive());
            assertInstanceOf(SandboxException.class, thrown.get());
            runner.close();
            settle(emulator);
            assertEquals(1, emulator.ledger().created());
            assertEquals(0, emulator.ledger().live(), "leaked: " + emulator.ledger().liveIds());
        }
    }

    private static Throwable catching(java.util.function.Supplier<RunResult> call) {
        try {
            call.get();
            return null;
        } catch (Throwable t) {
            return t;
        }
    }
}
