package dev.sandbox4j.tck;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;
import dev.sandbox4j.api.Execution;
import dev.sandbox4j.api.OutputListener;
import dev.sandbox4j.api.RunResult;
import dev.sandbox4j.api.exception.SandboxInterruptedException;
import dev.sandbox4j.api.SandboxSpec;
import dev.sandbox4j.policy.Capabilities;
import dev.sandbox4j.policy.Language;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * Contract cases. Output as it happens: the first chunk arrives while the code still runs (a latch,
 * not a timing), chunks never split a character, caps and stripping apply as in the result, and a
 * listener that throws does not break the run; an interrupted exec's exception holds what the code had
 * printed. Part of {@link SandboxRunnerContract}; skipped by
 * {@code Feature.STREAMING}.
 *
 * @since 0.1.0
 */
public interface StreamingCases extends ContractContext {
    /**
     * Python prints {@code ready} (flushed) and sleeps 600 s (budget 90 s), with a listener. Fails unless the
     * first chunk arrives within 60 s while the run is not done, the pool running it terminates within 60 s
     * after the run's future is cancelled with an interrupt (the interrupted run returned), and the chunks seen
     * are exactly {@code ready} and a newline. What the interrupted run throws is checked by
     * {@link #anInterruptedExecCarriesWhatTheCodeHadPrinted()} (a cancelled future's {@code get()} only ever
     * throws {@code CancellationException}, so it cannot be seen here). Skipped without
     * {@code Feature.STREAMING} or {@code Language.PYTHON}.
     *
     * @throws Exception when a wait is interrupted
     */
    @Test
    default void theFirstChunkArrivesWhileTheCodeStillRuns() throws Exception {
        requireFeature(Capabilities.Feature.STREAMING);
        requireLanguage(Language.PYTHON);
        CountDownLatch first = new CountDownLatch(1);
        StringBuilder seen = new StringBuilder();
        // prints, flushes, then sleeps far past the wait below: only streaming can deliver the line before the end
        Execution e = Execution.builder("import sys, time\nprint('ready', flush=True)\ntime.sleep(600)\n")
                .budget(Duration.ofSeconds(90))
                .listener((stream, text) -> {
                    synchronized (seen) {
                        seen.append(text);
                    }
                    first.countDown();
                }).build();
        ExecutorService pool = Executors.newSingleThreadExecutor();
        try {
            Future<RunResult> run = pool.submit(() -> run(SandboxSpec.defaults(), e));
            assertTrue(first.await(60, TimeUnit.SECONDS), "no chunk arrived while the code ran");
            assertFalse(run.isDone(), "the run ended before its first chunk was seen: output was not streamed");
            run.cancel(true); // interrupts the run: the sandbox is torn down (awaited below)
            synchronized (seen) {
                assertEquals("ready\n", seen.toString());
            }
        } finally {
            pool.shutdownNow();
            assertTrue(pool.awaitTermination(60, TimeUnit.SECONDS), "the interrupted run did not return");
        }
    }

    /**
     * Python writes the UTF-8 of a text (an accented letter, two CJK characters, an emoji) one byte at a time,
     * each flushed, then {@code to stderr} and a BEL (0x07) to stderr, with control characters stripped.
     * Fails unless the run exits 0, no stdout chunk holds U+FFFD or ends in a high surrogate, the chunks join
     * to the text and to the result's stdout, and, where the runner declares {@code Feature.SEPARATE_STDERR},
     * the stderr chunks join to {@code to stderr} and a newline (the BEL stripped as in the result). Skipped
     * without {@code Feature.STREAMING} or {@code Language.PYTHON}.
     */
    @Test
    default void chunksNeverSplitACharacterAndMatchTheResult() {
        requireFeature(Capabilities.Feature.STREAMING);
        requireLanguage(Language.PYTHON);
        String text = "h\u00e9llo \u4e2d\u6587 \uD83D\uDE00 end\n";
        // each byte written and flushed on its own, so a multi-byte character arrives in pieces
        Execution.Builder b = Execution.builder("import sys\n"
                + "for b in " + pythonBytes(text) + ":\n"
                + "    sys.stdout.buffer.write(bytes([b])); sys.stdout.buffer.flush()\n"
                + "sys.stderr.write('to stderr\\x07\\n')\n");
        List<String> out = new CopyOnWriteArrayList<>();
        List<String> err = new CopyOnWriteArrayList<>();
        RunResult r = run(SandboxSpec.defaults(), b.stripControlCharacters(true).listener((stream, chunk) ->
                (stream == OutputListener.Stream.STDOUT ? out : err).add(chunk)).build());
        assertExited(r, 0);
        for (String chunk : out) {
            assertFalse(chunk.contains("\uFFFD"), "a chunk split a character: " + out);
            assertFalse(!chunk.isEmpty() && Character.isHighSurrogate(chunk.charAt(chunk.length() - 1)), "half a surrogate pair: " + out);
        }
        assertEquals(text, String.join("", out));
        assertEquals(r.stdout(), String.join("", out));
        if (runner().capabilities().supports(Capabilities.Feature.SEPARATE_STDERR)) {
            assertEquals("to stderr\n", String.join("", err), "control characters are stripped as in the result");
        }
    }

