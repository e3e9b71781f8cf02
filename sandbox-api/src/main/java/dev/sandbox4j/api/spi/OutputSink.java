package dev.sandbox4j.api.spi;

import dev.sandbox4j.api.Execution;

/**
 * Where an adapter pushes a command's output as it arrives. Both methods return {@code false} once
 * the execution's hard byte cap is reached on that stream: the adapter then stops reading and kills
 * the command. Safe to call from two threads (one per stream).
 *
 * @since 0.1.0
 */
public final class OutputSink {
    private final OutputLimiter stdout;
    private final OutputLimiter stderr;

    public OutputSink(Execution execution) {
        this.stdout = new OutputLimiter(execution.outputLimit(), execution.hardCapBytes());
        this.stderr = new OutputLimiter(execution.outputLimit(), execution.hardCapBytes());
    }

    public boolean stdout(byte[] b, int off, int len) {
        synchronized (stdout) {
            return stdout.accept(b, off, len);
        }
    }

    public boolean stderr(byte[] b, int off, int len) {
        synchronized (stderr) {
            return stderr.accept(b, off, len);
        }
    }

    public boolean stdout(CharSequence text) {
        synchronized (stdout) {
            return stdout.accept(text);
        }
    }

    public boolean stderr(CharSequence text) {
        synchronized (stderr) {
            return stderr.accept(text);
        }
    }

    /** True when either stream reached the hard cap. */
    public boolean capped() {
        synchronized (stdout) {
            if (stdout.capped()) {
                return true;
            }
        }
        synchronized (stderr) {
            return stderr.capped();
        }
    }

    public OutputLimiter stdoutLimiter() {
        return stdout;
    }

    public OutputLimiter stderrLimiter() {
        return stderr;
    }
}
