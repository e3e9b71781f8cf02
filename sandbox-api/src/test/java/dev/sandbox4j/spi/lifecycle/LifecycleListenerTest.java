package dev.sandbox4j.spi.lifecycle;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sandbox4j.api.Execution;
import dev.sandbox4j.api.LeakSuspected;
import dev.sandbox4j.api.LifecycleEvent;
import dev.sandbox4j.api.LifecycleListener;
import dev.sandbox4j.spi.lifecycle.RecordingListener;
import dev.sandbox4j.api.RunRequest;
import dev.sandbox4j.api.RunResult;
import dev.sandbox4j.api.RunStatus;
import dev.sandbox4j.api.Sandbox;
import dev.sandbox4j.api.exception.SandboxException;
import dev.sandbox4j.api.SandboxSpec;
import dev.sandbox4j.api.Teardown;
import dev.sandbox4j.policy.Capabilities;
import dev.sandbox4j.policy.EgressPolicy;
import dev.sandbox4j.policy.Language;
import dev.sandbox4j.policy.UnsupportedPolicyException;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import dev.sandbox4j.api.SandboxRunnerProvider;
import dev.sandbox4j.spi.ExecOutcome;

/** The lifecycle hook: what a listener hears for each create, exec and teardown, and for suspected leaks. */
@Timeout(60)
class LifecycleListenerTest {
    private final ScriptedDriver driver = new ScriptedDriver("scripted");
    private final RecordingListener listener = new RecordingListener();

    @AfterEach
    void nothingLeaked() {
        assertEquals(List.of(), driver.live(), "sandboxes left on the provider");
    }

    private ManagedSandboxRunner.Builder<ScriptedDriver.Handle> builder() {
        return ManagedSandboxRunner.builder(driver).retryBaseDelay(Duration.ofMillis(1))
                .lostCreateWindow(Duration.ofMinutes(5)).closeDrainTimeout(Duration.ofMillis(200))
                .lifecycleListener(listener);
    }

    @Test
    void aOneShotRunIsOneCreateOneExecOneTeardownInOrder() {
        try (ManagedSandboxRunner<ScriptedDriver.Handle> runner = builder().build()) {
            RunResult r = runner.run(RunRequest.python("print('secret-code-42')"));
            assertEquals(RunStatus.EXITED, r.status());
        }
        assertEquals(List.of("start CREATE", "end CREATE success", "start EXEC", "end EXEC exited",
                "start TEARDOWN", "end TEARDOWN destroyed"), listener.log());
        LifecycleEvent create = listener.events(LifecycleEvent.Phase.CREATE).get(0);
        assertEquals("scripted", create.provider());
        assertEquals(1, create.attempts());
        assertEquals("none", create.exceptionType());
        for (LifecycleEvent e : listener.events()) {
            assertFalse(e.toString().contains("secret-code-42"), "no code in events: " + e);
            assertFalse(e.duration().isNegative());
        }
        assertTrue(listener.endedOnStartingThreads());
        assertEquals(List.of(), listener.leaks());
    }

    @Test
    void aSessionReportsEachExecWithItsStatus() {
        driver.onExec((h, e, sink) -> e.code().contains("loop") ? ExecOutcome.timedOut() : ExecOutcome.exited(3));
        try (ManagedSandboxRunner<ScriptedDriver.Handle> runner = builder().build();
                Sandbox s = runner.open(SandboxSpec.defaults())) {
            s.exec(Execution.builder("print(1)").build());
            s.exec(Execution.builder("loop").build());
        }
        assertEquals(List.of("start CREATE", "end CREATE success", "start EXEC", "end EXEC exited",
                "start EXEC", "end EXEC timed_out", "start TEARDOWN", "end TEARDOWN destroyed"), listener.log());
        assertEquals(List.of(RunStatus.EXITED, RunStatus.TIMED_OUT), listener.events(LifecycleEvent.Phase.EXEC)
                .stream().map(e -> e.status().orElseThrow()).toList());
    }

    @Test
    void aRefusedPolicyIsACreateThatFailedWithTheRefusalAndNoAttempt() {
        ScriptedDriver narrow = new ScriptedDriver("narrow", Capabilities.builder("narrow")
                .egress(Capabilities.Egress.DENY_ALL).languages(Language.values()).build());
        try (ManagedSandboxRunner<ScriptedDriver.Handle> runner = ManagedSandboxRunner.builder(narrow)
                .lifecycleListener(listener).build()) {
            assertThrows(UnsupportedPolicyException.class, () -> runner.open(SandboxSpec.builder()
                    .egress(EgressPolicy.builder(EgressPolicy.Default.DENY).allowDomain("pypi.org").build()).build()));
        }
        LifecycleEvent create = listener.events().get(0);
        assertEquals("error", create.outcome());
        assertEquals("UnsupportedPolicyException", create.exceptionType());
        assertEquals(0, create.attempts());
        assertEquals(List.of("start CREATE", "end CREATE error"), listener.log());
    }

