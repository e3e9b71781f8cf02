package dev.sandbox4j.spi;

import dev.sandbox4j.api.Execution;
import dev.sandbox4j.api.FileEntry;
import dev.sandbox4j.api.SandboxFile;
import dev.sandbox4j.api.InputFile;
import dev.sandbox4j.api.exception.SandboxException;
import dev.sandbox4j.policy.Capabilities;
import dev.sandbox4j.policy.EgressPolicy;
import java.util.List;
import dev.sandbox4j.spi.lifecycle.ManagedSandboxRunner;

/**
 * What an adapter implements: create, exec and destroy on one provider. Everything around them
 * (policy checks before any call, run ids, retries of create, lost-create recovery, the setup phase
 * and lock-down, one exec at a time, teardown with retries on its own deadline, interrupts, results)
 * is written once in {@link ManagedSandboxRunner}.
 *
 * <p>Methods throw {@link SandboxException} (mapped by status) for provider failures, and
 * {@link InterruptedException} when the calling thread is interrupted. They never log secrets.
 *
 * @param <H> the adapter's handle type
 *
 * @since 0.1.0
 */
public interface SandboxDriver<H extends SandboxHandle> extends AutoCloseable {

    /**
     * {@return the provider's short name: {@code local}, {@code e2b}, {@code daytona}, {@code vercel}, {@code
     * modal}}
     */
    String provider();

    /**
     * {@return what this provider enforces exactly; the lifecycle checks every spec against it before any
     * call}
     */
    Capabilities capabilities();

    /**
     * Creates the sandbox in one call carrying the whole {@link CreateRequest#initialEgress() policy},
     * the lifetime, env and labels (the run id among them). A failure whose outcome is unknown (timeout,
     * dropped connection, 5xx) must set {@link SandboxException#requestMayHaveSucceeded()}. An
     * {@code UnsupportedPolicyException} means nothing is left running; any other unchecked exception
     * is treated as an unknown outcome (the lifecycle looks the run id up and destroys what it finds).
     *
     * @param request the policy, lifetime, env, labels and run id of the sandbox
     * @return the handle of the created sandbox
     * @throws SandboxException when the provider fails, with {@code requestMayHaveSucceeded} set when the
     *     outcome is unknown
     * @throws InterruptedException when the calling thread is interrupted
     */
    H create(CreateRequest request) throws InterruptedException;

    /**
     * Finds sandboxes carrying this run id, after a create whose answer was lost. The default finds
     * nothing, for providers with no way to list.
     *
     * @param runId the run id the lost create carried as a label
     * @return the sandboxes found, usually none or one
     * @throws SandboxException when the lookup fails
     * @throws InterruptedException when the calling thread is interrupted
     */
    default List<H> findByRunId(String runId) throws InterruptedException {
        return List.of();
    }

    /**
     * How long after a create was sent the provider may still make it take effect (its own deadline
     * for a create, after the client stopped waiting). The lifecycle looks an ambiguous create up for
     * this long plus a margin, and never past the lifetime the create asked for.
     *
     * @return the provider's own create deadline; default 60 seconds
     */
    default java.time.Duration createDeadline() {
        return java.time.Duration.ofSeconds(60);
    }

    /**
     * Lists this library's sandboxes: those labelled with {@link CreateRequest#RUN_ID_LABEL} and, when
     * {@code owner} is not null, with {@link CreateRequest#OWNER_LABEL} equal to it. Each comes with
     * its labels as the provider reports them (run id, owner, expiry). Used by the orphan sweep. An
     * implementation checks the labels itself rather than trust the server's filter.
     *
     * @param owner the owner label's value to match, or null for every owner
     * @return the sandboxes found, each with its labels
     * @throws SandboxException when the listing fails
     * @throws InterruptedException when the calling thread is interrupted
     * @throws UnsupportedOperationException when the provider cannot list
     */
    default List<Labelled<H>> listLabelled(String owner) throws InterruptedException {
        throw new UnsupportedOperationException(provider() + " cannot list its sandboxes");
    }

    /**
     * Looks one sandbox up by the provider's id for {@link ManagedSandboxRunner#attach}, with its labels
     * and state as the provider reports them and, where the provider reports the sandbox's egress (or
     * lifetime), how it differs from what a create for {@code expected} would send
     * ({@link Attachable.Builder#compare}). Read-only: changes nothing on the sandbox. The handle may be
     * released ({@link #release}) without a destroy when the lifecycle refuses it. Declare
     * {@code Feature.ATTACH} when implemented.
     *
     * @param sandboxId the provider's id
     * @param expected the spec the caller expects (its env feeds later execs on providers that set env per command)
     * @return what was found
     * @throws dev.sandbox4j.api.exception.SandboxNotFoundException when the provider knows no such sandbox
     * @throws InterruptedException when the calling thread is interrupted
     */
    default Attachable<H> attach(String sandboxId, dev.sandbox4j.api.SandboxSpec expected) throws InterruptedException {
        throw new UnsupportedOperationException(provider() + " cannot attach to a sandbox by id");
    }

    /**
     * Called once when the lifecycle is done with a handle (after teardown, whatever its outcome):
     * release anything registered for this sandbox on shared objects (redaction entries, caches).
     *
     * @param sandbox the handle, never used again afterwards
     */
    default void release(H sandbox) {
    }

    /**
     * Writes input files into the sandbox's working directory. Called only when the spec has files.
     *
     * @param sandbox the sandbox, before any setup command or code runs
     * @param files the files, their paths already checked
     * @throws SandboxException when a write fails
     * @throws InterruptedException when the calling thread is interrupted
     * @throws UnsupportedOperationException by default, for providers that cannot write files
     */
    default void writeFiles(H sandbox, List<InputFile> files) throws InterruptedException {
        throw new UnsupportedOperationException(provider() + " does not support input files");
    }

