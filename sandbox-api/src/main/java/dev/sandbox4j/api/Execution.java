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
    /** Wall-clock time an execution may run by default: 60 seconds. */
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

    /**
     * Starts an execution of {@code code}: Python, with the default budget, output limit and caps, collecting
     * nothing.
     *
     * @param code the source, passed to the interpreter byte for byte; not null
     * @return a new builder
     */
    public static Builder builder(String code) {
        return new Builder(code);
    }

    /**
     * Python code with the default budget and output limit.
     *
     * @param code the Python source; not null
     * @return the execution
     */
    public static Execution python(String code) {
        return builder(code).build();
    }

    /**
     * Code in {@code language} with the default budget and output limit.
     *
     * @param language the interpreter to run it with; not null
     * @param code the source; not null
     * @return the execution
     */
    public static Execution of(Language language, String code) {
        return builder(code).language(language).build();
    }

    /** {@return a builder holding this execution's settings, to derive a changed execution from} */
    public Builder toBuilder() {
        return new Builder(code).language(language).budget(budget).outputLimit(outputLimit)
                .hardCapBytes(hardCapBytes).stripControlCharacters(stripControlCharacters).collect(collect)
                .collectFileBytes(collectFileBytes).collectTotalBytes(collectTotalBytes).collectMaxFiles(collectMaxFiles)
                .listener(listener);
    }

    /** {@return the source, as the interpreter receives it} */
    public String code() {
        return code;
    }

    /** {@return the interpreter the code runs in; default {@link Language#PYTHON}} */
    public Language language() {
        return language;
    }

    /**
     * {@return the wall-clock time the code may run before it is killed and the result is {@code TIMED_OUT};
     * default {@link #DEFAULT_BUDGET}}
     */
    public Duration budget() {
        return budget;
    }

    /**
     * {@return the characters kept per stream, the rest counted and dropped; default {@link
     * #DEFAULT_OUTPUT_LIMIT}}
     */
    public int outputLimit() {
        return outputLimit;
    }

    /**
     * {@return the bytes per stream after which reading stops and the command is killed ({@code
     * OUTPUT_LIMIT}); default {@link #DEFAULT_HARD_CAP_BYTES}}
     */
    public long hardCapBytes() {
        return hardCapBytes;
    }

    /**
     * {@return true when control characters (except newline, tab and carriage return) are removed from the
     * kept output; default false}
     */
    public boolean stripControlCharacters() {
        return stripControlCharacters;
    }

    /**
     * Paths or globs (relative to the working directory; {@code *}, {@code ?}, {@code **}) whose files are
     * read back after the code ends, before a one-shot run's teardown, into {@link RunResult#files()}.
     *
     * @return the normalized paths and globs, in the order added; empty (the default) collects nothing
     */
    public List<String> collect() {
        return collect;
    }

    /** {@return the bytes kept per collected file; default {@link #DEFAULT_COLLECT_FILE_BYTES}} */
    public long collectFileBytes() {
        return collectFileBytes;
    }

    /** {@return the bytes kept over all collected files; default {@link #DEFAULT_COLLECT_TOTAL_BYTES}} */
    public long collectTotalBytes() {
        return collectTotalBytes;
    }

    /** {@return the most files collected; default {@link #DEFAULT_COLLECT_MAX_FILES}} */
    public int collectMaxFiles() {
        return collectMaxFiles;
    }

    /** {@return the listener output is streamed to as it arrives; empty (the default) for none} */
    public java.util.Optional<OutputListener> listener() {
        return java.util.Optional.ofNullable(listener);
    }

    @Override
    public String toString() {
        return "Execution[" + language.id() + ", " + code.length() + " chars, budget=" + budget
                + ", outputLimit=" + outputLimit + (collect.isEmpty() ? "" : ", collect=" + collect) + "]";
    }

    /**
     * Collects an execution's settings; each setter checks its value at once.
     *
     * @since 0.1.0
     */
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

        /**
         * Sets the interpreter. Default {@link Language#PYTHON}.
         *
         * @param language not null
         * @return this builder
         */
        public Builder language(Language language) {
            this.language = Objects.requireNonNull(language, "language");
            return this;
        }

        /**
         * Sets the wall-clock time the code may run. Default {@link Execution#DEFAULT_BUDGET}.
         *
         * @param budget positive
         * @return this builder
         * @throws IllegalArgumentException when the budget is null, zero or negative
         */
        public Builder budget(Duration budget) {
            if (budget == null || budget.isNegative() || budget.isZero()) {
                throw new IllegalArgumentException("budget must be positive, was " + budget);
            }
            this.budget = budget;
            return this;
        }

        /**
         * Sets the characters kept per stream. Default {@link Execution#DEFAULT_OUTPUT_LIMIT}.
         *
         * @param chars zero or more
         * @return this builder
         * @throws IllegalArgumentException when negative
         */
        public Builder outputLimit(int chars) {
            if (chars < 0) {
                throw new IllegalArgumentException("outputLimit must not be negative, was " + chars);
            }
            this.outputLimit = chars;
            return this;
        }

        /**
         * Sets the bytes per stream after which reading stops and the command is killed. Default {@link
         * Execution#DEFAULT_HARD_CAP_BYTES}.
         *
         * @param bytes positive
         * @return this builder
         * @throws IllegalArgumentException when zero or negative
         */
        public Builder hardCapBytes(long bytes) {
            if (bytes <= 0) {
                throw new IllegalArgumentException("hardCapBytes must be positive, was " + bytes);
            }
            this.hardCapBytes = bytes;
            return this;
        }

        /**
         * Sets whether control characters (except newline, tab and carriage return) are removed from the kept
         * output. Default false.
         *
         * @param strip true to remove them
         * @return this builder
         */
        public Builder stripControlCharacters(boolean strip) {
            this.stripControlCharacters = strip;
            return this;
        }

        /**
         * Adds a path or glob to collect; checked like a path (no {@code ..}, not absolute).
         *
         * @param glob relative to the working directory; {@code *}, {@code ?} and {@code **} are wildcards
         * @return this builder
         * @throws IllegalArgumentException when the glob is empty, absolute, holds {@code ..} or a control
         *     character
         */
        public Builder collect(String glob) {
            SandboxPaths.glob(glob);
            collect.add(SandboxPaths.normalize(glob));
            return this;
        }

        /**
         * Adds paths or globs to collect, as {@link #collect(String)} does.
         *
         * @param globs relative to the working directory
         * @return this builder
         * @throws IllegalArgumentException when a glob is empty, absolute, holds {@code ..} or a control
         *     character
         */
        public Builder collect(Collection<String> globs) {
            globs.forEach(this::collect);
            return this;
        }

        /**
         * Sets the bytes kept per collected file. Default {@link Execution#DEFAULT_COLLECT_FILE_BYTES}.
         *
         * @param bytes zero or more
         * @return this builder
         * @throws IllegalArgumentException when negative
         */
        public Builder collectFileBytes(long bytes) {
            if (bytes < 0) {
                throw new IllegalArgumentException("collectFileBytes must not be negative, was " + bytes);
            }
            this.collectFileBytes = bytes;
            return this;
        }

        /**
         * Sets the bytes kept over all collected files. Default {@link
         * Execution#DEFAULT_COLLECT_TOTAL_BYTES}.
         *
         * @param bytes zero or more
         * @return this builder
         * @throws IllegalArgumentException when negative
         */
        public Builder collectTotalBytes(long bytes) {
            if (bytes < 0) {
                throw new IllegalArgumentException("collectTotalBytes must not be negative, was " + bytes);
            }
            this.collectTotalBytes = bytes;
            return this;
        }

        /**
         * Sets the most files collected. Default {@link Execution#DEFAULT_COLLECT_MAX_FILES}.
         *
         * @param n zero or more
         * @return this builder
         * @throws IllegalArgumentException when negative
         */
        public Builder collectMaxFiles(int n) {
            if (n < 0) {
                throw new IllegalArgumentException("collectMaxFiles must not be negative, was " + n);
            }
            this.collectMaxFiles = n;
            return this;
        }

        /**
         * Streams output to {@code listener} as it arrives (see {@link OutputListener}). Default none.
         *
         * @param listener the listener, or null for none
         * @return this builder
         */
        public Builder listener(OutputListener listener) {
            this.listener = listener;
            return this;
        }

        /** {@return the execution} */
        public Execution build() {
            return new Execution(this);
        }
    }
}
