package dev.sandbox4j.micrometer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sandbox4j.api.Execution;
import dev.sandbox4j.api.RunRequest;
import dev.sandbox4j.api.RunResult;
import dev.sandbox4j.api.Sandbox;
import dev.sandbox4j.api.exception.SandboxException;
import dev.sandbox4j.api.SandboxSpec;
import dev.sandbox4j.api.Teardown;
import dev.sandbox4j.spi.CreateRequest;
import dev.sandbox4j.spi.ExecOutcome;
import dev.sandbox4j.spi.lifecycle.ManagedSandboxRunner;
import dev.sandbox4j.spi.OutputSink;
import dev.sandbox4j.spi.SandboxDriver;
import dev.sandbox4j.spi.SandboxHandle;
import dev.sandbox4j.local.LocalSandboxRunner;
import dev.sandbox4j.policy.Capabilities;
import dev.sandbox4j.policy.EgressPolicy;
import dev.sandbox4j.policy.Language;
import dev.sandbox4j.policy.UnsupportedPolicyException;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.observation.DefaultMeterObservationHandler;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationHandler;
import io.micrometer.observation.ObservationRegistry;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Observations and the leak counter through Micrometer's own meter handler, on real bubblewrap
 * sandboxes (and, for what the local runner cannot do, a driver whose teardown is refused).
 */
@Timeout(120)
class MicrometerLifecycleListenerTest {
    private final SimpleMeterRegistry meters = new SimpleMeterRegistry();
    private final ObservationRegistry observations = ObservationRegistry.create();
    private final List<Observation.Context> stopped = new CopyOnWriteArrayList<>();

    @BeforeEach
    void handlers() {
        observations.observationConfig().observationHandler(new DefaultMeterObservationHandler(meters));
        observations.observationConfig().observationHandler(new ObservationHandler<>() {
            @Override
            public boolean supportsContext(Observation.Context context) {
                return true;
            }

            @Override
            public void onStop(Observation.Context context) {
                stopped.add(context);
            }
        });
    }

    private MicrometerLifecycleListener listener() {
        return MicrometerLifecycleListener.builder(observations).meterRegistry(meters).build();
    }

    private Timer timer(String name, String outcome, String exception) {
        return meters.get(name).tags("provider", "local", "outcome", outcome, "exception", exception).timer();
    }

    @Test
    void aRunAndASessionBecomeTimersTaggedByProviderAndOutcome() {
        try (LocalSandboxRunner runner = LocalSandboxRunner.builder().lifecycleListener(listener()).build()) {
            RunResult r = runner.run(RunRequest.python("print('do-not-tag-me')"));
            assertEquals("do-not-tag-me\n", r.stdout());
            try (Sandbox s = runner.open(SandboxSpec.defaults())) {
                s.exec(Execution.builder("while True: pass").budget(Duration.ofSeconds(1)).build());
            }
            // default allow with a denied CIDR: the one list the local runner refuses (its proxy enforces the others)
            assertThrows(UnsupportedPolicyException.class, () -> runner.open(SandboxSpec.builder()
                    .egress(EgressPolicy.builder(EgressPolicy.Default.ALLOW).denyCidr("10.0.0.0/8").build()).build()));
        }
        assertEquals(2, timer(MicrometerLifecycleListener.CREATE, "success", "none").count());
        assertEquals(1, timer(MicrometerLifecycleListener.CREATE, "error", "UnsupportedPolicyException").count());
        assertEquals(1, timer(MicrometerLifecycleListener.EXEC, "exited", "none").count());
        Timer timedOut = timer(MicrometerLifecycleListener.EXEC, "timed_out", "none");
        assertEquals(1, timedOut.count());
        assertTrue(timedOut.totalTime(java.util.concurrent.TimeUnit.MILLISECONDS) >= 900, "covers the budget");
        assertEquals(2, timer(MicrometerLifecycleListener.TEARDOWN, "destroyed", "none").count());
        for (Meter m : meters.getMeters()) {
            for (Tag t : m.getId().getTags()) {
                assertFalse(t.getValue().contains("do-not-tag-me") || t.getValue().contains("while True"),
                        "code or output in a tag: " + m.getId());
            }
        }
        Observation.Context refused = stopped.stream()
                .filter(c -> c.getName().equals(MicrometerLifecycleListener.CREATE) && c.getError() != null)
                .findFirst().orElseThrow();
        assertTrue(refused.getError() instanceof UnsupportedPolicyException, "the span carries the exception");
        assertEquals("sandbox create", refused.getContextualName());
    }

