package dev.sandbox4j.tck;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import dev.sandbox4j.api.Execution;
import dev.sandbox4j.api.RunResult;
import dev.sandbox4j.api.RunStatus;
import dev.sandbox4j.api.SandboxSpec;
import dev.sandbox4j.policy.Language;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * Contract cases. Output: counting and truncation at the limit, and the hard cap on a flood. Part of {@link SandboxRunnerContract}.
 *
 * @since 0.1.0
 */
public interface OutputCases extends ContractContext {
    /**
     * Python writes 160 chunks of 64 KiB of {@code x} (10 MiB) to stdout, with an output limit of 1,000
     * characters and a 60 s budget. Fails unless the run exits 0, stdout is marked truncated,
     * {@code stdoutBytes()} counts all 10,485,760 bytes, exactly 1,000 {@code x} are kept, and stderr is not
     * marked truncated. Skipped without {@code Language.PYTHON}.
     */
    @Test
    default void tenMegabytesOfOutputAreCountedAndTruncatedToTheLimit() {
        requireLanguage(Language.PYTHON);
        int limit = 1_000;
        long size = 10L * 1024 * 1024;
        RunResult r = run(SandboxSpec.defaults(), Execution.builder(
                "import sys\nchunk = 'x' * 65536\nfor _ in range(160):\n    sys.stdout.write(chunk)\nsys.stdout.flush()\n")
                .outputLimit(limit).budget(Duration.ofSeconds(60)).build());
        assertExited(r, 0);
        assertTrue(r.stdoutTruncated(), "truncated flag");
        assertEquals(size, r.stdoutBytes(), "bytes counted");
        assertEquals(limit, r.stdout().length(), "kept characters");
        assertEquals("x".repeat(limit), r.stdout());
        assertFalse(r.stderrTruncated());
    }

    /**
     * Python writes 64 KiB chunks of {@code y} to stdout forever, with an output limit of 500 characters, a
     * hard cap of 1 MiB and a 60 s budget. Fails unless the run ends with status {@code OUTPUT_LIMIT} (not by
     * its budget), {@code stdoutBytes()} is exactly 1,048,576 (reading stops at the cap), 500 characters are
     * kept and stdout is marked truncated, and the leak count is back to its baseline right after the run
     * ({@link #assertLeakCountBackToBaseline()}). Skipped without {@code Language.PYTHON}.
     */
    @Test
    default void aFloodIsKilledAtTheHardCap() {
        requireLanguage(Language.PYTHON);
        long cap = 1024 * 1024;
        RunResult r = run(SandboxSpec.defaults(), Execution.builder(
                "import sys\nchunk = 'y' * 65536\nwhile True:\n    sys.stdout.write(chunk)\n")
                .outputLimit(500).hardCapBytes(cap).budget(Duration.ofSeconds(60)).build());
        assertEquals(RunStatus.OUTPUT_LIMIT, r.status(), r::toString);
        assertEquals(cap, r.stdoutBytes(), "bytes read stop at the hard cap");
        assertEquals(500, r.stdout().length());
        assertTrue(r.stdoutTruncated());
        assertLeakCountBackToBaseline();
    }
}
