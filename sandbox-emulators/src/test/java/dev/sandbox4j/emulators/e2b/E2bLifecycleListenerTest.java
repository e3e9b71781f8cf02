package dev.sandbox4j.emulators.e2b;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sandbox4j.api.LeakSuspected;
import dev.sandbox4j.api.LifecycleEvent;
import dev.sandbox4j.api.LifecycleListener;
import dev.sandbox4j.api.RunRequest;
import dev.sandbox4j.api.RunResult;
import dev.sandbox4j.api.SandboxRunner;
import dev.sandbox4j.api.SandboxRunners;
import dev.sandbox4j.api.SweepRequest;
import dev.sandbox4j.api.Teardown;
import dev.sandbox4j.e2b.E2bSandboxRunner;
import dev.sandbox4j.local.LocalSandboxRunner;
import java.io.IOException;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The lifecycle hook on a hosted adapter found by discovery ({@code SandboxRunners.byName} with a
 * listener), against the E2B emulator running code for real: what the listener hears on a clean run
 * and on a teardown the provider refuses.
 */
@Timeout(120)
class E2bLifecycleListenerTest {
    private LocalSandboxRunner local;
    private E2bEmulator emulator;
    private final List<String> heard = new CopyOnWriteArrayList<>();
    private final List<LeakSuspected> leaks = new CopyOnWriteArrayList<>();
    private final LifecycleListener listener = new LifecycleListener() {
        @Override
        public Operation started(LifecycleEvent.Phase phase, String provider) {
            return e -> heard.add(provider + " " + phase + " " + e.outcome() + " " + e.exceptionType());
        }

        @Override
        public void leakSuspected(LeakSuspected leak) {
            leaks.add(leak);
        }
    };

    @BeforeEach
    void start() throws IOException {
        local = LocalSandboxRunner.builder().maxAddressSpaceMib(2048).build();
        emulator = E2bEmulator.builder().apiKey(WireTestSupport.KEY).localRunner(local).build();
    }

    @AfterEach
    void stop() {
        try {
            assertEquals(0, emulator.ledger().live(), "leaked: " + emulator.ledger().liveIds());
        } finally {
            emulator.close();
            local.close();
        }
    }

    private SandboxRunner runner() {
        return SandboxRunners.byName("e2b", Map.of(E2bSandboxRunner.API_KEY_VARIABLE, WireTestSupport.KEY,
                E2bSandboxRunner.API_URL_VARIABLE, emulator.baseUrl(),
                E2bSandboxRunner.SANDBOX_URL_VARIABLE, emulator.baseUrl()), listener);
    }

    @Test
    void aRunIsHeardAsCreateExecTeardown() {
        try (SandboxRunner runner = runner()) {
            RunResult r = runner.run(RunRequest.python("import sys; print(6 * 7); sys.exit(3)"));
            assertEquals("42\n", r.stdout());
            assertEquals(3, r.exitCode().orElseThrow());
        }
        assertEquals(List.of("e2b CREATE success none", "e2b EXEC exited none", "e2b TEARDOWN destroyed none"), heard);
        assertEquals(List.of(), leaks);
    }

    @Test
    void aRefusedKillIsAFailedTeardownAndASuspectedLeak() {
        emulator.faults().failTeardown(403, 1_000);
        try (SandboxRunner runner = runner()) {
            RunResult r = runner.run(RunRequest.python("print(1)"));
            assertEquals(Teardown.FAILED, r.teardown());
            assertEquals(1, leaks.size(), leaks.toString());
            assertEquals(LeakSuspected.Reason.TEARDOWN_FAILED, leaks.get(0).reason());
            assertEquals("e2b", leaks.get(0).provider());
            assertEquals(runner.lifecycleStats().unresolvedRunIds(), List.of(leaks.get(0).runId()));
            emulator.faults().reset();
            assertEquals(1, runner.sweep(SweepRequest.runIds(List.of(leaks.get(0).runId()))).destroyed().size());
        }
        assertTrue(heard.contains("e2b TEARDOWN failed none"), heard.toString());
        assertEquals("e2b TEARDOWN destroyed none", heard.get(heard.size() - 1), "the sweep's kill is heard too");
    }
}