    @Test
    void theDriversCallsRunInsideTheirObservationsScope() {
        AtomicReference<Observation> duringCreate = new AtomicReference<>();
        AtomicReference<Observation> duringExec = new AtomicReference<>();
        RefusingDriver driver = new RefusingDriver(false) {
            @Override
            public Handle create(CreateRequest request) {
                duringCreate.set(observations.getCurrentObservation());
                return super.create(request);
            }

            @Override
            public ExecOutcome exec(Handle sandbox, Execution execution, OutputSink sink) {
                duringExec.set(observations.getCurrentObservation());
                return super.exec(sandbox, execution, sink);
            }
        };
        try (ManagedSandboxRunner<RefusingDriver.Handle> runner = ManagedSandboxRunner.builder(driver)
                .lifecycleListener(listener()).build()) {
            runner.run(RunRequest.python("print(1)"));
        }
        assertNotNull(duringCreate.get());
        assertEquals(MicrometerLifecycleListener.CREATE, duringCreate.get().getContext().getName());
        assertEquals(MicrometerLifecycleListener.EXEC, duringExec.get().getContext().getName());
        assertSame(null, observations.getCurrentObservation(), "every scope closed");
    }

    @Test
    void aRefusedTeardownIsAFailedTeardownAndCountsASuspectedLeak() {
        RefusingDriver driver = new RefusingDriver(true);
        try (ManagedSandboxRunner<RefusingDriver.Handle> runner = ManagedSandboxRunner.builder(driver)
                .lifecycleListener(listener()).build()) {
            RunResult r = runner.run(RunRequest.python("print(1)"));
            assertEquals(Teardown.FAILED, r.teardown());
        }
        assertEquals(1, meters.get(MicrometerLifecycleListener.TEARDOWN)
                .tags("provider", "refusing", "outcome", "failed").timer().count());
        assertEquals(1.0, meters.get(MicrometerLifecycleListener.LEAKS)
                .tags("provider", "refusing", "reason", "teardown_failed").counter().count());
    }

    @Test
    void withoutAMeterRegistryALeakIsAnObservationOfItsOwn() {
        RefusingDriver driver = new RefusingDriver(true);
        try (ManagedSandboxRunner<RefusingDriver.Handle> runner = ManagedSandboxRunner.builder(driver)
                .lifecycleListener(MicrometerLifecycleListener.builder(observations).build()).build()) {
            runner.run(RunRequest.python("print(1)"));
        }
        Observation.Context leak = stopped.stream()
                .filter(c -> c.getName().equals(MicrometerLifecycleListener.LEAKS)).findFirst().orElseThrow();
        assertEquals("teardown_failed", leak.getLowCardinalityKeyValue("reason").getValue());
        assertEquals("refusing", leak.getLowCardinalityKeyValue("provider").getValue());
    }

    @Test
    void aNoopRegistryCostsNothingAndBreaksNothing() {
        try (LocalSandboxRunner runner = LocalSandboxRunner.builder()
                .lifecycleListener(MicrometerLifecycleListener.builder(ObservationRegistry.NOOP).build()).build()) {
            assertEquals("3\n", runner.run(RunRequest.python("print(1 + 2)")).stdout());
        }
    }

    /** A provider in memory whose kill is refused (403) when asked: what the local runner never does. */
    static class RefusingDriver implements SandboxDriver<RefusingDriver.Handle> {
        record Handle(String id) implements SandboxHandle {
        }

        private final boolean refuseKill;

        RefusingDriver(boolean refuseKill) {
            this.refuseKill = refuseKill;
        }

        @Override
        public String provider() {
            return "refusing";
        }

        @Override
        public Capabilities capabilities() {
            return Capabilities.builder("refusing").egress(Capabilities.Egress.DENY_ALL)
                    .languages(Language.PYTHON).build();
        }

        @Override
        public Handle create(CreateRequest request) {
            return new Handle("sbx-" + request.runId());
        }

        @Override
        public ExecOutcome exec(Handle sandbox, Execution execution, OutputSink sink) {
            sink.stdout("ran\n");
            return ExecOutcome.exited(0);
        }

        @Override
        public boolean destroy(Handle sandbox) {
            if (refuseKill) {
                throw SandboxException.builder("kill refused").provider("refusing").httpStatus(403).build();
            }
            return true;
        }
    }
}
