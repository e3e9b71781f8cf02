package dev.sandbox4j.api;

import dev.sandbox4j.policy.Language;
import java.time.Duration;
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

    private final String code;
    private final Language language;
    private final Duration budget;
    private final int outputLimit;
    private final long hardCapBytes;
    private final boolean stripControlCharacters;

    private Execution(Builder b) {
        this.code = b.code;
        this.language = b.language;
        this.budget = b.budget;
        this.outputLimit = b.outputLimit;
        this.hardCapBytes = b.hardCapBytes;
        this.stripControlCharacters = b.stripControlCharacters;
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
                .hardCapBytes(hardCapBytes).stripControlCharacters(stripControlCharacters);
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

    @Override
    public String toString() {
        return "Execution[" + language.id() + ", " + code.length() + " chars, budget=" + budget
                + ", outputLimit=" + outputLimit + "]";
    }

    public static final class Builder {
        private final String code;
        private Language language = Language.PYTHON;
        private Duration budget = DEFAULT_BUDGET;
        private int outputLimit = DEFAULT_OUTPUT_LIMIT;
        private long hardCapBytes = DEFAULT_HARD_CAP_BYTES;
        private boolean stripControlCharacters;

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

        public Execution build() {
            return new Execution(this);
        }
    }
}
