package dev.sandbox4j.kubernetes;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.sandbox4j.api.SweepRequest;
import dev.sandbox4j.emulators.Faults;
import dev.sandbox4j.tck.FailureCells;
import dev.sandbox4j.api.Teardown;
import dev.sandbox4j.tck.FailureCells.Cell;
import dev.sandbox4j.tck.FailureCells.Expected;
import dev.sandbox4j.tck.FailureCells.Failure;
import dev.sandbox4j.tck.FailureCells.Phase;
import dev.sandbox4j.tool.CodeExecutionTool;
import io.fabric8.kubernetes.client.Config;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Issue 32 item 4: a 401, a 429 and a 404 from the API server during create (the Sandbox POST), exec
 * (the pod's exec) and teardown (the Sandbox DELETE) reach the caller, and the agent tool, with their
 * type and flags, and without the bearer token. On the agent-sandbox emulator's fault knobs.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class KubernetesFailureMatrixTest {
    private static final String TOKEN = "k8s-matrix-bearer-7d41c0a9e2f35b68";
    private EmulatedCluster cluster;

    @BeforeAll
    void start() {
        cluster = new EmulatedCluster();
    }

    @AfterAll
    void stop() {
        cluster.close();
    }

    @AfterEach
    void nothingLeft() throws InterruptedException {
        cluster.emulator.faults().reset();
        long until = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (cluster.leaks() != 0 && System.nanoTime() < until) {
            Thread.sleep(20);
        }
        assertEquals(0, cluster.leaks(), "pods, objects and local sandboxes left: " + cluster.emulator.calls());
    }

    static List<Cell> cells() {
        return FailureCells.cells();
    }

    private static int status(Failure f) {
        return switch (f) {
            case AUTHENTICATION -> 401;
            case RATE_LIMIT -> 429;
            case NOT_FOUND -> 404;
        };
    }

    private void arm(Cell c) {
        Faults faults = cluster.emulator.faults().reset();
        int s = status(c.failure());
        switch (c.phase()) {
            case CREATE -> faults.failCreate(s, 3); // the lifecycle tries a 429 three times; others once
            case EXEC -> faults.failExec(s, 1);
            case TEARDOWN -> faults.failTeardown(s, 64); // a 429 is retried until the teardown deadline
        }
    }

    /**
     * A 404 on the Sandbox's DELETE is no failure; the NetworkPolicy the runner made for it is deleted
     * next, and that counts as destroying what was left (as the sweep of an expired Sandbox reports it).
     */
    private static Expected expected(Cell c) {
        Teardown t = c.phase() == Phase.TEARDOWN && c.failure() == Failure.NOT_FOUND ? Teardown.DESTROYED : null;
        return new Expected(c.failure().type(), null, false, t);
    }

    private KubernetesSandboxRunner.Builder builder() {
        KubernetesSandboxRunner.Builder b = cluster.runner().owner("failure-matrix")
                .teardownTimeout(Duration.ofMillis(150)).retryBaseDelay(Duration.ofMillis(1));
        Config config = Config.empty();
        config.setNamespace("sandboxes");
        config.setOauthToken(TOKEN);
        return b.config(config);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cells")
    void eachFailureKeepsItsType(Cell c) {
        try (KubernetesSandboxRunner r = builder().build()) {
            try {
                FailureCells.walk(c, r, () -> arm(c),
                        onResult -> CodeExecutionTool.builder(r).onResult(onResult).build().execute("print(1)", "python", null),
                        expected(c), c.phase() == Phase.CREATE, TOKEN); // a pod start costs: exec cells by run() and the tool
            } finally {
                if (c.phase() == Phase.TEARDOWN) {
                    // what a failed teardown left: the sweep of this owner destroys it
                    cluster.emulator.faults().reset();
                    r.sweep(SweepRequest.builder().allOfOwner().build());
                }
            }
        }
    }
}
