package dev.sandbox4j.examples.sessions;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.sandbox4j.api.exception.SandboxNotFoundException;
import dev.sandbox4j.api.Attempt;
import dev.sandbox4j.api.RunResult;
import dev.sandbox4j.compose.WarmPoolRunner;
import dev.sandbox4j.examples.LocalRunnerFixture;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * The example on a real local runner: the warm pool, and the session across two requests (the local
 * runner attaches a detached sandbox within one JVM; the contract suite attaches on every runner).
 */
class SessionsExampleTest {
    @Test
    void aWarmPoolServesARunAndClosesClean() throws Exception {
        try (LocalRunnerFixture local = new LocalRunnerFixture()) {
            try (WarmPoolRunner pool = SessionsExample.warmPool(local.runner())) {
                long end = System.nanoTime() + Duration.ofSeconds(30).toNanos();
                while (pool.idle() < 2 && System.nanoTime() < end) {
                    Thread.yield(); // the two are created in the background
                }
                assertEquals(2, pool.idle());
                RunResult r = SessionsExample.pooledRun(pool);
                assertEquals("42\n", r.stdout());
                assertEquals(Attempt.Source.POOL, r.attempts().get(r.attempts().size() - 1).source(), r.attempts().toString());
            }
            assertEquals(0, local.leftovers(), "close destroyed the pool's sandboxes");
        }
    }

    @Test
    void aSessionSpansTwoRequestsOnTheLocalRunner() throws Exception {
        try (LocalRunnerFixture local = new LocalRunnerFixture()) {
            // the local runner attaches within one JVM: the detached sandbox keeps its files between requests
            String id = SessionsExample.firstRequest(local.runner(), "open('state.txt', 'w').write(str(6 * 7))");
            RunResult r = SessionsExample.lastRequest(local.runner(), id, "print(open('state.txt').read())");
            assertEquals("42\n", r.stdout(), r.toString());
            assertEquals(0, local.leftovers(), "the last request destroyed the sandbox");
            assertThrows(SandboxNotFoundException.class, () -> SessionsExample.lastRequest(local.runner(), id, "print(1)"),
                    "a destroyed session cannot be attached again");
        }
    }
}
