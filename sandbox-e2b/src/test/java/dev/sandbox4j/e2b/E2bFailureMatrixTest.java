package dev.sandbox4j.e2b;

import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sandbox4j.api.exception.SandboxConfigurationException;
import dev.sandbox4j.api.exception.SandboxException;
import dev.sandbox4j.tck.FailureCells;
import dev.sandbox4j.tck.FailureCells.Cell;
import dev.sandbox4j.tck.FailureCells.Failure;
import dev.sandbox4j.tck.FailureCells.Phase;
import dev.sandbox4j.tool.CodeExecutionTool;
import java.time.Duration;
import java.util.List;
import mockwebserver3.MockResponse;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Issue 32 item 4: a 401, a 429 and a 404 during create, exec (envd's Process/Start) and teardown reach
 * the caller, and the agent tool, with their type and flags, and without the API key or the envd token.
 * The provider's error bodies echo the key, as a careless server might.
 */
class E2bFailureMatrixTest extends WireTestBase {
    /** A 429 on create is retried (twice here); the last one's Retry-After reaches the caller. */
    private static final Duration CREATE_RETRY_AFTER = Duration.ZERO;
    private static final Duration EXEC_RETRY_AFTER = Duration.ofSeconds(3);

    static List<Cell> cells() {
        return FailureCells.cells();
    }

    private E2bSandboxRunner matrixRunner() {
        return builder().maxCreateAttempts(2).teardownTimeout(Duration.ofMillis(150)).build();
    }

    private static int status(Failure f) {
        return switch (f) {
            case AUTHENTICATION -> 401;
            case RATE_LIMIT -> 429;
            case NOT_FOUND -> 404;
        };
    }

    /** The answer echoes {@code echoed} (the key; on envd, the token E2B issued with the sandbox too). */
    private static MockResponse answer(Failure f, Duration retryAfter, String echoed) {
        int s = status(f);
        MockResponse.Builder b = new MockResponse.Builder().code(s).setHeader("Content-Type", "application/json")
                .body("{\"code\":" + s + ",\"message\":\"refused for " + echoed + "\"}");
        if (retryAfter != null) {
            b.setHeader("Retry-After", String.valueOf(retryAfter.toSeconds()));
        }
        return b.build();
    }

    /** Arms one call's worth of the failure in its phase. */
    private void arm(Cell c) {
        switch (c.phase()) {
            case CREATE -> {
                int n = c.failure() == Failure.RATE_LIMIT ? 2 : 1; // the lifecycle retries a 429
                for (int i = 0; i < n; i++) {
                    fake.createFaults.add(answer(c.failure(), c.failure() == Failure.RATE_LIMIT ? CREATE_RETRY_AFTER : null,
                            "key " + KEY));
                }
            }
            case EXEC -> fake.starts.add(r -> answer(c.failure(), c.failure() == Failure.RATE_LIMIT ? EXEC_RETRY_AFTER : null,
                    "key " + KEY + " and token " + FakeE2b.TOKEN));
            case TEARDOWN -> {
                fake.deleteFaults.clear();
                for (int i = 0; i < 64; i++) {
                    fake.deleteFaults.add(status(c.failure())); // until the teardown deadline
                }
            }
        }
    }

    /** E2B's 404 on create is the template's: documented as a configuration error, with the not-found as cause. */
    private static Class<? extends SandboxException> expected(Cell c) {
        return c.phase() == Phase.CREATE && c.failure() == Failure.NOT_FOUND
                ? SandboxConfigurationException.class : c.failure().type();
    }

    private static Duration retryAfter(Cell c) {
        if (c.failure() != Failure.RATE_LIMIT) {
            return null;
        }
        return c.phase() == Phase.CREATE ? CREATE_RETRY_AFTER : EXEC_RETRY_AFTER;
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cells")
    void eachFailureKeepsItsType(Cell c) {
        E2bSandboxRunner r = matrixRunner();
        FailureCells.walk(c, r, () -> arm(c),
                onResult -> CodeExecutionTool.builder(r).onResult(onResult).build().execute("print(1)", "python", null),
                expected(c), retryAfter(c), KEY, FakeE2b.TOKEN);
        assertTrue(fake.starts.isEmpty() && fake.createFaults.isEmpty(), "every armed fault was used");
        if (c.phase() == Phase.TEARDOWN) {
            fake.live.clear(); // left for the provider's lifetime clock, as the contract says
        }
    }
}
