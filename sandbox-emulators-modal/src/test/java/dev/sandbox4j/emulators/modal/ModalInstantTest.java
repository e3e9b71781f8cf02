package dev.sandbox4j.emulators.modal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sandbox4j.api.Execution;
import dev.sandbox4j.api.RunRequest;
import dev.sandbox4j.api.RunResult;
import dev.sandbox4j.api.RunStatus;
import dev.sandbox4j.api.SandboxSpec;
import dev.sandbox4j.modal.ModalSandboxRunner;
import dev.sandbox4j.policy.EgressPolicy;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Instant mode, the create delay and the call counts, through the Modal adapter. */
class ModalInstantTest {
    /** Prints, then never ends: run for real it could not come back as a quiet exit 0. */
    private static final String SPIN = "print('ran for real')\nwhile True:\n    pass\n";

    private static ModalSandboxRunner runner(ModalEmulator e) {
        return ModalSandboxRunner.builder().serverUrl(e.serverUrl()).tokenId(e.tokenId())
                .tokenSecret(e.tokenSecret()).retryBaseDelay(Duration.ofMillis(100)).build();
    }

    @Test
    void instantModeRunsNothingAndCountsEveryCall() throws Exception {
        try (ModalEmulator e = ModalEmulator.builder().instant(true).build(); ModalSandboxRunner runner = runner(e)) {
            assertTrue(e.instant());
            RunResult r = runner.run(RunRequest.of(SandboxSpec.builder().egress(EgressPolicy.denyAll())
                    .file("input.txt", "written at create").build(),
                    Execution.builder(SPIN).budget(Duration.ofSeconds(20)).build()));
            assertEquals(RunStatus.EXITED, r.status(), r.toString());
            assertEquals(0, r.exitCode().orElse(-1), r.toString());
            assertEquals("", r.stdout(), "instant mode ran the code");
            assertEquals(0, e.openLocalSandboxes());
            assertEquals(1, e.ledger().created(), e.ledger().toString());
            assertEquals(0, e.ledger().live(), e.ledger().toString());

            Map<String, Integer> calls = e.callCounts();
            int creates = calls.getOrDefault("modal.client.ModalClient/SandboxCreateV2", 0)
                    + calls.getOrDefault("modal.client.ModalClient/SandboxCreate", 0);
            assertEquals(1, creates, calls.toString());
            assertTrue(calls.getOrDefault("modal.task_command_router.TaskCommandRouter/TaskExecStart", 0) >= 1, calls.toString());
            assertEquals(calls.values().stream().mapToLong(Integer::longValue).sum(), e.callCount());
            assertTrue(e.callsJson().startsWith("{\"total\":" + e.callCount() + ","), e.callsJson());
        }
    }

    @Test
    void aCreateDelayHoldsEveryCreate() throws Exception {
        Duration delay = Duration.ofMillis(600);
        try (ModalEmulator e = ModalEmulator.builder().instant(true).build(); ModalSandboxRunner runner = runner(e)) {
            e.faults().createDelay(delay);
            long t0 = System.nanoTime();
            RunResult r = runner.run(RunRequest.of(SandboxSpec.builder().egress(EgressPolicy.denyAll()).build(),
                    Execution.builder("print(1)").build()));
            // a lower bound only, which the sleep guarantees
            Duration took = Duration.ofNanos(System.nanoTime() - t0);
            assertTrue(took.compareTo(delay) >= 0, "answered after " + took.toMillis() + " ms");
            assertEquals(0, r.exitCode().orElse(-1));
            assertEquals(0, e.ledger().live());
        }
    }
}