    /**
     * Python prints 50 lines {@code line 00} to {@code line 49}, each flushed, with an output limit of 30
     * characters, to a listener that throws {@code IllegalStateException} on every other call (the first,
     * the third, ...). Fails unless the run exits 0 in spite of the throws, stdout is marked truncated and
     * holds exactly 30 characters, and what the listener got equals that stdout. Skipped without
     * {@code Feature.STREAMING} or {@code Language.PYTHON}.
     */
    @Test
    default void theOutputLimitAppliesAndAThrowingListenerDoesNotBreakTheRun() {
        requireFeature(Capabilities.Feature.STREAMING);
        requireLanguage(Language.PYTHON);
        AtomicInteger calls = new AtomicInteger();
        StringBuilder got = new StringBuilder();
        RunResult r = run(SandboxSpec.defaults(), Execution.builder("for i in range(50):\n    print('line %02d' % i, flush=True)\n")
                .outputLimit(30)
                .listener((stream, chunk) -> {
                    synchronized (got) {
                        got.append(chunk);
                    }
                    if (calls.incrementAndGet() % 2 == 1) {
                        throw new IllegalStateException("a listener bug");
                    }
                }).build());
        assertExited(r, 0);
        assertTrue(r.stdoutTruncated());
        assertEquals(30, r.stdout().length());
        synchronized (got) {
            assertEquals(r.stdout(), got.toString(), "the listener sees what the result keeps, no more");
        }
    }

    /**
     * Issue 30: an interrupted exec's {@link SandboxInterruptedException#output()} holds what the code
     * had printed: the code prints to both streams, then sleeps past any wait here; once the listener has
     * seen both lines the caller is interrupted, and the exception's output must hold exactly what the
     * listener saw (which is what a result would have kept), with stdout not marked truncated and
     * {@code stdoutBytes()} 16. The worker must return within 60 s of the interrupt. Skipped without
     * {@code Feature.STREAMING} or {@code Language.PYTHON}.
     *
     * @throws Exception when the wait for the worker is interrupted
     */
    @Test
    default void anInterruptedExecCarriesWhatTheCodeHadPrinted() throws Exception {
        requireFeature(Capabilities.Feature.STREAMING);
        requireLanguage(Language.PYTHON);
        StringBuilder out = new StringBuilder();
        StringBuilder err = new StringBuilder();
        CountDownLatch both = new CountDownLatch(2);
        Execution e = Execution.builder("import sys, time\nprint('tck-partial-out', flush=True)\n"
                + "print('tck-partial-err', file=sys.stderr, flush=True)\ntime.sleep(600)\n")
                .budget(Duration.ofSeconds(90))
                .listener((stream, text) -> {
                    StringBuilder to = stream == OutputListener.Stream.STDOUT ? out : err;
                    synchronized (to) {
                        to.append(text);
                        if (to.toString().endsWith("\n")) {
                            both.countDown();
                        }
                    }
                }).build();
        java.util.concurrent.atomic.AtomicReference<Throwable> thrown = new java.util.concurrent.atomic.AtomicReference<>();
        Thread worker = new Thread(() -> {
            try {
                run(SandboxSpec.defaults(), e);
            } catch (Throwable t) {
                thrown.set(t);
            }
        }, "tck-partial-worker");
        worker.start();
        try {
            assertTrue(both.await(60, TimeUnit.SECONDS), "the listener did not see both lines while the code ran");
        } finally {
            worker.interrupt();
            worker.join(TimeUnit.SECONDS.toMillis(60));
        }
        assertFalse(worker.isAlive(), "the interrupted run did not return");
        SandboxInterruptedException ex = assertInstanceOf(SandboxInterruptedException.class, thrown.get(),
                "the interrupted run must throw SandboxInterruptedException");
        synchronized (out) {
            assertEquals("tck-partial-out\n", out.toString());
            assertEquals(out.toString(), ex.output().stdout(), "the exception's stdout is what the listener saw");
        }
        synchronized (err) {
            assertEquals("tck-partial-err\n", err.toString());
            assertEquals(err.toString(), ex.output().stderr(), "the exception's stderr is what the listener saw");
        }
        assertFalse(ex.output().stdoutTruncated());
        assertEquals(16, ex.output().stdoutBytes());
    }

    private static String pythonBytes(String s) {
        StringBuilder b = new StringBuilder("[");
        for (byte x : s.getBytes(java.nio.charset.StandardCharsets.UTF_8)) {
            b.append(x & 0xff).append(',');
        }
        return b.append(']').toString();
    }
}
