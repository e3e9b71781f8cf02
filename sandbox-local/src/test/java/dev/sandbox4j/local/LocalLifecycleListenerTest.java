package dev.sandbox4j.local;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sandbox4j.api.Execution;
import dev.sandbox4j.api.LifecycleEvent;
import dev.sandbox4j.api.LifecycleListener;
import dev.sandbox4j.api.RunStatus;
import dev.sandbox4j.api.Sandbox;
import dev.sandbox4j.api.SandboxRunner;
import dev.sandbox4j.api.SandboxRunners;
import dev.sandbox4j.api.SandboxSpec;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The lifecycle hook on real bubblewrap sandboxes, set on the builder and through discovery. */
@Timeout(120)
class LocalLifecycleListenerTest {
    private final List<LifecycleEvent> events = new CopyOnWriteArrayList<>();
    private final LifecycleListener listener = new LifecycleListener() {
        @Override
        public Operation started(LifecycleEvent.Phase phase, String provider) {
            return events::add;
        }
    };

    @Test
    void aSessionIsHeardWithEachExecsStatus() {
        try (LocalSandboxRunner runner = LocalSandboxRunner.builder().lifecycleListener(listener).build();
                Sandbox s = runner.open(SandboxSpec.defaults())) {
            assertEquals(RunStatus.EXITED, s.exec(Execution.builder("print(1)").build()).status());
            assertEquals(RunStatus.TIMED_OUT, s.exec(Execution.builder("while True: pass")
                    .budget(Duration.ofSeconds(1)).build()).status());
        }
        assertEquals(List.of("CREATE success", "EXEC exited", "EXEC timed_out", "TEARDOWN destroyed"),
                events.stream().map(e -> e.phase() + " " + e.outcome()).toList());
        assertTrue(events.stream().allMatch(e -> e.provider().equals("local")));
        assertTrue(events.get(2).duration().compareTo(Duration.ofMillis(900)) >= 0,
                "the timed-out exec's duration covers its budget: " + events.get(2).duration());
    }

    @Test
    void discoveryPassesTheListenerOn() {
        try (SandboxRunner runner = SandboxRunners.byName("local", Map.of(), listener)) {
            runner.run(dev.sandbox4j.api.RunRequest.python("print(2)"));
        }
        assertEquals(List.of("CREATE", "EXEC", "TEARDOWN"), events.stream().map(e -> e.phase().name()).toList());
    }
}
