package dev.sandbox4j.api;

import java.io.Serializable;
import java.util.Objects;

/**
 * What an exec had printed when it ended without a result: the output received up to the moment the
 * caller was interrupted ({@link dev.sandbox4j.api.exception.SandboxInterruptedException#output()}).
 * It is kept under the same limits as a {@link RunResult}'s (truncated to the execution's caps, whole
 * characters, control characters stripped when the execution asks for it), and it is as untrusted as
 * any output of the code. A runner receives output while the code runs only where it declares
 * {@link dev.sandbox4j.policy.Capabilities.Feature#STREAMING}; elsewhere it arrives with the result,
 * and an interrupted exec has none.
 *
 * <p>A timeout is not an exception: its {@link RunResult} ({@link RunStatus#TIMED_OUT}) holds the output
 * received before the kill, as every result does.
 *
 * @since 0.1.0
 */
public final class PartialOutput implements Serializable {
    private static final long serialVersionUID = 1L;
    private static final PartialOutput NONE = builder().build();

    /** Standard output as kept; never null. */
    private final String stdout;
    /** Standard error as kept; never null. */
    private final String stderr;
    /** Whether standard output went past its cap. */
    private final boolean stdoutTruncated;
    /** Whether standard error went past its cap. */
    private final boolean stderrTruncated;
    /** Bytes of standard output received, kept or not. */
    private final long stdoutBytes;
    /** Bytes of standard error received, kept or not. */
    private final long stderrBytes;

    private PartialOutput(Builder b) {
        this.stdout = b.stdout;
        this.stderr = b.stderr;
        this.stdoutTruncated = b.stdoutTruncated;
        this.stderrTruncated = b.stderrTruncated;
        this.stdoutBytes = b.stdoutBytes;
        this.stderrBytes = b.stderrBytes;
    }

    /** {@return output with nothing in it: what an exception outside an exec, or before any output, carries} */
    public static PartialOutput none() {
        return NONE;
    }

    /** {@return a new builder: both streams empty, nothing truncated} */
    public static Builder builder() {
        return new Builder();
    }

    /** {@return standard output received so far, as kept (untrusted); never null} */
    public String stdout() {
        return stdout;
    }

    /** {@return standard error received so far, as kept (untrusted); never null} */
    public String stderr() {
        return stderr;
    }

    /** {@return true when standard output went past the execution's cap and the rest was dropped} */
    public boolean stdoutTruncated() {
        return stdoutTruncated;
    }

    /** {@return true when standard error went past the execution's cap and the rest was dropped} */
    public boolean stderrTruncated() {
        return stderrTruncated;
    }

    /** {@return the bytes of standard output received, kept or not} */
    public long stdoutBytes() {
        return stdoutBytes;
    }

    /** {@return the bytes of standard error received, kept or not} */
    public long stderrBytes() {
        return stderrBytes;
    }

    /** {@return true when neither stream received a byte} */
    public boolean isEmpty() {
        return stdoutBytes == 0 && stderrBytes == 0 && stdout.isEmpty() && stderr.isEmpty();
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof PartialOutput p && stdout.equals(p.stdout) && stderr.equals(p.stderr)
                && stdoutTruncated == p.stdoutTruncated && stderrTruncated == p.stderrTruncated
                && stdoutBytes == p.stdoutBytes && stderrBytes == p.stderrBytes;
    }

    @Override
    public int hashCode() {
        return Objects.hash(stdout, stderr, stdoutTruncated, stderrTruncated, stdoutBytes, stderrBytes);
    }

    /** {@return the sizes only: the output is the code's, untrusted, and may be large} */
    @Override
    public String toString() {
        return "PartialOutput[stdout=" + stdout.length() + " chars"
                + (stdoutTruncated ? " (truncated from " + stdoutBytes + " bytes)" : "")
                + ", stderr=" + stderr.length() + " chars"
                + (stderrTruncated ? " (truncated from " + stderrBytes + " bytes)" : "") + "]";
    }

    /**
     * Collects the values of a {@link PartialOutput}.
     *
     * @since 0.1.0
     */
    public static final class Builder {
        private String stdout = "";
        private String stderr = "";
        private boolean stdoutTruncated;
        private boolean stderrTruncated;
        private long stdoutBytes;
        private long stderrBytes;

        private Builder() {
        }

        /**
         * Sets standard output as kept. Default empty.
         *
         * @param stdout the text; not null
         * @return this builder
         */
        public Builder stdout(String stdout) {
            this.stdout = Objects.requireNonNull(stdout, "stdout");
            return this;
        }

        /**
         * Sets standard error as kept. Default empty.
         *
         * @param stderr the text; not null
         * @return this builder
         */
        public Builder stderr(String stderr) {
            this.stderr = Objects.requireNonNull(stderr, "stderr");
            return this;
        }

        /**
         * Sets whether standard output went past its cap. Default false.
         *
         * @param truncated whether the rest was dropped
         * @return this builder
         */
        public Builder stdoutTruncated(boolean truncated) {
            this.stdoutTruncated = truncated;
            return this;
        }

        /**
         * Sets whether standard error went past its cap. Default false.
         *
         * @param truncated whether the rest was dropped
         * @return this builder
         */
        public Builder stderrTruncated(boolean truncated) {
            this.stderrTruncated = truncated;
            return this;
        }

        /**
         * Sets the bytes of standard output received. Default 0.
         *
         * @param bytes the count; not negative
         * @return this builder
         * @throws IllegalArgumentException when negative
         */
        public Builder stdoutBytes(long bytes) {
            this.stdoutBytes = nonNegative(bytes, "stdoutBytes");
            return this;
        }

        /**
         * Sets the bytes of standard error received. Default 0.
         *
         * @param bytes the count; not negative
         * @return this builder
         * @throws IllegalArgumentException when negative
         */
        public Builder stderrBytes(long bytes) {
            this.stderrBytes = nonNegative(bytes, "stderrBytes");
            return this;
        }

        /** {@return the output} */
        public PartialOutput build() {
            return new PartialOutput(this);
        }

        private static long nonNegative(long v, String name) {
            if (v < 0) {
                throw new IllegalArgumentException(name + " must not be negative, was " + v);
            }
            return v;
        }
    }
}
