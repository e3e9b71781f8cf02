package dev.sandbox4j.tck;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import dev.sandbox4j.api.Execution;
import dev.sandbox4j.api.RunResult;
import dev.sandbox4j.api.RunStatus;
import dev.sandbox4j.api.SandboxSpec;
import dev.sandbox4j.policy.Capabilities;
import dev.sandbox4j.policy.Language;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * Contract cases. Budgets: an endless loop times out within budget plus grace and leaves nothing. Part of {@link SandboxRunnerContract}.
 *
 * @since 0.1.0
 */
public interface TimeCases extends ContractContext {
    /**
     * Python prints {@code started} (flushed), forks a daemon ({@code fork}, {@code setsid()}, {@code fork}
     * again, then sleeps forever) and spins in an endless loop, under a 2 s budget. Fails unless the result is
     * {@code TIMED_OUT} with no exit code and {@code run} came back within the budget plus
     * {@link #timeoutGrace()}; stdout must be exactly {@code started} and a newline where the runner declares
     * {@code Feature.OUTPUT_ON_TIMEOUT}, else empty or that; and the leak count must be back to its baseline
     * right after the run. The daemon is not looked for itself: that it died with the loop shows only
     * through {@link #liveResources()}, so on a runner that reports no count (or counts sandboxes, not
     * processes) "leaves nothing" is not checked beyond the sandbox. Skipped without {@code Language.PYTHON}.
     */
    @Test
    default void infiniteLoopTimesOutWithinBudgetAndLeavesNothing() {
        requireLanguage(Language.PYTHON);
        Duration budget = Duration.ofSeconds(2);
        // a double-forked setsid() daemon must die with the loop
        String code = "import os, sys, time\n"
                + "print('started', flush=True)\n"
                + "if os.fork() == 0:\n"
                + "    os.setsid()\n"
                + "    if os.fork() == 0:\n"
                + "        while True:\n"
                + "            time.sleep(0.2)\n"
                + "    os._exit(0)\n"
                + "while True:\n"
                + "    pass\n";
        long t0 = System.nanoTime();
        RunResult r = run(SandboxSpec.defaults(), Execution.builder(code).budget(budget).build());
        Duration took = Duration.ofNanos(System.nanoTime() - t0);
        assertEquals(RunStatus.TIMED_OUT, r.status(), r::toString);
        assertTrue(r.exitCode().isEmpty(), "no exit code after a kill");
        if (runner().capabilities().supports(Capabilities.Feature.OUTPUT_ON_TIMEOUT)) {
            assertEquals("started\n", r.stdout(), "partial output is kept");
        } else {
            assertTrue(r.stdout().isEmpty() || r.stdout().equals("started\n"), "output of a timed-out run: " + r.stdout());
        }
        assertTrue(took.compareTo(budget.plus(timeoutGrace())) <= 0,
                "came back after " + took.toMillis() + " ms; budget " + budget.toMillis() + " ms + grace " + timeoutGrace().toMillis());
        assertLeakCountBackToBaseline();
    }
}
