package dev.sandbox4j.compose;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sandbox4j.spi.Backoff;
import dev.sandbox4j.spi.lifecycle.ManagedSandboxRunner;
import dev.sandbox4j.spi.lifecycle.ScriptedDriver;
import dev.sandbox4j.policy.EgressPolicy;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import dev.sandbox4j.api.Attempt;
import dev.sandbox4j.api.Execution;
import dev.sandbox4j.api.RunRequest;
import dev.sandbox4j.api.RunResult;
import dev.sandbox4j.api.Sandbox;
import dev.sandbox4j.api.SandboxSpec;
import dev.sandbox4j.api.Teardown;
import dev.sandbox4j.api.exception.SandboxException;

@Timeout(30)
class WarmPoolRunnerTest {
    private static final SandboxSpec SPEC = SandboxSpec.builder().egress(EgressPolicy.allowOnly("pypi.org")).build();
    private final ScriptedDriver driver = new ScriptedDriver("scripted");
    private final ManagedSandboxRunner<ScriptedDriver.Handle> runner = ManagedSandboxRunner.of(driver);

    /** Waits for background work without sleeping; 20 s bounds a real hang. */
    static void await(String what, BooleanSupplier done) {
        long end = System.nanoTime() + Duration.ofSeconds(20).toNanos();
        while (!done.getAsBoolean()) {
            if (System.nanoTime() - end > 0) {
                throw new AssertionError("timed out waiting until " + what);
            }
            Thread.yield();
        }
    }

    @Test
    void aPooledSandboxServesOneTaskAndIsReplaced() {
        try (WarmPoolRunner pool = WarmPoolRunner.builder(runner, SPEC).size(2).build()) {
            await("two are ready", () -> pool.idle() == 2);
            assertEquals(2, driver.count("create"));
            Set<String> ids = new HashSet<>();
            for (int i = 0; i < 5; i++) {
                RunResult r = pool.run(RunRequest.of(SPEC, Execution.python("print(" + i + ")")));
                assertTrue(ids.add(r.sandboxId()), "sandbox " + r.sandboxId() + " served a second task");
                assertEquals(Teardown.DESTROYED, r.teardown());
                assertFalse(driver.live().contains(r.sandboxId()), "destroyed after its one task");
                Attempt last = r.attempts().get(r.attempts().size() - 1);
                assertEquals(Attempt.Source.POOL, last.source(), r.attempts().toString());
                assertEquals(Attempt.Source.CREATED, r.attempts().get(0).source());
                int served = i + 1;
                await("the pool refills", () -> pool.idle() == 2 && driver.count("create") == 2 + served);
            }
            assertEquals(5, pool.handedOut());
            assertEquals(0, pool.fallbacks());
            assertEquals(5, driver.count("exec"), "one exec per sandbox");
        }
        assertEquals(List.of(), driver.live(), "close destroys the idle ones");
        assertTrue(driver.isClosed(), "and closes the wrapped runner");
    }

    @Test
    void pooledSandboxesLiveForMaxIdlePlusBudgetPlusMargin() {
        try (WarmPoolRunner pool = WarmPoolRunner.builder(runner, SPEC).size(1).maxIdle(Duration.ofMinutes(3))
                .budget(Duration.ofSeconds(90)).build()) {
            await("one is ready", () -> pool.idle() == 1);
            assertEquals(Duration.ofMinutes(3).plusSeconds(90).plus(SandboxSpec.LIFETIME_MARGIN),
                    driver.createRequests().get(0).lifetime());
            assertEquals(EgressPolicy.allowOnly("pypi.org"), driver.createRequests().get(0).spec().egress(),
                    "created with the full policy");
        }
        assertEquals(List.of(), driver.live());
    }

    @Test
    void anotherSpecOrALongerLifetimeIsCreatedFresh() {
        try (WarmPoolRunner pool = WarmPoolRunner.builder(runner, SPEC).size(1).build()) {
            await("one is ready", () -> pool.idle() == 1);
            try (Sandbox other = pool.open(SandboxSpec.defaults())) {
                assertEquals(Attempt.Source.CREATED, other.attempts().get(other.attempts().size() - 1).source());
            }
            SandboxSpec longer = SPEC.toBuilder().limits(SPEC.limits().toBuilder().lifetime(Duration.ofHours(1)).build()).build();
            try (Sandbox s = pool.open(longer)) {
                assertEquals(1, s.attempts().size());
            }
            assertEquals(1, pool.idle(), "the pooled one is still waiting");
            assertEquals(0, pool.handedOut());
            assertTrue(pool.serves(SPEC));
            assertFalse(pool.serves(longer));
        }
        assertEquals(List.of(), driver.live());
    }

    @Test
    void aPoolThatCannotRefillCreatesFresh() {
        // the first pooled create fails; the retry waits an hour, so the pool stays empty
        driver.onCreate(ScriptedDriver.failing(SandboxException.builder("bad request").provider("scripted")
                .httpStatus(400).build()));
        Backoff slow = Backoff.builder().base(Duration.ofHours(1)).max(Duration.ofHours(1)).build();
        try (WarmPoolRunner pool = WarmPoolRunner.builder(runner, SPEC).size(1).backoff(slow).build()) {
            await("the refill failed", () -> pool.refillFailures() == 1);
            RunResult r = pool.run(RunRequest.of(SPEC, Execution.python("print(1)")));
            assertEquals(1, pool.fallbacks());
            assertEquals(0, pool.handedOut());
            assertTrue(r.attempts().stream().noneMatch(a -> a.source() == Attempt.Source.POOL), r.attempts().toString());
            assertEquals(0, pool.idle(), "no refill before the backoff ends");
        }
        assertEquals(List.of(), driver.live());
    }

    @Test
    void aSandboxIdleTooLongIsRetiredNotHandedOut() {
        AtomicLong now = new AtomicLong();
        try (WarmPoolRunner pool = WarmPoolRunner.builder(runner, SPEC).size(1).maxIdle(Duration.ofMinutes(1))
                .clock(now::get).build()) {
            await("one is ready", () -> pool.idle() == 1);
            String stale = driver.live().get(0);
            now.addAndGet(Duration.ofMinutes(2).toNanos());
            try (Sandbox s = pool.open(SPEC)) {
                assertNotEquals(stale, s.id(), "nothing stale is handed out");
            }
            assertEquals(1, pool.retired());
            await("the stale one is destroyed", () -> !driver.live().contains(stale));
        }
        assertEquals(List.of(), driver.live());
    }

    @Test
    void sizeZeroIsOff() {
        try (WarmPoolRunner pool = WarmPoolRunner.builder(runner, SPEC).build()) {
            assertEquals(0, driver.count("create"), "nothing created ahead");
            try (Sandbox s = pool.open(SPEC)) {
                assertEquals(1, s.attempts().size());
            }
            assertEquals(1, driver.count("create"));
            assertEquals(0, pool.handedOut());
        }
        assertEquals(List.of(), driver.live());
    }
}
