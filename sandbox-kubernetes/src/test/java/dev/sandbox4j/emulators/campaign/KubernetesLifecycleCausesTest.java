package dev.sandbox4j.emulators.campaign;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sandbox4j.api.Execution;
import dev.sandbox4j.api.RunRequest;
import dev.sandbox4j.api.RunResult;
import dev.sandbox4j.api.SandboxRunner;
import dev.sandbox4j.api.SandboxSpec;
import dev.sandbox4j.api.exception.SandboxException;
import dev.sandbox4j.emulators.Faults.Fault;
import dev.sandbox4j.emulators.kubernetes.AgentSandboxEmulator;
import dev.sandbox4j.local.LocalSandboxRunner;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;

/**
 * Issue 13's three causes (as {@code LifecycleCausesTest} reproduces them on E2B, Vercel and Daytona and
 * {@code ModalLifecycleCausesTest} on Modal), on the Kubernetes runner against the agent-sandbox
 * emulator, each with one fixed fault (issue 29). The runner takes no caller's transport client, so
 * cause A is the runner's own client: a Sandbox create whose answer is lost goes out once (it is read
 * back by name, never sent again). Cause B: a Sandbox stored after the client gave up (its read-back
 * found nothing, so the create is ambiguous) is found by the lifecycle's lookup by run id and deleted.
 * Cause C: an interrupt while that lookup hangs on the API server does not abandon it. Each ends with
 * no object left on the emulator and no pod (local sandbox) open.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(120)
class KubernetesLifecycleCausesTest {
    private Path workRoot;
    private LocalSandboxRunner local;

    @BeforeAll
    void start() throws IOException {
        workRoot = Files.createTempDirectory("causes-k8s-local-");
        Files.setPosixFilePermissions(workRoot, PosixFilePermissions.fromString("rwx--x--x"));
        local = LocalSandboxRunner.builder().workRoot(workRoot).maxAddressSpaceMib(2048).build();
    }

    @AfterAll
    void stop() throws IOException {
        WorkRoots.closeAndDelete(local, workRoot);
    }

    private static RunRequest nonce(String n) {
        return RunRequest.of(SandboxSpec.defaults(), Execution.builder("print('" + n + "')").budget(Duration.ofSeconds(10)).build());
    }

    /** Waits (bounded) until the emulator holds no object and its pods are gone, so the counts are final. */
    private void settle(AgentSandboxEmulator emulator) {
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while ((emulator.inFlight() > 0 || emulator.objects() > 0 || local.openSandboxes() > 0) && System.nanoTime() < until) {
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(20));
        }
    }

    private long sandboxCreates(AgentSandboxEmulator emulator) {
        return emulator.createsReceived().stream().filter(c -> c.startsWith("sandboxes/")).count();
    }

    /** Cause A: a create whose answer was lost is not sent again (read back by name and adopted). */
    @Test
    void aCreateWhoseAnswerWasLostGoesOutOnce() throws Exception {
        try (AgentSandboxEmulator emulator = AgentSandboxEmulator.start(local)) {
            SandboxRunner runner = KubernetesFaultCampaignTest.kubernetesRunner(emulator);
            emulator.faults().loseCreateResponse(1);
            RunResult r = runner.run(nonce("lost-answer"));
            assertTrue(r.stdout().contains("lost-answer"), r.toString());
            runner.close();
            settle(emulator);
            assertEquals(1, emulator.faults().fired(Fault.LOSE_CREATE_RESPONSE));
            assertEquals(1, sandboxCreates(emulator), "the Sandbox create went out once: " + emulator.createsReceived());
            assertEquals(0, emulator.ledger().live(), "leaked: " + emulator.ledger().liveIds());
            assertEquals(0, emulator.objects(), "objects left");
        }
    }

    /** Cause B: a create that takes effect after the client gave up is still found and destroyed. */
    @Test
    void aCreateThatLandsAfterTheClientGaveUpIsDestroyed() throws Exception {
        try (AgentSandboxEmulator emulator = AgentSandboxEmulator.start(local)) {
            SandboxRunner runner = KubernetesFaultCampaignTest.kubernetesRunner(emulator);
            emulator.faults().lateCreate(1, Duration.ofMillis(1500));
            assertInstanceOf(SandboxException.class, LifecycleCausesTest.catching(() -> runner.run(nonce("late"))));
            runner.close(); // drains the search for the late Sandbox
            settle(emulator);
            assertEquals(1, emulator.faults().fired(Fault.LATE_CREATE));
            assertEquals(1, emulator.ledger().created(), "the late create landed");
            assertEquals(0, emulator.ledger().live(), "leaked: " + emulator.ledger().liveIds());
            assertEquals(0, emulator.objects(), "objects left");
            assertEquals(0, local.openSandboxes(), "pods left");
        }
    }

    /** Cause C: an interrupt while the run id is being looked up does not abandon the lookup. */
    @Test
    void anInterruptDuringTheLookupDoesNotAbandonIt() throws Exception {
        try (AgentSandboxEmulator emulator = AgentSandboxEmulator.start(local)) {
            SandboxRunner runner = KubernetesFaultCampaignTest.kubernetesRunner(emulator);
            emulator.faults().lateCreate(1, Duration.ofMillis(1500)).hangLookup(1, Duration.ofSeconds(3));
            assertInstanceOf(SandboxException.class, LifecycleCausesTest.interruptedOnceTheLookupHangs(emulator.faults(),
                    () -> runner.run(nonce("hung")), emulator::inFlightRequests));
            runner.close();
            settle(emulator);
            assertEquals(1, emulator.ledger().created(), "the late create landed");
            assertEquals(0, emulator.ledger().live(), "leaked: " + emulator.ledger().liveIds());
            assertEquals(0, emulator.objects(), "objects left");
            assertEquals(0, local.openSandboxes(), "pods left");
        }
    }
}