    @Test
    void anExecThatThrowsIsReportedWithItsExceptionAndTheSandboxIsStillTornDown() {
        driver.onExec((h, e, sink) -> {
            throw SandboxException.builder("stream dropped").provider("scripted").build();
        });
        try (ManagedSandboxRunner<ScriptedDriver.Handle> runner = builder().build()) {
            assertThrows(SandboxException.class, () -> runner.run(RunRequest.python("print(1)")));
        }
        assertEquals(List.of("start CREATE", "end CREATE success", "start EXEC", "end EXEC error",
                "start TEARDOWN", "end TEARDOWN destroyed"), listener.log());
        assertEquals("SandboxException", listener.events(LifecycleEvent.Phase.EXEC).get(0).exceptionType());
    }

    @Test
    void aFailedTeardownIsAFailedTeardownAndASuspectedLeakWithTheRunId() {
        driver.onEveryDestroy(ScriptedDriver.throwing(SandboxException.builder("forbidden").provider("scripted")
                .httpStatus(403).build()));
        String runId;
        try (ManagedSandboxRunner<ScriptedDriver.Handle> runner = builder().build()) {
            Sandbox s = runner.open(SandboxSpec.defaults());
            runId = s.runId();
            s.close();
            assertEquals(Teardown.FAILED, s.teardown());
            assertEquals(1, runner.lifecycleStats().teardownFailures());
            driver.onEveryDestroy((d, h) -> { d.expire(h.id()); return true; }); // let the test clean up
            driver.live().forEach(driver::expire);
        }
        LifecycleEvent teardown = listener.events(LifecycleEvent.Phase.TEARDOWN).get(0);
        assertEquals("failed", teardown.outcome());
        assertFalse(teardown.succeeded());
        assertEquals(List.of(LeakSuspected.of("scripted", LeakSuspected.Reason.TEARDOWN_FAILED, runId).toString()),
                listener.leaks().stream().map(Object::toString).toList());
    }

    @Test
    void anAmbiguousCreateLeftUnresolvedIsASuspectedLeak() {
        driver.onCreate(ScriptedDriver.failing(SandboxException.builder("create timed out").provider("scripted")
                .retriable(true).requestMayHaveSucceeded(true).build()));
        ManagedSandboxRunner<ScriptedDriver.Handle> runner = builder().build();
        SandboxException e = assertThrows(SandboxException.class, () -> runner.open(SandboxSpec.defaults()));
        runner.close(); // the search window is 5 minutes: close gives up after 200 ms and records it
        assertEquals(1, runner.lifecycleStats().unresolved());
        assertEquals(List.of(LeakSuspected.Reason.CREATE_UNRESOLVED),
                listener.leaks().stream().map(LeakSuspected::reason).toList());
        assertEquals(e.runId().orElseThrow(), listener.leaks().get(0).runId());
        assertEquals("error", listener.events(LifecycleEvent.Phase.CREATE).get(0).outcome());
    }

    @Test
    void aListenerThatThrowsChangesNothing() {
        LifecycleListener broken = new LifecycleListener() {
            @Override
            public Operation started(LifecycleEvent.Phase phase, String provider) {
                if (phase == LifecycleEvent.Phase.EXEC) {
                    throw new IllegalStateException("broken listener");
                }
                return event -> {
                    throw new IllegalStateException("broken listener");
                };
            }
        };
        try (ManagedSandboxRunner<ScriptedDriver.Handle> runner = ManagedSandboxRunner.builder(driver)
                .lifecycleListener(broken).build()) {
            RunResult r = runner.run(RunRequest.python("print(1)"));
            assertEquals(RunStatus.EXITED, r.status());
            assertEquals(Teardown.DESTROYED, r.teardown());
        }
    }

    @Test
    void aProviderThatTakesNoListenerSaysSoInsteadOfDroppingIt() {
        SandboxRunnerProvider plain = new SandboxRunnerProvider() {
            @Override
            public String name() {
                return "plain";
            }

            @Override
            public String artifact() {
                return "example:plain";
            }

            @Override
            public boolean isConfigured(java.util.Map<String, String> env) {
                return true;
            }

            @Override
            public dev.sandbox4j.api.SandboxRunner fromEnv(java.util.Map<String, String> env) {
                return ManagedSandboxRunner.of(driver);
            }
        };
        assertInstanceOf(ManagedSandboxRunner.class, plain.fromEnv(java.util.Map.of(), LifecycleListener.NONE));
        var e = assertThrows(dev.sandbox4j.api.exception.SandboxConfigurationException.class,
                () -> plain.fromEnv(java.util.Map.of(), listener));
        assertTrue(e.getMessage().contains("does not take a lifecycle listener"), e.getMessage());
    }
}
