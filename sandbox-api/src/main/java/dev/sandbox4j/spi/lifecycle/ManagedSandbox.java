package dev.sandbox4j.spi.lifecycle;

import dev.sandbox4j.api.Attempt;
import dev.sandbox4j.api.Execution;
import dev.sandbox4j.api.FileEntry;
import dev.sandbox4j.api.RunResult;
import dev.sandbox4j.api.RunStatus;
import dev.sandbox4j.api.Sandbox;
import dev.sandbox4j.api.SandboxFile;
import dev.sandbox4j.api.SandboxPaths;
import dev.sandbox4j.api.Teardown;
import dev.sandbox4j.policy.Capabilities;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.locks.ReentrantLock;
import dev.sandbox4j.spi.ExecOutcome;
import dev.sandbox4j.spi.OutputLimiter;
import dev.sandbox4j.spi.OutputSink;
import dev.sandbox4j.spi.SandboxDriver;
import dev.sandbox4j.spi.SandboxHandle;

/** One sandbox of {@link ManagedSandboxRunner}: one exec at a time, results, close and detach. */
final class ManagedSandbox<H extends SandboxHandle> implements Sandbox {
    /** What one exec produced, before it becomes a {@link RunResult}. */
    static final class Ran {
        final Execution execution;
        final OutputSink sink;
        final ExecOutcome outcome;
        final Duration duration;
        final FileCollector.Collected files;

        Ran(Execution execution, OutputSink sink, ExecOutcome outcome, Duration duration, FileCollector.Collected files) {
            this.execution = execution;
            this.sink = sink;
            this.outcome = outcome;
            this.duration = duration;
            this.files = files;
        }

        RunStatus status() {
            return sink.capped() ? RunStatus.OUTPUT_LIMIT : outcome.status();
        }
    }

    private interface Lookup<T> {
        T get() throws InterruptedException;
    }

    private final H handle;
    private final String runId;
    private final List<Attempt> attempts;
    private final ManagedSandboxRunner<H> runner;
    private final SandboxDriver<H> driver;
    // shared by every object for this sandbox in the JVM (an attach of an open one among them)
    private final SandboxLocks.Lock execLock;
    private final ReentrantLock closeLock = new ReentrantLock(); // held across the teardown's HTTP calls
    private volatile boolean closed;
    private volatile Teardown teardown = Teardown.OPEN;

    ManagedSandbox(ManagedSandboxRunner<H> runner, H handle, String runId, List<Attempt> attempts, SandboxLocks.Lock lock) {
        this.runner = runner;
        this.driver = runner.driver();
        this.execLock = lock;
        this.handle = handle;
        this.runId = runId;
        this.attempts = List.copyOf(attempts);
    }

    @Override
    public String id() {
        return handle.id();
    }

    /** {@return the driver's handle, for the language probe} */
    H handle() {
        return handle;
    }

    @Override
    public String provider() {
        return runner.name();
    }

    @Override
    public String runId() {
        return runId;
    }

    @Override
    public List<Attempt> attempts() {
        return attempts;
    }

    @Override
    public RunResult exec(Execution execution) {
        return result(execute(execution));
    }

    /** Runs one execution; the result is built from what it returns, once. */
    Ran execute(Execution execution) {
        return runner.observed().exec(() -> executeUnobserved(execution), Ran::status);
    }

    private Ran executeUnobserved(Execution execution) {
        Objects.requireNonNull(execution, "execution");
        ensureOpen();
        try {
            execLock.lockInterruptibly();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw runner.interrupted("interrupted while waiting for the previous exec", false);
        }
        try {
            ensureOpen();
            runner.checkLanguage(execution.language());
            if (!execution.collect().isEmpty()) {
                FileCollector.check(runner.capabilities(), execution.collect());
            }
            OutputSink sink = new OutputSink(execution);
            long t0 = System.nanoTime();
            ExecOutcome outcome;
            FileCollector.Collected files = FileCollector.Collected.NONE;
            try {
                try {
                    outcome = driver.exec(handle, execution, sink);
                } finally {
                    sink.finish(); // the listener gets the last characters, on an interrupt too
                }
                Duration ran = ManagedSandboxRunner.since(t0);
                if (!execution.collect().isEmpty()) {
                    // before any teardown: a one-shot run closes only after this returns
                    files = new FileCollector(new FileCollector.Source() {
                        @Override
                        public SandboxFile read(String path, long maxBytes) throws InterruptedException {
                            return driver.readFile(handle, path, maxBytes);
                        }

                        @Override
                        public List<FileEntry> list(String directory) throws InterruptedException {
                            return driver.listFiles(handle, directory);
                        }
                    }, execution).collect();
                }
                return new Ran(execution, sink, outcome, ran, files);
            } catch (InterruptedException e) {
                close();
                Thread.currentThread().interrupt();
                boolean gone = teardown != Teardown.FAILED;
                throw runner.interrupted("interrupted during exec; sandbox " + handle.id() + " torn down: " + teardown
                        + (gone ? "" : ManagedSandboxRunner.leftNote(runId)), true, sink.partial()).attachRunId(runId, !gone);
            }
        } finally {
            execLock.unlock();
        }
    }

