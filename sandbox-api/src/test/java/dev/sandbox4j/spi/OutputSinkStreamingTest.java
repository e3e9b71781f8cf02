package dev.sandbox4j.spi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sandbox4j.api.Execution;
import dev.sandbox4j.api.OutputListener;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class OutputSinkStreamingTest {
    @Test
    void bytesArrivingOneByOneReachTheListenerAsWholeCharacters() {
        List<String> chunks = new ArrayList<>();
        OutputSink sink = new OutputSink(Execution.builder("x").listener((s, t) -> chunks.add(t)).build());
        byte[] b = "a\u00e9\u4e2d\uD83D\uDE00z".getBytes(StandardCharsets.UTF_8);
        for (byte x : b) {
            sink.stdout(new byte[] {x}, 0, 1);
        }
        sink.finish();
        assertEquals(List.of("a", "\u00e9", "\u4e2d", "\uD83D\uDE00", "z"), chunks);
    }

    @Test
    void aTruncatedTailBecomesReplacementAtTheEndAndTheLimitAndStrippingApply() {
        List<String> out = new ArrayList<>();
        List<String> err = new ArrayList<>();
        OutputSink sink = new OutputSink(Execution.builder("x").outputLimit(5).stripControlCharacters(true)
                .listener((s, t) -> (s == OutputListener.Stream.STDOUT ? out : err).add(t)).build());
        sink.stderr(new byte[] {'e', 0x1b, '[', (byte) 0xe4}, 0, 4);
        sink.stdout("abcdefgh");
        sink.finish();
        assertEquals("abcde", String.join("", out));
        assertEquals("e[\uFFFD", String.join("", err), "ESC stripped, the cut character flushed at the end");
    }

    @Test
    void aThrowingListenerIsIgnored() {
        OutputSink sink = new OutputSink(Execution.builder("x").listener((s, t) -> {
            throw new IllegalStateException("boom");
        }).build());
        assertTrue(sink.stdout("fine"));
        sink.finish();
        assertEquals("fine", sink.stdoutLimiter().text());
        assertFalse(sink.capped());
    }
}
