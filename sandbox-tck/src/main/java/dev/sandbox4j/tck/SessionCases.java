package dev.sandbox4j.tck;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import dev.sandbox4j.api.Execution;
import dev.sandbox4j.api.InputFile;
import dev.sandbox4j.api.RunResult;
import dev.sandbox4j.api.Sandbox;
import dev.sandbox4j.api.SandboxSpec;
import dev.sandbox4j.api.Teardown;
import dev.sandbox4j.policy.Capabilities;
import dev.sandbox4j.policy.Language;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Contract cases. Files and sessions: input files, files shared across execs, concurrent runs isolated. Part of {@link SandboxRunnerContract}.
 *
 * @since 0.1.0
 */
public interface SessionCases extends ContractContext {
    /**
     * The spec places a UTF-8 text (an accented letter, an emoji) at {@code data/nested/input.txt} and the 256
     * byte values at {@code top.bin}; Python prints the text and the SHA-256 of {@code top.bin}. Fails unless
     * the run exits 0 with stdout exactly the text followed by the hash computed here. Skipped without
     * {@code Feature.INPUT_FILES} or {@code Language.PYTHON}.
     *
     * @throws Exception when SHA-256 is not available here (every Java platform has it)
     */
    @Test
    default void inputFilesAreVisible() throws Exception {
        requireFeature(Capabilities.Feature.INPUT_FILES);
        requireLanguage(Language.PYTHON);
        byte[] binary = new byte[256];
        for (int i = 0; i < binary.length; i++) {
            binary[i] = (byte) i;
        }
        SandboxSpec spec = SandboxSpec.builder()
                .file("data/nested/input.txt", "h\u00e9llo from the host \uD83D\uDE00\n")
                .file(InputFile.of("top.bin", binary))
                .build();
        RunResult r = run(spec, Execution.python(
                "import hashlib\n"
                        + "print(open('data/nested/input.txt', encoding='utf-8').read(), end='')\n"
                        + "print(hashlib.sha256(open('top.bin', 'rb').read()).hexdigest())\n"));
        assertExited(r, 0);
        assertEquals("h\u00e9llo from the host \uD83D\uDE00\n" + sha256(binary) + "\n", r.stdout());
    }

    /**
     * In one opened sandbox a first exec writes {@code state.txt} and a second prints it. Fails unless both
     * exit 0, the second printing {@code from the first call}, and the teardown is {@code OPEN} while the
     * sandbox is open; after {@code close()}, {@code isClosed()} must be true and the teardown not
     * {@code OPEN}, a second {@code close()} must not throw, and an exec must throw
     * {@code IllegalStateException}. Skipped without {@code Feature.SESSIONS} or {@code Language.PYTHON}.
     */
    @Test
    default void twoExecCallsInOneSandboxShareFiles() {
        requireFeature(Capabilities.Feature.SESSIONS);
        requireLanguage(Language.PYTHON);
        Sandbox sandbox = runner().open(SandboxSpec.defaults());
        try {
            RunResult first = sandbox.exec(Execution.python("open('state.txt', 'w').write('from the first call')"));
            assertExited(first, 0);
            RunResult second = sandbox.exec(Execution.python("print(open('state.txt').read())"));
            assertExited(second, 0);
            assertEquals("from the first call\n", second.stdout());
            assertEquals(Teardown.OPEN, sandbox.teardown());
        } finally {
            sandbox.close();
        }
        assertTrue(sandbox.isClosed());
        assertNotEquals(Teardown.OPEN, sandbox.teardown());
        sandbox.close(); // idempotent
        assertThrows(IllegalStateException.class, () -> sandbox.exec(Execution.python("print(1)")));
    }

    /**
     * Eight one-shot runs at once, run i writing {@code own-i} in its working directory and {@code /tmp/own-i}
     * and listing both patterns. Fails unless each exits 0 (each awaited up to 120 s) and sees exactly its own
     * two files. Skipped without {@code Language.PYTHON}.
     *
     * @throws Exception when a run throws, is not done in time, or the wait is interrupted
     */
    @Test
    default void eightConcurrentRunsAreIsolated() throws Exception {
        requireLanguage(Language.PYTHON);
        int n = 8;
        ExecutorService pool = Executors.newFixedThreadPool(n);
        try {
            List<Future<RunResult>> futures = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                int id = i;
                futures.add(pool.submit(() -> run(SandboxSpec.defaults(), Execution.builder(
                        "import os, glob\n"
                                + "open('own-" + id + "', 'w').write('x')\n"
                                + "open('/tmp/own-" + id + "', 'w').write('x')\n"
                                + "print(sorted(glob.glob('own-*')), sorted(glob.glob('/tmp/own-*')))\n")
                        .budget(Duration.ofSeconds(60)).build())));
            }
            for (int i = 0; i < n; i++) {
                RunResult r = futures.get(i).get(120, TimeUnit.SECONDS);
                assertExited(r, 0);
                assertEquals("['own-" + i + "'] ['/tmp/own-" + i + "']\n", r.stdout(), "run " + i + " saw another run's files");
            }
        } finally {
            pool.shutdownNow();
        }
    }
}
