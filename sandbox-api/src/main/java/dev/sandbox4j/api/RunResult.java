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

    /**
     * {@return a new builder: empty output, zero duration, teardown {@link Teardown#OPEN}; the status must be
     * set}
     */
    public static Builder builder() {
        return new Builder();
    }

    /** {@return a builder holding this result's values, to derive a changed result from} */
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

    /**
     * {@return standard output as kept (at most the execution's output limit), decoded as UTF-8; untrusted}
     */
    public String stdout() {
        return stdout;
    }

    /**
     * {@return standard error as kept; empty on runners that merge it into stdout (see the runner's
     * capabilities)}
     */
    public String stderr() {
        return stderr;
    }

    /**
     * {@return the process's exit code; empty when it was killed before exiting (timed out, output limit)}
     */
    public OptionalInt exitCode() {
        return exitCode == null ? OptionalInt.empty() : OptionalInt.of(exitCode);
    }

    /** {@return how the process ended} */
    public RunStatus status() {
        return status;
    }

    /** {@return true when the process exited on its own with code 0} */
    public boolean succeeded() {
        return status == RunStatus.EXITED && exitCode != null && exitCode == 0;
    }

    /** {@return true when more was written to stdout than {@link #stdout()} keeps} */
    public boolean stdoutTruncated() {
        return stdoutTruncated;
    }

    /** {@return true when more was written to stderr than {@link #stderr()} keeps} */
    public boolean stderrTruncated() {
        return stderrTruncated;
    }

    /** {@return how many bytes the code wrote to stdout in all (as far as it was read), kept or not} */
    public long stdoutBytes() {
        return stdoutBytes;
    }

    /** {@return how many bytes the code wrote to stderr in all (as far as it was read), kept or not} */
    public long stderrBytes() {
        return stderrBytes;
    }

    /** {@return the wall-clock time of the execution (not of sandbox creation)} */
    public Duration duration() {
        return duration;
    }

    /** {@return the provider the code ran on, e.g. {@code local} or {@code e2b}} */
    public String provider() {
        return provider;
    }

    /** {@return the provider's id of the sandbox the code ran in} */
    public String sandboxId() {
        return sandboxId;
    }

    /** {@return what became of the sandbox: {@link Teardown#OPEN} for a session still open} */
    public Teardown teardown() {
        return teardown;
    }

    /** {@return the tries it took to open the sandbox, the successful one last} */
    public List<Attempt> attempts() {
        return attempts;
    }

    /**
     * The files collected after the code ended ({@link Execution#collect()}), in the order of the globs and
     * then by path; each capped by {@link Execution#collectFileBytes()}. Untrusted content.
     *
     * @return the collected files; empty when none were asked for or none matched
     */
    public List<SandboxFile> files() {
        return files;
    }

    /**
     * {@return one line per glob or file that could not be collected (none matched, refused, a cap reached)}
     */
    public List<String> fileProblems() {
        return fileProblems;
    }

    /** {@return typed results of a code cell (E2B's code interpreter), in order; empty elsewhere} */
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

    /**
     * Builds a {@link RunResult}; runners and decorators use it, callers rarely need to.
     *
     * @since 0.1.0
     */
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

        /**
         * Sets standard output as kept. Default empty.
         *
         * @param stdout the text; not null
         * @return this builder
         */
        public Builder stdout(String stdout) {
            this.stdout = Objects.requireNonNull(stdout);
            return this;
        }

        /**
         * Sets standard error as kept. Default empty.
         *
         * @param stderr the text; not null
         * @return this builder
         */
        public Builder stderr(String stderr) {
            this.stderr = Objects.requireNonNull(stderr);
            return this;
        }

        /**
         * Sets the exit code. Default unset.
         *
         * @param exitCode the code, or null when the process was killed before exiting
         * @return this builder
         */
        public Builder exitCode(Integer exitCode) {
            this.exitCode = exitCode;
            return this;
        }

        /**
         * Sets how the process ended; required by {@link #build()}.
         *
         * @param status the status
         * @return this builder
         */
        public Builder status(RunStatus status) {
            this.status = status;
            return this;
        }

        /**
         * Sets whether stdout was cut at the output limit. Default false.
         *
         * @param v true when more was written than kept
         * @return this builder
         */
        public Builder stdoutTruncated(boolean v) {
            this.stdoutTruncated = v;
            return this;
        }

        /**
         * Sets whether stderr was cut at the output limit. Default false.
         *
         * @param v true when more was written than kept
         * @return this builder
         */
        public Builder stderrTruncated(boolean v) {
            this.stderrTruncated = v;
            return this;
        }

        /**
         * Sets how many bytes the code wrote to stdout in all. Default 0.
         *
         * @param v a byte count
         * @return this builder
         */
        public Builder stdoutBytes(long v) {
            this.stdoutBytes = v;
            return this;
        }

        /**
         * Sets how many bytes the code wrote to stderr in all. Default 0.
         *
         * @param v a byte count
         * @return this builder
         */
        public Builder stderrBytes(long v) {
            this.stderrBytes = v;
            return this;
        }

        /**
         * Sets the wall-clock time of the execution. Default zero.
         *
         * @param duration the time; not null
         * @return this builder
         */
        public Builder duration(Duration duration) {
            this.duration = Objects.requireNonNull(duration);
            return this;
        }

        /**
         * Sets the provider the code ran on. Default empty.
         *
         * @param provider e.g. {@code local}; not null
         * @return this builder
         */
        public Builder provider(String provider) {
            this.provider = Objects.requireNonNull(provider);
            return this;
        }

        /**
         * Sets the provider's id of the sandbox. Default empty.
         *
         * @param sandboxId the id; not null
         * @return this builder
         */
        public Builder sandboxId(String sandboxId) {
            this.sandboxId = Objects.requireNonNull(sandboxId);
            return this;
        }

        /**
         * Sets what became of the sandbox. Default {@link Teardown#OPEN}.
         *
         * @param teardown the outcome; not null
         * @return this builder
         */
        public Builder teardown(Teardown teardown) {
            this.teardown = Objects.requireNonNull(teardown);
            return this;
        }

        /**
         * Sets the tries it took to open the sandbox, the successful one last. Default none.
         *
         * @param attempts copied
         * @return this builder
         */
        public Builder attempts(List<Attempt> attempts) {
            this.attempts = List.copyOf(attempts);
            return this;
        }

        /**
         * Sets the collected files. Default none.
         *
         * @param files copied
         * @return this builder
         */
        public Builder files(List<SandboxFile> files) {
            this.files = List.copyOf(files);
            return this;
        }

        /**
         * Sets the lines naming what could not be collected. Default none.
         *
         * @param problems copied
         * @return this builder
         */
        public Builder fileProblems(List<String> problems) {
            this.fileProblems = List.copyOf(problems);
            return this;
        }

        /**
         * Sets the typed results of a code cell. Default none.
         *
         * @param results copied
         * @return this builder
         */
        public Builder richResults(List<RichResult> results) {
            this.richResults = List.copyOf(results);
            return this;
        }

        /**
         * Builds the result.
         *
         * @return the result
         * @throws NullPointerException when no status was set
         */
        public RunResult build() {
            return new RunResult(this);
        }
    }
}