    /**
     * Reads one file the code wrote, keeping at most {@code maxBytes} (never holding more in memory),
     * with the size the file has in the sandbox. {@code path} is already normalised by
     * {@link dev.sandbox4j.api.SandboxPaths#normalize} (relative, no {@code ..}). Where the files sit on
     * this host, no symbolic link may be followed; on a hosted provider, confine as far as its API allows.
     * Throws a {@link SandboxException} when the file is missing or refused. Declare
     * {@code Feature.READ_FILES} when implemented.
     *
     * @param sandbox the sandbox
     * @param path the normalised path
     * @param maxBytes the most bytes kept
     * @return the file, its size in the sandbox and the bytes kept
     * @throws InterruptedException when the calling thread is interrupted
     * @throws UnsupportedOperationException by default
     */
    default SandboxFile readFile(H sandbox, String path, long maxBytes) throws InterruptedException {
        throw new UnsupportedOperationException(provider() + " cannot read files back");
    }

    /**
     * Lists one directory (normalised path, {@code ""} for the working directory), symbolic links
     * reported as {@link FileEntry.Type#SYMLINK} and not followed. Declare {@code Feature.LIST_FILES}
     * when implemented.
     *
     * @param sandbox the sandbox
     * @param directory the normalised path; {@code ""} for the working directory
     * @return the entries, sorted by name
     * @throws SandboxException when the directory is missing or refused
     * @throws InterruptedException when the calling thread is interrupted
     * @throws UnsupportedOperationException by default
     */
    default List<FileEntry> listFiles(H sandbox, String directory) throws InterruptedException {
        throw new UnsupportedOperationException(provider() + " cannot list files");
    }

    /**
     * Replaces the sandbox's egress on the live sandbox (the lock-down after trusted setup). Declare {@code
     * Egress.LIVE_UPDATE} when implemented.
     *
     * @param sandbox the sandbox
     * @param egress the policy that replaces the current one
     * @throws SandboxException when the update fails; the lifecycle then tears the sandbox down
     * @throws InterruptedException when the calling thread is interrupted
     * @throws UnsupportedOperationException by default
     */
    default void updateEgress(H sandbox, EgressPolicy egress) throws InterruptedException {
        throw new UnsupportedOperationException(provider() + " cannot change egress on a live sandbox");
    }

    /**
     * Whether this driver runs {@code execution} as the sandbox's own first process, for a one-shot
     * {@link ManagedSandboxRunner#run run} (no session needed): the lifecycle then
     * {@linkplain #create creates} the sandbox with the execution in the request
     * ({@link CreateRequest#firstProcess()}), and the one {@link #exec} on that handle starts the sandbox
     * with it and streams its output, keeping the budget, output cap and interrupt contract of any exec.
     * Asked only when the spec has no input files, no setup commands and no lock-down (nothing runs
     * between the create and the code). Such a create must not start anything that runs code: it is
     * retried and looked up by run id exactly as any create, so a sandbox it made that was never started
     * ran nothing; the start is sent once, and a lost answer to it counts as code that may have run. The
     * default says no.
     *
     * @param spec the one-shot's spec (its default lifetime applied)
     * @param execution the one-shot's execution
     * @return true when this driver runs it as the first process
     * @since 0.1.0
     */
    default boolean runsAsFirstProcess(dev.sandbox4j.api.SandboxSpec spec, Execution execution) {
        return false;
    }

    /**
     * Runs one command, pushing output into {@code sink} as it arrives. Enforces the budget (TIMED_OUT
     * with partial output kept) and, when the sink returns false, stops reading and kills the command
     * (OUTPUT_LIMIT). On interrupt it kills the command if it can and throws InterruptedException.
     *
     * @param sandbox the sandbox
     * @param execution the code, its budget and output limits
     * @param sink where the output goes as it arrives
     * @return how the command ended
     * @throws SandboxException when the infrastructure fails
     * @throws InterruptedException when the calling thread is interrupted
     */
    ExecOutcome exec(H sandbox, Execution execution, OutputSink sink) throws InterruptedException;

    /**
     * Destroys the sandbox once. Returns {@code true} if it was destroyed, {@code false} if the
     * provider says it was already gone. Throws a retriable SandboxException for failures worth
     * another try (409, 5xx, IO); the lifecycle retries until its teardown deadline.
     *
     * @param sandbox the sandbox
     * @return true when destroyed, false when already gone
     * @throws SandboxException when the destroy failed, retriable when worth another try
     * @throws InterruptedException when the calling thread is interrupted
     */
    boolean destroy(H sandbox) throws InterruptedException;

    /**
     * The languages whose interpreter {@code sandbox}'s image has, found in one call where the provider
     * can answer for all of them at once (for example one {@code command -v} exec), for {@code
     * RunnerBuilder.probeLanguages}. Empty (the default) lets the lifecycle run one small program per
     * language through {@link #exec} instead. Called once per runner, on a deny-all sandbox the
     * lifecycle opened for it and tears down after.
     *
     * @param sandbox the probe's sandbox
     * @return the languages found, or empty to let the lifecycle probe
     * @throws InterruptedException when interrupted
     */
    default java.util.Optional<java.util.Set<dev.sandbox4j.policy.Language>> probeLanguages(H sandbox)
            throws InterruptedException {
        return java.util.Optional.empty();
    }

    /** Releases client resources. */
    @Override
    default void close() {
    }
}
