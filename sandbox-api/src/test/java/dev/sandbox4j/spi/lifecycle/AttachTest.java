package dev.sandbox4j.spi.lifecycle;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sandbox4j.api.exception.AttachRefusedException;
import dev.sandbox4j.api.exception.AttachUnsupportedException;
import dev.sandbox4j.api.Attempt;
import dev.sandbox4j.api.Execution;
import dev.sandbox4j.api.RunResult;
import dev.sandbox4j.api.Sandbox;
import dev.sandbox4j.api.exception.SandboxNotFoundException;
import dev.sandbox4j.api.SandboxSpec;
import dev.sandbox4j.api.Teardown;
import dev.sandbox4j.policy.Capabilities;
import dev.sandbox4j.policy.EgressPolicy;
import dev.sandbox4j.policy.Language;
import dev.sandbox4j.policy.Limits;
import java.time.Duration;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import dev.sandbox4j.spi.ExecOutcome;

@Timeout(30)
class AttachTest {
    private static final SandboxSpec SPEC = SandboxSpec.builder().egress(EgressPolicy.allowOnly("pypi.org"))
            .limits(Limits.builder().lifetime(Duration.ofMinutes(5)).build()).build();

    private final ScriptedDriver driver = new ScriptedDriver("scripted");
    private final ManagedSandboxRunner<ScriptedDriver.Handle> runner = ManagedSandboxRunner.of(driver);

    @AfterEach
    void nothingLeaks() {
        runner.close();
        assertEquals(0, SandboxLocks.size(), "every exec lock released");
    }

    private String detached() {
        Sandbox s = runner.open(SPEC);
        s.detach();
        assertTrue(s.isClosed());
        assertEquals(Teardown.DETACHED, s.teardown());
        s.close(); // detach came first: close does nothing
        assertEquals(Teardown.DETACHED, s.teardown());
        assertEquals(List.of(s.id()), driver.live(), "detached, not destroyed");
        return s.id();
    }

    @Test
    void detachThenAttachRunsInTheSameSandboxAndCloseDestroysIt() {
        Sandbox first = runner.open(SPEC);
        String id = first.id();
        String runId = first.runId();
        first.detach();
        try (Sandbox again = runner.attach(id, SPEC)) {
            assertEquals(id, again.id());
            assertEquals(runId, again.runId(), "the run id comes back from the label");
            RunResult r = again.exec(Execution.python("print(1)"));
            assertEquals(0, r.exitCode().orElse(-1));
            assertEquals(1, r.attempts().size());
            assertEquals(Attempt.Source.ATTACHED, r.attempts().get(0).source());
            assertTrue(r.attempts().get(0).toString().contains("attached"), r.attempts().toString());
            assertEquals(1, driver.count("exec"));
        }
        assertEquals(List.of(), driver.live(), "closing an attached sandbox destroys it");
    }

    @Test
    void anotherEgressIsRefusedAndTheSandboxLeftAlone() {
        String id = detached();
        SandboxSpec other = SPEC.toBuilder().egress(EgressPolicy.allowOnly("example.com")).build();
        AttachRefusedException e = assertThrows(AttachRefusedException.class, () -> runner.attach(id, other));
        assertEquals(1, e.reasons().size(), e.reasons().toString());
        assertTrue(e.reasons().get(0).startsWith("egress:"), e.reasons().toString());
        assertEquals(id, e.sandboxId());
        assertFalse(e.isRetriable());
        assertEquals(List.of(id), driver.live(), "refused, not destroyed");
        assertEquals(0, driver.count("destroy"));
        assertTrue(driver.released().contains(id), "the handle is released");
        driver.expire(id);
    }

    @Test
    void anotherLifetimeIsRefused() {
        String id = detached();
        SandboxSpec other = SPEC.toBuilder().limits(Limits.builder().lifetime(Duration.ofMinutes(50)).build()).build();
        AttachRefusedException e = assertThrows(AttachRefusedException.class, () -> runner.attach(id, other));
        assertEquals(List.of("lifetime: recorded 300 s, expected 3000 s"), e.reasons());
        driver.expire(id);
    }

    @Test
    void theSameRulesInAnotherOrderAreTheSamePolicy() {
        SandboxSpec ab = SPEC.toBuilder().egress(EgressPolicy.allowOnly("a.example", "b.example")).build();
        SandboxSpec ba = SPEC.toBuilder().egress(EgressPolicy.allowOnly("b.example", "a.example")).build();
        Sandbox s = runner.open(ab);
        s.detach();
        runner.attach(s.id(), ba).close();
        assertEquals(List.of(), driver.live());
    }

    @Test
    void aSandboxWithoutTheLibrarysLabelsIsRefused() {
        ScriptedDriver.Handle h = driver.plant(Map.of("team", "x"));
        AttachRefusedException e = assertThrows(AttachRefusedException.class, () -> runner.attach(h.id(), SPEC));
        assertTrue(e.reasons().get(0).startsWith("labels: no sandbox4j-run-id label"), e.reasons().toString());
        assertTrue(e.reasons().stream().anyMatch(r -> r.startsWith("policy: the sandbox has no sandbox4j-policy label")),
                e.reasons().toString());
        assertEquals(List.of(h.id()), driver.live());
        driver.expire(h.id());
    }

