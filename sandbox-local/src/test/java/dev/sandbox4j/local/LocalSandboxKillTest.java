package dev.sandbox4j.local;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sandbox4j.api.Execution;
import dev.sandbox4j.api.RunResult;
import dev.sandbox4j.api.SandboxSpec;
import dev.sandbox4j.policy.Language;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** {@link LocalSandbox#killRunning()}: ends the exec in progress and leaves the sandbox usable. */
class LocalSandboxKillTest {
    private Path workRoot;

    @BeforeEach
    void dirs() throws Exception {
        workRoot = TestDirs.workRoot();
    }

    @AfterEach
    void clean() throws Exception {
        TestDirs.delete(workRoot);
    }

    @Test
    void killRunningEndsTheCommandButNotTheSandbox() throws Exception {
        try (LocalSandboxRunner runner = LocalSandboxRunner.builder().workRoot(workRoot).build();
                LocalSandbox sandbox = runner.openLocal(SandboxSpec.defaults())) {
            assertFalse(sandbox.killRunning(), "nothing runs yet");
            sandbox.writeFile("kept.txt", "still here".getBytes(java.nio.charset.StandardCharsets.UTF_8));
            CompletableFuture<RunResult> running = CompletableFuture.supplyAsync(() -> sandbox.exec(
                    Execution.builder("echo started; sleep 60").language(Language.BASH).budget(Duration.ofSeconds(90)).build()));
            // kill as soon as the command is in flight (a process of this JVM), however long that takes
            long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            boolean killed = false;
            while (!killed && System.nanoTime() < until) {
                killed = sandbox.killRunning();
                if (!killed) {
                    Thread.sleep(5);
                }
            }
            assertTrue(killed, "the command never showed up as running");
            RunResult r = running.get(30, TimeUnit.SECONDS);
            assertEquals(137, r.exitCode().orElse(-1), r.toString());
            assertFalse(sandbox.isClosed(), "the sandbox stays open");
            assertEquals("still here", sandbox.exec(Execution.of(Language.BASH, "cat kept.txt")).stdout());
        }
    }
}
