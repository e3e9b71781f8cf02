package dev.sandbox4j.tck;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sandbox4j.api.Attempt;
import dev.sandbox4j.api.Execution;
import dev.sandbox4j.api.RunRequest;
import dev.sandbox4j.api.RunResult;
import dev.sandbox4j.api.SandboxSpec;
import dev.sandbox4j.api.Teardown;
import dev.sandbox4j.compose.WarmPoolRunner;
import dev.sandbox4j.policy.Language;
import java.time.Duration;
import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * Contract cases. A warm pool over the runner: once the pool is warm, runs come from the pool (the pool
 * counts each as handed out, and the run's attempts end with {@link Attempt.Source#POOL}), each pooled
 * sandbox serves one task (a file one run leaves is never seen by the next, and no sandbox id serves
 * twice), and closing the pool destroys what it holds (the leak count after the test checks it). Part of
 * {@link SandboxRunnerContract}.
 *
 * @since 0.1.0
 */
public interface PoolCases extends ContractContext {
    /** How long a warm sandbox may take to be ready: a cloud create under load, with room to spare. */
    Duration WARM_BOUND = Duration.ofMinutes(3);

    /**
     * Over a {@code WarmPoolRunner} of size 2 on the runner (which the pool does not own), three times: waits
     * up to {@link #WARM_BOUND} for a ready sandbox (failing when none is ready by then), then runs Python that
     * prints whether {@code left-by-earlier-run} exists and creates it. Each run fails the case unless it exits
     * 0 printing {@code False}, on a sandbox id not seen before, with teardown {@code DESTROYED} or
     * {@code ALREADY_GONE}, no attempt of source {@code ATTACHED}, the pool's {@code handedOut()} one higher
     * than before the run, and an attempt of source {@code POOL}. After the three, {@code handedOut()} must be
     * 3 and {@code fallbacks()} 0. Skipped without {@code Language.PYTHON}.
     */
    @Test
    default void aPooledSandboxServesOneTask() {
        requireLanguage(Language.PYTHON);
        SandboxSpec spec = SandboxSpec.defaults();
        Set<String> ids = new HashSet<>();
        try (WarmPoolRunner pool = WarmPoolRunner.builder(runner(), spec).size(2).maxIdle(Duration.ofMinutes(2))
                .ownsDelegate(false).build()) {
            for (int i = 0; i < 3; i++) {
                awaitWarm(pool);
                long servedBefore = pool.handedOut();
                RunResult r = pool.run(RunRequest.of(spec, Execution.python(
                        "import os\nprint(os.path.exists('left-by-earlier-run'))\nopen('left-by-earlier-run', 'w').write('x')")));
                assertExited(r, 0);
                assertEquals("False\n", r.stdout(), "a pooled sandbox never saw an earlier task");
                assertTrue(ids.add(r.sandboxId()), "sandbox " + r.sandboxId() + " served two tasks");
                assertTrue(r.teardown() == Teardown.DESTROYED || r.teardown() == Teardown.ALREADY_GONE, r.teardown().toString());
                assertTrue(r.attempts().stream().allMatch(a -> a.source() != Attempt.Source.ATTACHED), r.attempts().toString());
                // a warm sandbox was ready, so the run must have been served from the pool, not created
                assertEquals(servedBefore + 1, pool.handedOut(), "run " + i + " was not served from the pool");
                assertTrue(r.attempts().stream().anyMatch(a -> a.source() == Attempt.Source.POOL),
                        "run " + i + " does not say it came from the pool: " + r.attempts());
            }
            assertEquals(3, pool.handedOut(), "every run was served from the pool");
            assertEquals(0, pool.fallbacks(), "no run found the pool empty");
        }
    }

    /** Waits, bounded, until the pool holds a ready sandbox (its refills run in the background). */
    private static void awaitWarm(WarmPoolRunner pool) {
        long deadline = System.nanoTime() + WARM_BOUND.toNanos();
        while (pool.idle() == 0 && System.nanoTime() - deadline < 0) {
            java.util.concurrent.locks.LockSupport.parkNanos(Duration.ofMillis(20).toNanos()); // a bounded poll
        }
        assertTrue(pool.idle() > 0, "the pool held no ready sandbox " + WARM_BOUND.toSeconds() + " s after it was asked for one ("
                + pool.refillFailures() + " refill failures)");
    }
}
