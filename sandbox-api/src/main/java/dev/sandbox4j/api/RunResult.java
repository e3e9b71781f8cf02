package dev.sandbox4j.api;

import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.OptionalInt;

/**
 * What the code did: its output (truncated, UTF-8 safe, to be treated as untrusted data), exit code
 * and status, plus where and how it ran and what became of the sandbox.
 *
 * @since 0.1.0
 */
public final class RunResult {
    private final String stdout;
    private final String stderr;
    private final Integer exitCode;
    private final RunStatus status;
    private final boolean stdoutTruncated;
    private final boolean stderrTruncated;
    private final long stdoutBytes;
    private final long stderrBytes;
    private final Duration duration;
    private final String provider;
    private final String sandboxId;
    private final Teardown teardown;
    private final List<Attempt> attempts;
    private final List<SandboxFile> files;
    private final List<String> fileProblems;
    private final List<RichResult> richResults;

    private RunResult(Builder b) {
        this.stdout = b.stdout;
        this.stderr = b.stderr;
        this.exitCode = b.exitCode;
        this.status = Objects.requireNonNull(b.status, "status");
        this.stdoutTruncated = b.stdoutTruncated;
        this.stderrTruncated = b.stderrTruncated;
        this.stdoutBytes = b.stdoutBytes;
        this.stderrBytes = b.stderrBytes;
        this.duration = b.duration;
        this.provider = b.provider;
        this.sandboxId = b.sandboxId;
        this.teardown = b.teardown;
        this.attempts = List.copyOf(b.attempts);
        this.files = List.copyOf(b.files);
        this.fileProblems = List.copyOf(b.fileProblems);
        this.richResults = List.copyOf(b.richResults);
    }

    public static Builder builder() {
        return new Builder();
    }

    public Builder toBuilder() {
        Builder b = new Builder();
        b.stdout = stdout;
        b.stderr = stderr;
        b.exitCode = exitCode;
        b.status = status;
        b.stdoutTruncated = stdoutTruncated;
        b.stderrTruncated = stderrTruncated;
        b.stdoutBytes = stdoutBytes;
        b.stderrBytes = stderrBytes;
        b.duration = duration;
        b.provider = provider;
        b.sandboxId = sandboxId;
        b.teardown = teardown;
        b.attempts = attempts;
        b.files = files;
        b.fileProblems = fileProblems;
        b.richResults = richResults;
        return b;
    }

    /** Standard output as kept (at most the execution's output limit). Untrusted. */
    public String stdout() {
        return stdout;
    }

    /** Standard error as kept. Empty on runners that merge it into stdout (see the runner's capabilities). */
    public String stderr() {
        return stderr;
    }

    /** The process's exit code; empty when it was killed before exiting (timed out, output limit). */
    public OptionalInt exitCode() {
        return exitCode == null ? OptionalInt.empty() : OptionalInt.of(exitCode);
    }

    public RunStatus status() {
        return status;
    }

    /** Exited with code 0. */
    public boolean succeeded() {
        return status == RunStatus.EXITED && exitCode != null && exitCode == 0;
    }

    public boolean stdoutTruncated() {
        return stdoutTruncated;
    }

    public boolean stderrTruncated() {
        return stderrTruncated;
    }

    /** How many bytes the code wrote to stdout in all (as far as it was read). */
    public long stdoutBytes() {
        return stdoutBytes;
    }

    public long stderrBytes() {
        return stderrBytes;
    }

    /** Wall-clock time of the execution (not of sandbox creation). */
    public Duration duration() {
        return duration;
    }

    public String provider() {
        return provider;
    }

    public String sandboxId() {
        return sandboxId;
    }

    public Teardown teardown() {
        return teardown;
    }

    /** The tries it took to open the sandbox, the successful one last. */
    public List<Attempt> attempts() {
        return attempts;
    }

    /**
     * The files collected after the code ended ({@link Execution#collect()}), in the order of the globs
     * and then by path; each capped by {@link Execution#collectFileBytes()}. Untrusted content.
     */
    public List<SandboxFile> files() {
        return files;
    }

    /** One line per glob or file that could not be collected (none matched, refused, a cap reached). */
    public List<String> fileProblems() {
        return fileProblems;
    }

    /** Typed results of a code cell (E2B's code interpreter), in order; empty elsewhere. */
    public List<RichResult> richResults() {
        return richResults;
    }

    @Override
    public String toString() {
        return "RunResult[status=" + status + ", exitCode=" + exitCode
                + ", stdout=" + stdout.length() + " chars" + (stdoutTruncated ? " (truncated from " + stdoutBytes + " bytes)" : "")
                + ", stderr=" + stderr.length() + " chars" + (stderrTruncated ? " (truncated from " + stderrBytes + " bytes)" : "")
                + ", duration=" + duration.toMillis() + " ms, provider=" + provider + ", sandboxId=" + sandboxId
                + ", teardown=" + teardown + (files.isEmpty() ? "" : ", files=" + files) + "]";
    }

    public static final class Builder {
        private String stdout = "";
        private String stderr = "";
        private Integer exitCode;
        private RunStatus status;
        private boolean stdoutTruncated;
        private boolean stderrTruncated;
        private long stdoutBytes;
        private long stderrBytes;
        private Duration duration = Duration.ZERO;
        private String provider = "";
        private String sandboxId = "";
        private Teardown teardown = Teardown.OPEN;
        private List<Attempt> attempts = List.of();
        private List<SandboxFile> files = List.of();
        private List<String> fileProblems = List.of();
        private List<RichResult> richResults = List.of();

        private Builder() {
        }

        public Builder stdout(String stdout) {
            this.stdout = Objects.requireNonNull(stdout);
            return this;
        }

        public Builder stderr(String stderr) {
            this.stderr = Objects.requireNonNull(stderr);
            return this;
        }

        public Builder exitCode(Integer exitCode) {
            this.exitCode = exitCode;
            return this;
        }

        public Builder status(RunStatus status) {
            this.status = status;
            return this;
        }

        public Builder stdoutTruncated(boolean v) {
            this.stdoutTruncated = v;
            return this;
        }

        public Builder stderrTruncated(boolean v) {
            this.stderrTruncated = v;
            return this;
        }

        public Builder stdoutBytes(long v) {
            this.stdoutBytes = v;
            return this;
        }

        public Builder stderrBytes(long v) {
            this.stderrBytes = v;
            return this;
        }

        public Builder duration(Duration duration) {
            this.duration = Objects.requireNonNull(duration);
            return this;
        }

        public Builder provider(String provider) {
            this.provider = Objects.requireNonNull(provider);
            return this;
        }

        public Builder sandboxId(String sandboxId) {
            this.sandboxId = Objects.requireNonNull(sandboxId);
            return this;
        }

        public Builder teardown(Teardown teardown) {
            this.teardown = Objects.requireNonNull(teardown);
            return this;
        }

        public Builder attempts(List<Attempt> attempts) {
            this.attempts = List.copyOf(attempts);
            return this;
        }

        public Builder files(List<SandboxFile> files) {
            this.files = List.copyOf(files);
            return this;
        }

        public Builder fileProblems(List<String> problems) {
            this.fileProblems = List.copyOf(problems);
            return this;
        }

        public Builder richResults(List<RichResult> results) {
            this.richResults = List.copyOf(results);
            return this;
        }

        public RunResult build() {
            return new RunResult(this);
        }
    }
}
