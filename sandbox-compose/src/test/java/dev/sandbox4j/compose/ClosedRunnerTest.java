package dev.sandbox4j.compose;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sandbox4j.compose.ConcurrencyLimiter;
import dev.sandbox4j.api.Execution;
import dev.sandbox4j.compose.FailoverRunner;
import dev.sandbox4j.api.RunRequest;
import dev.sandbox4j.api.Sandbox;
import dev.sandbox4j.api.SandboxRunner;
import dev.sandbox4j.api.SandboxSpec;
import dev.sandbox4j.api.SweepRequest;
import dev.sandbox4j.api.Teardown;
import dev.sandbox4j.compose.WarmPoolRunner;
import java.util.List;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;
import dev.sandbox4j.spi.lifecycle.ManagedSandboxRunner;
import dev.sandbox4j.spi.lifecycle.ScriptedDriver;

/** A closed runner or decorator refuses new work with a clear message and leaves no sandbox behind. */
class ClosedRunnerTest {
    private final ScriptedDriver driver = new ScriptedDriver("scripted");

    private ManagedSandboxRunner<ScriptedDriver.Handle> managed() {
        return ManagedSandboxRunner.builder(driver).owner("test-owner").build();
    }

    private static final List<Consumer<SandboxRunner>> WORK = List.of(
            r -> r.open(SandboxSpec.defaults()),
            r -> r.run(RunRequest.builder("print(1)").build()),
            r -> r.attach("some-id", SandboxSpec.defaults()),
            r -> r.sweep(SweepRequest.expired()));

    private void refusesEveryCall(SandboxRunner closed, String name) {
        for (Consumer<SandboxRunner> work : WORK) {
            IllegalStateException e = assertThrows(IllegalStateException.class, () -> work.accept(closed));
            assertTrue(e.getMessage().contains(name) && e.getMessage().contains("is closed"), e.getMessage());
        }
        assertEquals(0, driver.count("create"), "no create reached the provider: " + driver.calls());
        assertEquals(List.of(), driver.live());
    }

    @Test
    void theLifecycleRefusesWorkAfterClose() {
        ManagedSandboxRunner<ScriptedDriver.Handle> runner = managed();
        runner.close();
        refusesEveryCall(runner, "scripted");
    }

    @Test
    void closeTearsDownTheSandboxesStillOpenButNotADetachedOne() {
        ManagedSandboxRunner<ScriptedDriver.Handle> runner = managed();
        Sandbox open = runner.open(SandboxSpec.defaults());
        Sandbox detached = runner.open(SandboxSpec.defaults());
        Sandbox closedFirst = runner.open(SandboxSpec.defaults());
        closedFirst.close();
        detached.detach();
        runner.close();
        assertTrue(open.isClosed());
        assertEquals(Teardown.DESTROYED, open.teardown());
        assertEquals(List.of(detached.id()), driver.live(), "only the detached sandbox is left, for its new holder");
        assertThrows(IllegalStateException.class, () -> open.exec(Execution.python("print(1)")));
        driver.expire(detached.id());
    }

    @Test
    void failoverRefusesWorkAfterClose() {
        FailoverRunner failover = FailoverRunner.of(managed());
        failover.close();
        refusesEveryCall(failover, "failover(scripted)");
    }

    @Test
    void aClosedCappedRunnerRefusesWorkWhileTheLimiterServesOthers() {
        try (ManagedSandboxRunner<ScriptedDriver.Handle> runner = managed()) {
            ConcurrencyLimiter limiter = ConcurrencyLimiter.builder().perKey(1).build();
            SandboxRunner alice = limiter.forKey(runner, "alice");
            alice.close();
            for (Consumer<SandboxRunner> work : WORK) {
                IllegalStateException e = assertThrows(IllegalStateException.class, () -> work.accept(alice));
                assertTrue(e.getMessage().contains("for key 'alice' is closed"), e.getMessage());
            }
            assertEquals(0, driver.count("create"));
            limiter.forKey(runner, "bob").run(RunRequest.builder("print(1)").build());
            assertEquals(1, driver.count("create"), "another key's runner still works");
        }
    }

    @Test
    void aClosedPoolRefusesWorkEvenWhenItsDelegateStaysOpen() {
        try (ManagedSandboxRunner<ScriptedDriver.Handle> runner = managed()) {
            WarmPoolRunner pool = WarmPoolRunner.builder(runner, SandboxSpec.defaults()).ownsDelegate(false).build();
            pool.close();
            refusesEveryCall(pool, "pool(scripted)");
            runner.run(RunRequest.builder("print(1)").build()); // the delegate itself still works
            assertFalse(driver.live().iterator().hasNext());
        }
    }
}
