package dev.sandbox4j.emulators;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sandbox4j.api.Sandbox;
import dev.sandbox4j.api.SandboxRunner;
import dev.sandbox4j.api.SandboxSpec;
import dev.sandbox4j.api.SweepRequest;
import dev.sandbox4j.api.SweepResult;
import dev.sandbox4j.api.Teardown;
import java.util.List;
import java.util.Set;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * The orphan sweep through an adapter's real listing on its emulator: a replica that crashed leaves
 * two sandboxes; its successor, under the same owner name, destroys them and nothing of a sibling's.
 */
public final class SweepCheck {
    private SweepCheck() {
    }

    /**
     * @param runnerFor a runner of the adapter with the given owner
     * @param liveIds   the ids the emulator's ledger holds live
     */
    public static void aRestartedReplicaSweepsOnlyItsOwnOrphans(Function<String, SandboxRunner> runnerFor,
            Supplier<Set<String>> liveIds) {
        SandboxRunner crashed = runnerFor.apply("replica-a");
        SandboxRunner sibling = runnerFor.apply("replica-b");
        Sandbox orphan1 = crashed.open(SandboxSpec.defaults());
        Sandbox orphan2 = crashed.open(SandboxSpec.defaults());
        Sandbox siblings = sibling.open(SandboxSpec.defaults());
        // replica-a dies here: its Sandbox objects are never closed

        try (SandboxRunner restarted = runnerFor.apply("replica-a")) {
            SweepResult expired = restarted.sweep(SweepRequest.expired());
            assertEquals(List.of(), expired.destroyed(), "nothing has expired yet: " + expired);
            SweepResult r = restarted.sweep(SweepRequest.builder().allOfOwner().build());
            assertEquals(Set.of(orphan1.id(), orphan2.id()), Set.copyOf(r.destroyed()), r.toString());
            assertEquals(List.of(), r.failed());
            assertFalse(liveIds.get().contains(orphan1.id()));
            assertTrue(liveIds.get().contains(siblings.id()), "a sibling's sandbox was destroyed");

            // a run id the application kept (from an exception or lifecycleStats) is swept owner or not
            Sandbox kept = sibling.open(SandboxSpec.defaults());
            SweepResult byId = restarted.sweep(SweepRequest.runIds(List.of(kept.runId())));
            assertEquals(List.of(kept.id()), byId.destroyed());
            kept.close(); // gone already: Vercel's stop of a stopped session still answers 2xx
            assertTrue(kept.teardown() == Teardown.ALREADY_GONE || kept.teardown() == Teardown.DESTROYED,
                    kept.teardown().toString());
            assertFalse(liveIds.get().contains(kept.id()));
        }
        siblings.close();
        sibling.close();
        crashed.close();
    }
}
