package dev.sandbox4j.api;

import dev.sandbox4j.policy.Language;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Objects;

/**
 * One piece of untrusted code to run in a sandbox: the code, its language, its budget (the
 * per-command clock) and how much of its output to keep.
 *
 * <p>The code reaches the interpreter byte for byte: it is passed as an argument vector
 * ({@code python3 -c CODE}) or as an uploaded file run by a fixed command, never through a shell
 * string.
 *
 * @since 0.1.0
 */
public final class Execution {
    /** 20,000 characters per stream. */
    public static final int DEFAULT_OUTPUT_LIMIT = 20_000;
    /** Reading stops and the command is killed once a stream has produced this many bytes. */
    public static final long DEFAULT_HARD_CAP_BYTES = 64L * 1024 * 1024;
    public static final Duration DEFAULT_BUDGET = Duration.ofSeconds(60);
    /** Bytes kept per collected file: 10 MiB; the rest of a larger file is cut (its size is still reported). */
    public static final long DEFAULT_COLLECT_FILE_BYTES = 10L * 1024 * 1024;
    /** Bytes kept over all files collected by one execution: 32 MiB. */
    public static final long DEFAULT_COLLECT_TOTAL_BYTES = 32L * 1024 * 1024;
    /** Files collected by one execution at most: 100. */
    public static final int DEFAULT_COLLECT_MAX_FILES = 100;

    private final String code;
    private final Language language;
    private final Duration budget;
    private final int outputLimit;
    private final long hardCapBytes;
    private final boolean stripControlCharacters;
    private final List<String> collect;
    private final long collectFileBytes;
    private final long collectTotalBytes;
    private final int collectMaxFiles;
    private final OutputListener listener;

    private Execution(Builder b) {
        this.code = b.code;
        this.language = b.language;
        this.budget = b.budget;
        this.outputLimit = b.outputLimit;
        this.hardCapBytes = b.hardCapBytes;
        this.stripControlCharacters = b.stripControlCharacters;
        this.collect = List.copyOf(b.collect);
        this.collectFileBytes = b.collectFileBytes;
        this.collectTotalBytes = b.collectTotalBytes;
        this.collectMaxFiles = b.collectMaxFiles;
        this.listener = b.listener;
    }

    public static Builder builder(String code) {
        return new Builder(code);
    }

    /** Python code with the default budget and output limit. */
    public static Execution python(String code) {
        return builder(code).build();
    }

    public static Execution of(Language language, String code) {
        return builder(code).language(language).build();
    }

    public Builder toBuilder() {
        return new Builder(code).language(language).budget(budget).outputLimit(outputLimit)
                .hardCapBytes(hardCapBytes).stripControlCharacters(stripControlCharacters).collect(collect)
                .collectFileBytes(collectFileBytes).collectTotalBytes(collectTotalBytes).collectMaxFiles(collectMaxFiles)
                .listener(listener);
    }

    public String code() {
        return code;
    }

    public Language language() {
        return language;
    }

    /** Wall-clock time the code may run before it is killed and the result is {@code TIMED_OUT}. */
    public Duration budget() {
        return budget;
    }

    /** Characters kept per stream; the rest is counted and dropped. */
    public int outputLimit() {
        return outputLimit;
    }

    /** Bytes per stream after which reading stops and the command is killed ({@code OUTPUT_LIMIT}). */
    public long hardCapBytes() {
        return hardCapBytes;
    }

    /** Remove control characters (except newline, tab and carriage return) from the kept output. */
    public boolean stripControlCharacters() {
        return stripControlCharacters;
    }

    /**
     * Paths or globs (relative to the working directory; {@code *}, {@code ?}, {@code **}) whose files are
     * read back after the code ends, before a one-shot run's teardown, into {@link RunResult#files()}.
     */
    public List<String> collect() {
        return collect;
    }

