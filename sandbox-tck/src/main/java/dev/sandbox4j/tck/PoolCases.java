package dev.sandbox4j.tck;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sandbox4j.api.Attempt;
import dev.sandbox4j.api.Execution;
import dev.sandbox4j.api.RunRequest;
import dev.sandbox4j.api.RunResult;
import dev.sandbox4j.api.SandboxSpec;
import dev.sandbox4j.api.Teardown;
import dev.sandbox4j.api.WarmPoolRunner;
import dev.sandbox4j.policy.Language;
import java.time.Duration;
import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * Contract cases. A warm pool over the runner: runs come from the pool, each pooled sandbox serves one
 * task (a file one run leaves is never seen by the next), and closing the pool destroys what it holds
 * (the leak count after the test checks it). Part of {@link SandboxRunnerContract}.
 *
 * @since 0.1.0
 */
public interface PoolCases extends ContractContext {
    @Test
    default void aPooledSandboxServesOneTask() {
        requireLanguage(Language.PYTHON);
        SandboxSpec spec = SandboxSpec.defaults();
        Set<String> ids = new HashSet<>();
        try (WarmPoolRunner pool = WarmPoolRunner.builder(runner(), spec).size(2).maxIdle(Duration.ofMinutes(2))
                .ownsDelegate(false).build()) {
            for (int i = 0; i < 3; i++) {
                RunResult r = pool.run(RunRequest.of(spec, Execution.python(
                        "import os\nprint(os.path.exists('left-by-earlier-run'))\nopen('left-by-earlier-run', 'w').write('x')")));
                assertExited(r, 0);
                assertEquals("False\n", r.stdout(), "a pooled sandbox never saw an earlier task");
                assertTrue(ids.add(r.sandboxId()), "sandbox " + r.sandboxId() + " served two tasks");
                assertTrue(r.teardown() == Teardown.DESTROYED || r.teardown() == Teardown.ALREADY_GONE, r.teardown().toString());
                assertTrue(r.attempts().stream().allMatch(a -> a.source() != Attempt.Source.ATTACHED), r.attempts().toString());
            }
            assertEquals(3, pool.handedOut() + pool.fallbacks());
        }
    }
}
