package dev.sandbox4j.cli.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.sandbox4j.api.RunResult;
import dev.sandbox4j.api.RunStatus;
import dev.sandbox4j.api.Teardown;
import java.time.Duration;
import org.junit.jupiter.api.Test;

class SummaryTest {
    private static RunResult.Builder base() {
        return RunResult.builder().duration(Duration.ofMillis(41)).provider("local").sandboxId("3f2a")
                .teardown(Teardown.DESTROYED);
    }

    @Test
    void exited() {
        assertEquals("sandbox4j: exited with code 0 after 41 ms (provider local, sandbox 3f2a, teardown destroyed)",
                Summary.of(base().status(RunStatus.EXITED).exitCode(0).build()));
    }

    @Test
    void timedOutWithTruncatedStreams() {
        assertEquals("sandbox4j: timed out: killed at the end of its budget after 41 ms; stdout truncated (5000 bytes written);"
                        + " stderr truncated (7 bytes written) (provider local, sandbox 3f2a, teardown failed)",
                Summary.of(base().status(RunStatus.TIMED_OUT).stdoutTruncated(true).stdoutBytes(5000)
                        .stderrTruncated(true).stderrBytes(7).teardown(Teardown.FAILED).build()));
    }

    @Test
    void outputLimitAndKilled() {
        assertEquals("sandbox4j: killed: its output reached the hard cap after 41 ms (provider local, sandbox 3f2a, teardown destroyed)",
                Summary.of(base().status(RunStatus.OUTPUT_LIMIT).build()));
        assertEquals("sandbox4j: killed (exit code 137) after 41 ms (provider local, sandbox 3f2a, teardown destroyed)",
                Summary.of(base().status(RunStatus.KILLED).exitCode(137).build()));
    }

    @Test
    void oneLineFlattensLineBreaksAndDropsControlCharacters() {
        assertEquals("a b c [0md\u00e9", Summary.oneLine("a\r\nb\nc\r\u001b[0md\u00e9\n"));
        assertEquals("", Summary.oneLine(null));
        assertEquals("abc", Summary.oneLine("a\u202eb\u200bc"));
    }
}
