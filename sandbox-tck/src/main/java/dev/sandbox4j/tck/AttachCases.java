package dev.sandbox4j.tck;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;
import static org.junit.jupiter.api.Assumptions.assumeFalse;

import dev.sandbox4j.api.exception.AttachRefusedException;
import dev.sandbox4j.api.exception.AttachUnsupportedException;
import dev.sandbox4j.api.Attempt;
import dev.sandbox4j.api.Execution;
import dev.sandbox4j.api.RunResult;
import dev.sandbox4j.api.Sandbox;
import dev.sandbox4j.api.exception.SandboxNotFoundException;
import dev.sandbox4j.api.SandboxSpec;
import dev.sandbox4j.api.SweepRequest;
import dev.sandbox4j.api.Teardown;
import dev.sandbox4j.policy.Capabilities;
import dev.sandbox4j.policy.EgressPolicy;
import dev.sandbox4j.policy.Language;
import dev.sandbox4j.policy.Limits;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Contract cases. Attach by id: a detached sandbox is attached again with its files, a mismatched
 * policy is refused and the sandbox left alone, a closed sandbox cannot be attached, and a runner that
 * cannot attach says so with its typed exception. Part of {@link SandboxRunnerContract}; skipped with the
 * reason on runners that do not declare {@code Feature.ATTACH}.
 *
 * @since 0.1.0
 */
public interface AttachCases extends ContractContext {
    /** The spec the attach cases open with: deny-all, a lifetime of its own. */
    private static SandboxSpec attachSpec() {
        return SandboxSpec.builder().limits(Limits.builder().lifetime(Duration.ofMinutes(3)).build()).build();
    }

    /** Attaches; when that fails, the detached sandbox is swept by run id (where the runner can), so it does not leak. */
    private Sandbox attachOrSweep(String id, String runId, SandboxSpec spec) {
        try {
            return runner().attach(id, spec);
        } catch (RuntimeException | Error e) {
            try {
                runner().sweep(SweepRequest.runIds(List.of(runId)));
            } catch (RuntimeException sweepFailed) {
                e.addSuppressed(sweepFailed);
            }
            throw e;
        }
    }

    /**
     * Opens a sandbox with a 3-minute lifetime, writes {@code handed-over.txt}, detaches it (teardown must be
     * {@code DETACHED}) and attaches by its id with the same spec (when that attach fails, the sandbox is
     * swept by run id and the failure rethrown). Fails unless the attached sandbox has the same id and run
     * id, reads the file back as {@code from request 1}, and its run's last attempt has source
     * {@code ATTACHED}. Skipped without {@code Feature.ATTACH} or {@code Language.PYTHON}.
     */
    @Test
    default void aDetachedSandboxIsAttachedAgainWithItsFiles() {
        requireFeature(Capabilities.Feature.ATTACH);
        requireLanguage(Language.PYTHON);
        SandboxSpec spec = attachSpec();
        Sandbox first = runner().open(spec);
        String id = first.id();
        try {
            assertExited(first.exec(Execution.python("open('handed-over.txt', 'w').write('from request 1')")), 0);
            first.detach();
        } catch (RuntimeException | Error e) {
            first.close();
            throw e;
        }
        assertEquals(Teardown.DETACHED, first.teardown());
        try (Sandbox second = attachOrSweep(id, first.runId(), spec)) {
            assertEquals(id, second.id());
            assertEquals(first.runId(), second.runId(), "the run id comes back from the sandbox's label");
            RunResult r = second.exec(Execution.python("print(open('handed-over.txt').read())"));
            assertExited(r, 0);
            assertEquals("from request 1\n", r.stdout());
            assertEquals(Attempt.Source.ATTACHED, r.attempts().get(r.attempts().size() - 1).source(), r.attempts().toString());
        }
    }

    /**
     * Opens and detaches a sandbox (3-minute lifetime), then attaches by its id with other specs: where the
     * runner can enforce {@code allowOnly("example.com")}, that egress must be refused with
     * {@code AttachRefusedException} giving a reason that starts {@code egress:} (on a runner that cannot,
     * only the lifetime is checked); a 7-minute lifetime must be refused with a reason that starts
     * {@code lifetime:}. Then, the refusals having left it alone, the sandbox is attached with its own spec and
     * must run {@code print(1)} to exit 0, and is closed. Fails on any other outcome. Skipped without
     * {@code Feature.ATTACH} or {@code Language.PYTHON}.
     */
    @Test
    default void anotherEgressOrLifetimeIsRefusedAndTheSandboxLeftAlone() {
        requireFeature(Capabilities.Feature.ATTACH);
        requireLanguage(Language.PYTHON);
        SandboxSpec spec = attachSpec();
        Sandbox first = runner().open(spec);
        String id = first.id();
        first.detach();
        try {
            SandboxSpec wider = spec.toBuilder().egress(EgressPolicy.allowOnly("example.com")).build();
            if (runner().capabilities().violations(wider.egress(), wider.limits()).isEmpty()) {
                AttachRefusedException e = assertThrows(AttachRefusedException.class, () -> runner().attach(id, wider));
                assertTrue(e.reasons().stream().anyMatch(r -> r.startsWith("egress:")), e.reasons().toString());
            }
            SandboxSpec longer = spec.toBuilder().limits(Limits.builder().lifetime(Duration.ofMinutes(7)).build()).build();
            AttachRefusedException e = assertThrows(AttachRefusedException.class, () -> runner().attach(id, longer));
            assertTrue(e.reasons().stream().anyMatch(r -> r.startsWith("lifetime:")), e.reasons().toString());
        } finally {
            // refused, so still there and still usable: attach with the right spec and close it
            try (Sandbox again = attachOrSweep(id, first.runId(), spec)) {
                assertExited(again.exec(Execution.python("print(1)")), 0);
            }
        }
    }

    /**
     * Opens and closes a sandbox, then attaches by its id. Passes when attach throws
     * {@code SandboxNotFoundException}, or {@code AttachRefusedException} with a reason that starts
     * {@code state:}; fails when the attach succeeds (the sandbox is closed again first), when the reasons say
     * something else, or when anything else is thrown. Skipped without {@code Feature.ATTACH}.
     */
    @Test
    default void aClosedSandboxCannotBeAttached() {
        requireFeature(Capabilities.Feature.ATTACH);
        SandboxSpec spec = attachSpec();
        Sandbox s = runner().open(spec);
        String id = s.id();
        s.close();
        try {
            Sandbox back = runner().attach(id, spec);
            back.close();
            fail("attached to the closed sandbox " + id);
        } catch (SandboxNotFoundException e) {
            // gone from the provider
        } catch (AttachRefusedException e) {
            assertTrue(e.reasons().stream().anyMatch(r -> r.startsWith("state:")), e.reasons().toString());
        }
    }

    /**
     * On a runner that does not declare {@code Feature.ATTACH} (skipped on one that does):
     * {@code attach("any-id", ...)} must throw {@code AttachUnsupportedException}, and {@code detach()} on an
     * opened sandbox {@code UnsupportedOperationException}; fails otherwise.
     */
    @Test
    default void aRunnerThatCannotAttachSaysSo() {
        assumeFalse(runner().capabilities().supports(Capabilities.Feature.ATTACH),
                () -> runner().name() + " declares Feature.ATTACH; the other attach cases cover it");
        assertThrows(AttachUnsupportedException.class, () -> runner().attach("any-id", attachSpec()));
        try (Sandbox s = runner().open(SandboxSpec.defaults())) {
            assertThrows(UnsupportedOperationException.class, s::detach);
        }
    }
}
