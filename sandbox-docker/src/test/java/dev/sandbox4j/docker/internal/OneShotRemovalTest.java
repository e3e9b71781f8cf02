package dev.sandbox4j.docker.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sandbox4j.api.Execution;
import dev.sandbox4j.api.SandboxSpec;
import dev.sandbox4j.docker.DockerSandboxRunner;
import dev.sandbox4j.docker.EngineFaultProxy;
import dev.sandbox4j.docker.TestEngine;
import dev.sandbox4j.emulators.Faults;
import dev.sandbox4j.emulators.Ledger;
import dev.sandbox4j.spi.CreateRequest;
import dev.sandbox4j.spi.RunIds;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * The teardown of a one-shot's container (issue 35 item 4): one that is not running (never started, or
 * exited) is removed without {@code force}; one the engine says still runs gets the 409 and then the
 * forced removal. Real engine, through {@link EngineFaultProxy} as a recorder.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class OneShotRemovalTest {
    private Path dir;
    private EngineFaultProxy proxy;
    private DockerSandboxRunner runner;
    private DockerDriver driver;

    @BeforeAll
    void start() throws Exception {
        TestEngine.runner(b -> b).close(); // skipped (failed in CI) without an engine and the image
        dir = Files.createTempDirectory("docker-oneshot-rm-");
        proxy = new EngineFaultProxy(dir.resolve("engine.sock"), Path.of("/var/run/docker.sock"), new Faults(), new Ledger());
        runner = TestEngine.runner(b -> b.dockerHost("unix://" + proxy.socket()));
        driver = TestEngine.driver(runner);
    }

    @AfterAll
    void stop() throws Exception {
        if (runner != null) {
            runner.close();
        }
        if (proxy != null) {
            proxy.close();
        }
        if (dir != null) {
            Files.deleteIfExists(dir.resolve("engine.sock"));
            Files.deleteIfExists(dir);
        }
    }

    private List<String> deletes() {
        return proxy.requests().stream().filter(r -> r.startsWith("DELETE /containers/")).toList();
    }

    private DockerHandle oneShot(String runId, String code) throws InterruptedException {
        Execution e = Execution.python(code);
        SandboxSpec spec = SandboxSpec.defaults();
        assertTrue(driver.runsAsFirstProcess(spec, e));
        return driver.create(CreateRequest.of(runId, spec).withFirstProcess(e));
    }

    @Test
    void aContainerNeverStartedIsRemovedWithoutForce() throws Exception {
        String runId = RunIds.next();
        proxy.clearRequests();
        DockerHandle h = oneShot(runId, "print(1)");
        assertFalse(proxy.requests().stream().anyMatch(r -> r.matches("POST /containers/[^/]+/start.*")),
                "a one-shot's create starts nothing: " + proxy.requests());
        assertTrue(driver.destroy(h));
        assertEquals(List.of("DELETE /containers/" + h.containerId() + "?v=true"), deletes());
        assertEquals(0, driver.labelledResources(runId));
    }

    @Test
    void aContainerThatStillRunsFallsBackToTheForcedRemoval() throws Exception {
        String runId = RunIds.next();
        DockerHandle h = oneShot(runId, "import time\ntime.sleep(60)");
        driver.api().start(h.containerId()); // as OneShotRun would, without reading it
        assertEquals(Boolean.TRUE, driver.api().running(h.containerId()));
        proxy.clearRequests();
        assertTrue(driver.destroy(h));
        assertEquals(List.of("DELETE /containers/" + h.containerId() + "?v=true",
                "DELETE /containers/" + h.containerId() + "?force=true&v=true"), deletes());
        assertEquals(0, driver.labelledResources(runId));
    }

    @Test
    void aSecondExecOnAOneShotsHandleIsRefusedAndNothingIsStartedTwice() throws Exception {
        String runId = RunIds.next();
        DockerHandle h = oneShot(runId, "print(1)");
        try {
            Execution other = Execution.python("print(2)");
            assertThrows(IllegalStateException.class, () -> driver.exec(h, other, new dev.sandbox4j.spi.OutputSink(other)));
        } finally {
            driver.destroy(h);
        }
        assertEquals(0, driver.labelledResources(runId));
    }
}
