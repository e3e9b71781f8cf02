package dev.sandbox4j.local;

import java.nio.file.Path;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Issue 27, finding 1: nothing of the code outlives its exec, on every path, with the kernel limits
 * (as root: cgroups, whose kill would hide a survivor at close) and without them (the path of every
 * user that is not root); {@link SurvivorNonRootTest} runs the same checks as a user that is not root.
 */
class SurvivorTest {
    private Path workRoot;
    private final java.util.List<LocalSandboxRunner> runners = new java.util.ArrayList<>();

    @BeforeEach
    void createWorkRoot() throws Exception {
        workRoot = TestDirs.workRoot();
    }

    @AfterEach
    void deleteWorkRoot() throws Exception {
        runners.forEach(LocalSandboxRunner::close);
        TestDirs.delete(workRoot);
    }

    private LocalSandboxRunner runner(boolean kernelLimits) {
        LocalSandboxRunner r = LocalSandboxRunner.builder().workRoot(workRoot).kernelLimits(kernelLimits).build();
        runners.add(r);
        return r;
    }

    @ParameterizedTest(name = "kernel limits {0}")
    @ValueSource(booleans = {true, false})
    void theCodeCannotOpenPid1sMemory(boolean kernelLimits) {
        SurvivorChecks.pid1IsNotWritable(runner(kernelLimits));
    }

    @ParameterizedTest(name = "kernel limits {0}")
    @ValueSource(booleans = {true, false})
    void aDaemonIsDeadWhenItsExecExits(boolean kernelLimits) throws Exception {
        SurvivorChecks.normalExit(runner(kernelLimits));
    }

    @ParameterizedTest(name = "kernel limits {0}")
    @ValueSource(booleans = {true, false})
    void aDaemonIsDeadWhenItsBudgetRunsOut(boolean kernelLimits) throws Exception {
        SurvivorChecks.budget(runner(kernelLimits));
    }

    @ParameterizedTest(name = "kernel limits {0}")
    @ValueSource(booleans = {true, false})
    void aDaemonIsDeadWhenItsOutputCapIsHit(boolean kernelLimits) throws Exception {
        SurvivorChecks.outputCap(runner(kernelLimits));
    }

    @ParameterizedTest(name = "kernel limits {0}")
    @ValueSource(booleans = {true, false})
    void aDaemonIsDeadWhenItsExecIsInterrupted(boolean kernelLimits) throws Exception {
        SurvivorChecks.interrupt(runner(kernelLimits));
    }

    @ParameterizedTest(name = "kernel limits {0}")
    @ValueSource(booleans = {true, false})
    void aDaemonIsDeadWhenItsSandboxIsClosedMidExec(boolean kernelLimits) throws Exception {
        SurvivorChecks.close(runner(kernelLimits));
    }
}
