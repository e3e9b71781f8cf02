package dev.sandbox4j.spi;

import dev.sandbox4j.api.PartialOutput;
import dev.sandbox4j.api.Execution;
import dev.sandbox4j.api.OutputListener;
import dev.sandbox4j.api.RichResult;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Where an adapter pushes a command's output as it arrives. Both methods return {@code false} once
 * the execution's hard byte cap is reached on that stream: the adapter then stops reading and kills
 * the command. Safe to call from two threads (one per stream).
 *
 * @since 0.1.0
 */
public final class OutputSink {
    private static final Logger log = LoggerFactory.getLogger(OutputSink.class);
    private final OutputLimiter stdout;
    private final OutputLimiter stderr;
    private final OutputListener listener;
    private final boolean strip;
    private final int[] streamed = new int[2];
    private final AtomicBoolean listenerFailed = new AtomicBoolean();
    private final List<RichResult> results = new ArrayList<>();
    private final long resultBytes;
    private final int maxResults;
    private long resultBytesLeft;

    /**
     * A sink for one run of {@code execution}: its output limit, hard cap, listener, control-character
     * stripping and collect caps (for typed results).
     *
     * @param execution the execution whose output arrives here
     */
    public OutputSink(Execution execution) {
        this.stdout = new OutputLimiter(execution.outputLimit(), execution.hardCapBytes());
        this.stderr = new OutputLimiter(execution.outputLimit(), execution.hardCapBytes());
        this.listener = execution.listener().orElse(null);
        this.strip = execution.stripControlCharacters();
        this.resultBytes = execution.collectFileBytes();
        this.resultBytesLeft = execution.collectTotalBytes();
        this.maxResults = execution.collectMaxFiles();
    }

    /**
     * A typed result of a code cell (a chart, a table), in order. Kept up to the execution's per-file
     * and per-run collect caps and its file count; past them, dropped (counted in nothing else).
     *
     * @param mediaType such as {@code image/png}
     * @param mainResult whether the cell marked it as its main result
     * @param content the decoded bytes; at most the per-result cap is kept
     * @param size the decoded size, when the adapter knows more than it passes
     */
    public synchronized void result(String mediaType, byte[] content, long size, boolean mainResult) {
        if (results.size() >= maxResults) {
            return;
        }
        int keep = (int) Math.min(content.length, Math.min(resultBytes, resultBytesLeft));
        resultBytesLeft -= keep;
        results.add(RichResult.of(mediaType, keep == content.length ? content : java.util.Arrays.copyOf(content, keep),
                Math.max(size, content.length), mainResult));
    }

    /** {@return the typed results so far, in order; a copy} */
    public synchronized List<RichResult> results() {
        return List.copyOf(results);
    }

    /**
     * Takes the next bytes of standard output and streams what is newly kept to the listener.
     *
     * @param b the buffer
     * @param off where the new bytes start
     * @param len how many bytes are new
     * @return false once stdout reached the hard cap: stop reading and kill the command
     */
    public boolean stdout(byte[] b, int off, int len) {
        synchronized (stdout) {
            boolean more = stdout.accept(b, off, len);
            stream(OutputListener.Stream.STDOUT, stdout, false);
            return more;
        }
    }

    /**
     * Takes the next bytes of standard error and streams what is newly kept to the listener.
     *
     * @param b the buffer
     * @param off where the new bytes start
     * @param len how many bytes are new
     * @return false once stderr reached the hard cap: stop reading and kill the command
     */
    public boolean stderr(byte[] b, int off, int len) {
        synchronized (stderr) {
            boolean more = stderr.accept(b, off, len);
            stream(OutputListener.Stream.STDERR, stderr, false);
            return more;
        }
    }

    /**
     * Takes already decoded standard output, counted as UTF-8 bytes.
     *
     * @param text the text
     * @return false once stdout reached the hard cap: stop reading and kill the command
     */
    public boolean stdout(CharSequence text) {
        synchronized (stdout) {
            boolean more = stdout.accept(text);
            stream(OutputListener.Stream.STDOUT, stdout, false);
            return more;
        }
    }

    /**
     * Takes already decoded standard error, counted as UTF-8 bytes.
     *
     * @param text the text
     * @return false once stderr reached the hard cap: stop reading and kill the command
     */
    public boolean stderr(CharSequence text) {
        synchronized (stderr) {
            boolean more = stderr.accept(text);
            stream(OutputListener.Stream.STDERR, stderr, false);
            return more;
        }
    }

    /**
     * Ends both streams: a trailing partial character becomes U+FFFD and reaches the listener. Called
     * by the lifecycle when the command is over (exited, timed out, killed or interrupted).
     */
    public void finish() {
        synchronized (stdout) {
            stdout.finish();
            stream(OutputListener.Stream.STDOUT, stdout, true);
        }
        synchronized (stderr) {
            stderr.finish();
            stream(OutputListener.Stream.STDERR, stderr, true);
        }
    }

    /** Hands the listener what the limiter kept since the last call: whole characters, stripped as the result is. */
    private void stream(OutputListener.Stream which, OutputLimiter limiter, boolean last) {
        if (listener == null) {
            return;
        }
        int i = which.ordinal();
        int end = limiter.keptLength();
        if (!last && end > streamed[i] && Character.isHighSurrogate(limiter.kept(end - 1, end).charAt(0))) {
            end--; // its low half comes with the next bytes
        }
        if (end <= streamed[i]) {
            return;
        }
        String text = limiter.kept(streamed[i], end);
        streamed[i] = end;
        if (strip) {
            text = OutputLimiter.stripControlCharacters(text);
            if (text.isEmpty()) {
                return;
            }
        }
        try {
            listener.onOutput(which, text);
        } catch (RuntimeException e) {
            // the listener is the application's; its failure must not end the run
            if (listenerFailed.compareAndSet(false, true)) {
                log.warn("the output listener failed (the run goes on; later failures are not logged): {}", e.toString());
            }
        }
    }

    /** {@return true when either stream reached the hard cap} */
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

    /**
     * What both streams hold now, as an interrupted exec's {@link PartialOutput}: the kept text (control
     * characters stripped when the execution asks for it, as in the result), the truncation flags and the
     * byte counts, each stream read under its own lock.
     *
     * @return the output so far
     */
    public PartialOutput partial() {
        PartialOutput.Builder b = PartialOutput.builder();
        synchronized (stdout) {
            String text = stdout.text();
            b.stdout(strip ? OutputLimiter.stripControlCharacters(text) : text)
                    .stdoutTruncated(stdout.truncated()).stdoutBytes(stdout.totalBytes());
        }
        synchronized (stderr) {
            String text = stderr.text();
            b.stderr(strip ? OutputLimiter.stripControlCharacters(text) : text)
                    .stderrTruncated(stderr.truncated()).stderrBytes(stderr.totalBytes());
        }
        return b.build();
    }

    /** {@return the limiter of standard output, which the result is built from} */
    public OutputLimiter stdoutLimiter() {
        return stdout;
    }

    /** {@return the limiter of standard error, which the result is built from} */
    public OutputLimiter stderrLimiter() {
        return stderr;
    }
}
