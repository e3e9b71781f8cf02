package dev.sandbox4j.local;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sandbox4j.api.RunRequest;
import dev.sandbox4j.api.Sandbox;
import dev.sandbox4j.api.SandboxSpec;
import dev.sandbox4j.api.Teardown;
import java.nio.file.Path;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** A closed local runner runs no more code, and its close tears down the sandboxes still open. */
class LocalRunnerClosedTest {
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
    void aClosedRunnerRefusesRunsAndLeavesNoSandbox() throws Exception {
        LocalSandboxRunner runner = LocalSandboxRunner.builder().workRoot(workRoot).build();
        Sandbox open = runner.open(SandboxSpec.defaults());
        runner.close();
        assertTrue(open.isClosed(), "the runner's close tore the open sandbox down");
        assertEquals(Teardown.DESTROYED, open.teardown());
        assertEquals(0, TestDirs.entries(workRoot), "no sandbox directory is left");
        IllegalStateException e = assertThrows(IllegalStateException.class,
                () -> runner.run(RunRequest.builder("print('ran after close')").build()));
        assertTrue(e.getMessage().contains("runner is closed"), e.getMessage());
        assertEquals(0, TestDirs.entries(workRoot), "nothing was created for the refused run");
    }
}