    @Test
    void aSandboxOfAnotherOwnerIsRefused() {
        try (ManagedSandboxRunner<ScriptedDriver.Handle> a = ManagedSandboxRunner.builder(driver).owner("replica-a").build();
                ManagedSandboxRunner<ScriptedDriver.Handle> b = ManagedSandboxRunner.builder(driver).owner("replica-b").build()) {
            Sandbox s = a.open(SPEC);
            s.detach();
            AttachRefusedException e = assertThrows(AttachRefusedException.class, () -> b.attach(s.id(), SPEC));
            assertEquals(List.of("owner: the sandbox's owner label is 'replica-a', this runner's is 'replica-b'"), e.reasons());
            AttachRefusedException none = assertThrows(AttachRefusedException.class, () -> runner.attach(s.id(), SPEC));
            assertEquals(List.of("owner: the sandbox's owner label is 'replica-a', this runner's is unset"), none.reasons());
            a.attach(s.id(), SPEC).close(); // its own owner may
        }
        assertEquals(List.of(), driver.live());
    }

    @Test
    void aStoppedSandboxIsRefused() {
        String id = detached();
        driver.stop(id);
        AttachRefusedException e = assertThrows(AttachRefusedException.class, () -> runner.attach(id, SPEC));
        assertEquals(List.of("state: the sandbox is stopped, not running"), e.reasons());
        driver.expire(id);
    }

    @Test
    void anEgressTheProviderReportsDifferentlyIsRefusedWhateverTheLabelSays() {
        String id = detached();
        driver.reportEgress(id, EgressPolicy.allowAll());
        AttachRefusedException e = assertThrows(AttachRefusedException.class, () -> runner.attach(id, SPEC));
        assertEquals(2, e.reasons().size(), e.reasons().toString());
        assertTrue(e.reasons().get(0).startsWith("reported by scripted: egress.default: the provider reports ALLOW"),
                e.reasons().toString());
        driver.expire(id);
    }

    @Test
    void aLockedDownSpecIsRefusedWhereTheProviderDoesNotReportEgress() {
        // the label says the code's egress from the create on; only a read-back shows the lock-down ran
        SandboxSpec lockedDown = SPEC.toBuilder().setupEgress(EgressPolicy.allowAll()).setupCommand("true").build();
        Sandbox s = runner.open(lockedDown);
        String id = s.id();
        s.detach();
        AttachRefusedException e = assertThrows(AttachRefusedException.class, () -> runner.attach(id, lockedDown));
        assertEquals(1, e.reasons().size(), e.reasons().toString());
        assertTrue(e.reasons().get(0).startsWith("egress: the spec locks egress down after setup"), e.reasons().toString());
        assertEquals(List.of(id), driver.live(), "refused, not destroyed");
        // once the provider reports the locked-down egress, the same spec attaches
        driver.reportEgress(id, lockedDown.egress());
        try (Sandbox again = runner.attach(id, lockedDown)) {
            assertEquals(id, again.id());
        }
        assertEquals(List.of(), driver.live());
    }

    @Test
    void anUnknownIdIsNotFound() {
        assertThrows(SandboxNotFoundException.class, () -> runner.attach("scripted-404", SPEC));
    }

    @Test
    void aRunnerWithoutTheFeatureSaysSoBeforeAnyCall() {
        EnumSet<Capabilities.Feature> features = EnumSet.allOf(Capabilities.Feature.class);
        features.remove(Capabilities.Feature.ATTACH);
        ScriptedDriver plain = new ScriptedDriver("plain", Capabilities.builder("plain")
                .egress(Capabilities.Egress.values()).limits(Capabilities.Limit.values())
                .features(features.toArray(new Capabilities.Feature[0])).languages(Language.values()).build());
        try (ManagedSandboxRunner<ScriptedDriver.Handle> r = ManagedSandboxRunner.of(plain)) {
            assertThrows(AttachUnsupportedException.class, () -> r.attach("x", SPEC));
            Sandbox s = r.open(SPEC);
            assertThrows(UnsupportedOperationException.class, s::detach);
            assertFalse(s.isClosed());
            s.close();
            assertEquals(List.of(), plain.calls().stream().filter(c -> c.startsWith("attach")).toList());
        }
    }

    @Test
    void twoObjectsForOneSandboxNeverExecAtOnce() throws Exception {
        AtomicInteger inside = new AtomicInteger();
        AtomicInteger most = new AtomicInteger();
        CountDownLatch firstIn = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        driver.onExec((h, e, sink) -> {
            most.accumulateAndGet(inside.incrementAndGet(), Math::max);
            try {
                if (e.code().equals("first")) {
                    firstIn.countDown();
                    release.await();
                }
            } finally {
                inside.decrementAndGet();
            }
            return ExecOutcome.exited(0);
        });
        Sandbox opened = runner.open(SPEC);
        Sandbox attached = runner.attach(opened.id(), SPEC); // the same sandbox, a second object in this JVM
        Thread a = new Thread(() -> opened.exec(Execution.python("first")));
        a.start();
        assertTrue(firstIn.await(10, TimeUnit.SECONDS));
        Thread b = new Thread(() -> attached.exec(Execution.python("second")));
        b.start();
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (b.getState() != Thread.State.WAITING && System.nanoTime() < end) {
            Thread.onSpinWait(); // b parks on the shared exec lock
        }
        assertEquals(Thread.State.WAITING, b.getState());
        assertEquals(1, driver.count("exec"), "the second exec waits for the first");
        release.countDown();
        a.join(10_000);
        b.join(10_000);
        assertEquals(1, most.get());
        assertEquals(2, driver.count("exec"));
        attached.detach();
        opened.close();
        assertEquals(List.of(), driver.live());
    }
}
