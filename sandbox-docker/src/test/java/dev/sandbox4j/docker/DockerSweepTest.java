package dev.sandbox4j.docker;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sandbox4j.api.Sandbox;
import dev.sandbox4j.api.SandboxRunner;
import dev.sandbox4j.api.SandboxSpec;
import dev.sandbox4j.api.SweepRequest;
import dev.sandbox4j.api.SweepResult;
import dev.sandbox4j.api.Teardown;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * The orphan sweep through the real engine's container listing (issue 29; the emulators' adapters have
 * theirs in SweepCheck): a replica that crashed leaves two sandboxes; its successor, under the same owner
 * name, destroys them and nothing of a sibling's; a run id the application kept is swept whoever owns it.
 * Owner names are fresh per run: the engine is shared with other processes.
 */
class DockerSweepTest {
    @Test
    void aRestartedReplicaSweepsOnlyItsOwnOrphans() throws Exception {
        String tag = UUID.randomUUID().toString().substring(0, 8);
        String a = "sweep-a-" + tag;
        try (DockerSandboxRunner crashed = TestEngine.runner(b -> b.owner(a));
                DockerSandboxRunner sibling = TestEngine.runner(b -> b.owner("sweep-b-" + tag))) {
            Sandbox orphan1 = crashed.open(SandboxSpec.defaults());
            Sandbox orphan2 = crashed.open(SandboxSpec.defaults());
            Sandbox siblings = sibling.open(SandboxSpec.defaults());
            // replica a dies here: its Sandbox objects are never closed
            try (SandboxRunner restarted = TestEngine.runner(b -> b.owner(a))) {
                SweepResult expired = restarted.sweep(SweepRequest.expired());
                assertEquals(List.of(), expired.destroyed(), "nothing has expired yet: " + expired);
                SweepResult r = restarted.sweep(SweepRequest.builder().allOfOwner().build());
                assertEquals(Set.of(orphan1.id(), orphan2.id()), Set.copyOf(r.destroyed()), r.toString());
                assertEquals(List.of(), r.failed());
                assertEquals("gone", state(orphan1), "the orphan is no longer on the engine");
                assertEquals("running", state(siblings), "a sibling's sandbox was left alone");

                Sandbox kept = sibling.open(SandboxSpec.defaults());
                SweepResult byId = restarted.sweep(SweepRequest.runIds(List.of(kept.runId())));
                assertEquals(List.of(kept.id()), byId.destroyed(), byId.toString());
                kept.close();
                assertTrue(kept.teardown() == Teardown.ALREADY_GONE, kept.teardown().toString());
            }
            orphan1.close();
            assertEquals(Teardown.ALREADY_GONE, orphan1.teardown(), "swept, so gone when its owner closes it");
            siblings.close();
            assertEquals(Teardown.DESTROYED, siblings.teardown());
        }
    }

    /** Whether {@code s}'s container still runs: a command in it runs, or fails because it is gone. */
    private static String state(Sandbox s) {
        try {
            s.exec(dev.sandbox4j.api.Execution.python("pass"));
            return "running";
        } catch (RuntimeException e) {
            return "gone";
        }
    }
}