    /** Bytes kept per collected file. Default {@link #DEFAULT_COLLECT_FILE_BYTES}. */
    public long collectFileBytes() {
        return collectFileBytes;
    }

    /** Bytes kept over all collected files. Default {@link #DEFAULT_COLLECT_TOTAL_BYTES}. */
    public long collectTotalBytes() {
        return collectTotalBytes;
    }

    /** Files collected at most. Default {@link #DEFAULT_COLLECT_MAX_FILES}. */
    public int collectMaxFiles() {
        return collectMaxFiles;
    }

    /** The listener output is streamed to as it arrives, if any. */
    public java.util.Optional<OutputListener> listener() {
        return java.util.Optional.ofNullable(listener);
    }

    @Override
    public String toString() {
        return "Execution[" + language.id() + ", " + code.length() + " chars, budget=" + budget
                + ", outputLimit=" + outputLimit + (collect.isEmpty() ? "" : ", collect=" + collect) + "]";
    }

    public static final class Builder {
        private final String code;
        private Language language = Language.PYTHON;
        private Duration budget = DEFAULT_BUDGET;
        private int outputLimit = DEFAULT_OUTPUT_LIMIT;
        private long hardCapBytes = DEFAULT_HARD_CAP_BYTES;
        private boolean stripControlCharacters;
        private final List<String> collect = new ArrayList<>();
        private long collectFileBytes = DEFAULT_COLLECT_FILE_BYTES;
        private long collectTotalBytes = DEFAULT_COLLECT_TOTAL_BYTES;
        private int collectMaxFiles = DEFAULT_COLLECT_MAX_FILES;
        private OutputListener listener;

        private Builder(String code) {
            this.code = Objects.requireNonNull(code, "code");
        }

        public Builder language(Language language) {
            this.language = Objects.requireNonNull(language, "language");
            return this;
        }

        public Builder budget(Duration budget) {
            if (budget == null || budget.isNegative() || budget.isZero()) {
                throw new IllegalArgumentException("budget must be positive, was " + budget);
            }
            this.budget = budget;
            return this;
        }

        public Builder outputLimit(int chars) {
            if (chars < 0) {
                throw new IllegalArgumentException("outputLimit must not be negative, was " + chars);
            }
            this.outputLimit = chars;
            return this;
        }

        public Builder hardCapBytes(long bytes) {
            if (bytes <= 0) {
                throw new IllegalArgumentException("hardCapBytes must be positive, was " + bytes);
            }
            this.hardCapBytes = bytes;
            return this;
        }

        public Builder stripControlCharacters(boolean strip) {
            this.stripControlCharacters = strip;
            return this;
        }

        /** Adds a path or glob to collect; checked like a path (no {@code ..}, not absolute). */
        public Builder collect(String glob) {
            SandboxPaths.glob(glob);
            collect.add(SandboxPaths.normalize(glob));
            return this;
        }

        /** Adds paths or globs to collect. */
        public Builder collect(Collection<String> globs) {
            globs.forEach(this::collect);
            return this;
        }

        public Builder collectFileBytes(long bytes) {
            if (bytes < 0) {
                throw new IllegalArgumentException("collectFileBytes must not be negative, was " + bytes);
            }
            this.collectFileBytes = bytes;
            return this;
        }

        public Builder collectTotalBytes(long bytes) {
            if (bytes < 0) {
                throw new IllegalArgumentException("collectTotalBytes must not be negative, was " + bytes);
            }
            this.collectTotalBytes = bytes;
            return this;
        }

        public Builder collectMaxFiles(int n) {
            if (n < 0) {
                throw new IllegalArgumentException("collectMaxFiles must not be negative, was " + n);
            }
            this.collectMaxFiles = n;
            return this;
        }

        /** Streams output to {@code listener} as it arrives (see {@link OutputListener}); null for none. */
        public Builder listener(OutputListener listener) {
            this.listener = listener;
            return this;
        }

        public Execution build() {
            return new Execution(this);
        }
    }
}
