package dev.sandbox4j.api;

import dev.sandbox4j.policy.Capabilities;
import dev.sandbox4j.api.exception.AttachRefusedException;
import dev.sandbox4j.api.exception.AttachUnsupportedException;
import dev.sandbox4j.api.exception.SandboxException;
import dev.sandbox4j.api.exception.SandboxNotFoundException;

/**
 * Creates sandboxes on one provider (or, for decorators, on several). Thread-safe.
 *
 * <pre>{@code
 * try (SandboxRunner runner = SandboxRunners.local()) {
 *     RunResult r = runner.run(RunRequest.python("print(6 * 7)"));
 *     System.out.println(r.stdout());
 * }
 * }</pre>
 *
 * @since 0.1.0
 */
public interface SandboxRunner extends AutoCloseable {
    /** {@return a short name such as {@code local}, {@code e2b}, or a decorator's description} */
    String name();

    /** {@return what this runner enforces exactly and what it can do} */
    Capabilities capabilities();

    /**
     * Creates a sandbox with the spec's egress, limits, files and setup applied before it returns.
     *
     * @param spec the sandbox's egress, limits, files, environment and setup
     * @return the open sandbox; close it
     * @throws dev.sandbox4j.policy.UnsupportedPolicyException before any network call when a rule
     *         cannot be enforced exactly
     * @throws SandboxException when the provider fails; nothing is left running
     */
    Sandbox open(SandboxSpec spec);

    /**
     * Attaches to a sandbox created earlier by this library on the same provider (by this process or
     * another replica), for a session that spans requests. Before it returns it checks that the sandbox
     * carries this library's run-id label (and the runner's owner label, when the runner has an owner),
     * that it is still running, and that the policy recorded at its create (egress and lifetime) equals
     * {@code expected}'s; where the provider reports the sandbox's egress, that is read back and compared
     * too. A mismatch is refused and the sandbox left alone. The returned sandbox's {@code close()}
     * destroys it; {@link Sandbox#detach()} releases it for the next holder. Execs through sandboxes
     * attached in one JVM never interleave; another process using it at the same time is the caller's
     * business.
     *
     * @param sandboxId the provider's id, as {@link Sandbox#id()} returned it
     * @param expected the spec the sandbox was opened with (its env is used for later execs where the
     *        provider sets env per command)
     * @return the attached sandbox
     * @throws AttachUnsupportedException when the runner cannot attach ({@code Feature.ATTACH})
     * @throws AttachRefusedException when a check fails; nothing was changed
     * @throws SandboxNotFoundException when the provider knows no such sandbox
     * @throws SandboxException when the provider fails
     */
    default Sandbox attach(String sandboxId, SandboxSpec expected) {
        throw new AttachUnsupportedException(name(), "it does not declare Feature.ATTACH");
    }

    /**
     * Opens a sandbox, runs one execution, and always tears the sandbox down. Unless the spec sets a
     * lifetime, the sandbox's lifetime is the setup budgets plus the execution budget plus
     * {@link SandboxSpec#LIFETIME_MARGIN}, so the provider's own clock kills what a crashed client
     * leaves behind. The result's {@link RunResult#teardown()} says how the teardown went.
     *
     * @param request the sandbox spec and the execution
     * @return what the code did, with the teardown's outcome
     * @throws dev.sandbox4j.policy.UnsupportedPolicyException before any network call when a rule cannot be
     *     enforced exactly
     * @throws SandboxException when the infrastructure fails; the sandbox is torn down
     */
    default RunResult run(RunRequest request) {
        Sandbox sandbox = open(request.oneShotSpec());
        RunResult result;
        try {
            result = sandbox.exec(request.execution());
        } finally {
            sandbox.close();
        }
        return result.toBuilder().teardown(sandbox.teardown()).build();
    }

    /**
     * What the lifecycle did off the caller's path: ambiguous creates looked up by run id in the
     * background, late creates found and destroyed, searches that ended without proof, failed
     * teardowns. Runners with no such work (the local runner) report {@link LifecycleStats#EMPTY}.
     *
     * @return a snapshot of the counts since the runner was built
     */
    default LifecycleStats lifecycleStats() {
        return LifecycleStats.EMPTY;
    }

    /**
     * Lists this library's sandboxes on the provider and destroys those the request matches (see
     * {@link SweepRequest}): orphans of a crashed process, sandboxes whose teardown failed, run ids a
     * failed create left unresolved. Blocking; interrupts are deferred to the end, as in teardown.
     *
     * @param request which of this library's sandboxes to destroy
     * @return what was listed, destroyed, found gone or failed
     * @throws UnsupportedOperationException when the provider offers no listing
     * @throws IllegalStateException when the request needs an owner and the runner has none
     * @throws SandboxException when the listing fails
     */
    default SweepResult sweep(SweepRequest request) {
        throw new UnsupportedOperationException(name() + " cannot list its sandboxes, so it cannot sweep");
    }

    /**
     * Refuses new work from then on ({@code open}, {@code run}, {@code attach} and {@code sweep} throw
     * {@link IllegalStateException}), tears down the sandboxes it opened or attached that are still open
     * (a {@link Sandbox#detach() detached} one is left to whoever attaches it), then releases client
     * resources (connection pools, threads). A runner with opens still under way (their creates in flight)
     * or ambiguous creates still being looked up waits a bounded time for them first. Idempotent. Every runner of this library and every decorator does this;
     * this default does nothing, for runners that hold nothing.
     */
    @Override
    default void close() {
    }
}