    @Override
    public SandboxFile readFile(String path, long maxBytes) {
        if (!runner.capabilities().supports(Capabilities.Feature.READ_FILES)) {
            throw new UnsupportedOperationException(runner.name() + " cannot read files back");
        }
        if (maxBytes < 0) {
            throw new IllegalArgumentException("maxBytes must not be negative, was " + maxBytes);
        }
        String p = SandboxPaths.normalize(path);
        if (p.isEmpty()) {
            throw new IllegalArgumentException("path names the working directory, not a file");
        }
        return underLock(() -> driver.readFile(handle, p, maxBytes), "reading " + p);
    }

    @Override
    public List<FileEntry> listFiles(String directory) {
        if (!runner.capabilities().supports(Capabilities.Feature.LIST_FILES)) {
            throw new UnsupportedOperationException(runner.name() + " cannot list files");
        }
        String p = SandboxPaths.normalize(directory);
        return underLock(() -> driver.listFiles(handle, p), "listing " + (p.isEmpty() ? "." : p));
    }

    /** A file call: one at a time with exec, on an open sandbox; an interrupt leaves the sandbox open. */
    private <T> T underLock(Lookup<T> call, String what) {
        ensureOpen();
        try {
            execLock.lockInterruptibly();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw runner.interrupted("interrupted while waiting for the previous exec", false);
        }
        try {
            ensureOpen();
            return call.get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw runner.interrupted("interrupted while " + what + " in sandbox " + handle.id(), false);
        } finally {
            execLock.unlock();
        }
    }

    RunResult result(Ran ran) {
        return result(ran.execution, ran.sink, ran.outcome, ran.duration, ran.files);
    }

    private RunResult result(Execution execution, OutputSink sink, ExecOutcome outcome, Duration duration,
            FileCollector.Collected files) {
        OutputLimiter out = sink.stdoutLimiter();
        OutputLimiter err = sink.stderrLimiter();
        String stdout = out.text();
        String stderr = err.text();
        if (execution.stripControlCharacters()) {
            stdout = OutputLimiter.stripControlCharacters(stdout);
            stderr = OutputLimiter.stripControlCharacters(stderr);
        }
        return RunResult.builder()
                .stdout(stdout).stderr(stderr)
                .stdoutTruncated(out.truncated()).stderrTruncated(err.truncated())
                .stdoutBytes(out.totalBytes()).stderrBytes(err.totalBytes())
                .status(sink.capped() ? RunStatus.OUTPUT_LIMIT : outcome.status())
                .exitCode(outcome.exitCode())
                .duration(duration)
                .provider(runner.name())
                .sandboxId(handle.id())
                .teardown(teardown)
                .attempts(attempts)
                .files(files.files())
                .fileProblems(files.problems())
                .richResults(sink.results())
                .build();
    }

    private void ensureOpen() {
        if (closed) {
            throw new IllegalStateException("sandbox " + handle.id() + " is closed (" + teardown + ")");
        }
    }

    @Override
    public boolean isClosed() {
        return closed;
    }

    @Override
    public Teardown teardown() {
        return teardown;
    }

    @Override
    public void close() {
        closeLock.lock();
        try {
            if (closed) {
                return;
            }
            closed = true;
            teardown = runner.finish(handle, runId);
            execLock.release();
            runner.untrack(this);
        } finally {
            closeLock.unlock();
        }
    }

    /** Released without a destroy, after a running exec (which holds the exec lock) ends. */
    @Override
    public void detach() {
        if (!runner.capabilities().supports(Capabilities.Feature.ATTACH)) {
            throw new UnsupportedOperationException(runner.name() + " cannot attach by id, so it cannot detach either");
        }
        execLock.lock();
        try {
            closeLock.lock();
            try {
                if (closed) {
                    return;
                }
                closed = true;
                teardown = Teardown.DETACHED;
                driver.release(handle);
                execLock.release();
                runner.untrack(this);
            } finally {
                closeLock.unlock();
            }
        } finally {
            execLock.unlock();
        }
    }

    @Override
    public String toString() {
        return "Sandbox[" + runner.name() + " " + handle.id() + ", run id " + runId + ", " + teardown + "]";
    }
}
