package dev.sandbox4j.examples.sessions;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.sandbox4j.api.exception.AttachUnsupportedException;
import dev.sandbox4j.api.Attempt;
import dev.sandbox4j.api.RunResult;
import dev.sandbox4j.compose.WarmPoolRunner;
import dev.sandbox4j.examples.LocalRunnerFixture;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * The warm pool of the example on a real local runner; the local runner cannot attach, so the session
 * half is checked to refuse with the typed exception (the contract suite attaches on the emulators).
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
    void theLocalRunnerSaysItCannotAttach() throws Exception {
        try (LocalRunnerFixture local = new LocalRunnerFixture()) {
            assertThrows(AttachUnsupportedException.class, () -> SessionsExample.lastRequest(local.runner(), "any", "print(1)"));
            assertEquals(0, local.leftovers());
        }
    }
}
