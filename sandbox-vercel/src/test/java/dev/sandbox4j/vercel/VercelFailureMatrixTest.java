package dev.sandbox4j.vercel;

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
 * Issue 32 item 4: a 401, a 429 and a 404 during create, exec (the command stream) and teardown (the
 * session stop) reach the caller, and the agent tool, with their type and flags, and without the
 * token. The error bodies echo the token, as a careless server might.
 */
class VercelFailureMatrixTest extends StubTestBase {
    private static final Duration CREATE_RETRY_AFTER = Duration.ZERO;
    private static final Duration EXEC_RETRY_AFTER = Duration.ofSeconds(3);

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

    private static MockResponse answer(Failure f, Duration retryAfter) {
        int s = status(f);
        MockResponse m = VercelStub.json(s, "{\"error\":{\"code\":\"e" + s + "\",\"message\":\"refused for token "
                + TOKEN + "\"}}");
        return retryAfter == null ? m : m.newBuilder().setHeader("Retry-After", String.valueOf(retryAfter.toSeconds())).build();
    }

    private static Duration retryAfter(Cell c) {
        if (c.failure() != Failure.RATE_LIMIT) {
            return null;
        }
        return c.phase() == Phase.CREATE ? CREATE_RETRY_AFTER : EXEC_RETRY_AFTER;
    }

    private void arm(Cell c) {
        MockResponse m = answer(c.failure(), retryAfter(c));
        switch (c.phase()) {
            case CREATE -> {
                int n = c.failure() == Failure.RATE_LIMIT ? 3 : 1; // the lifecycle tries a 429 three times
                for (int i = 0; i < n; i++) {
                    stub.on("create", m);
                }
            }
            case EXEC -> stub.on("cmd", m);
            case TEARDOWN -> {
                int n = c.failure() == Failure.RATE_LIMIT ? 64 : 1; // retried until the teardown deadline
                for (int i = 0; i < n; i++) {
                    stub.on("stop", m);
                }
            }
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cells")
    void eachFailureKeepsItsType(Cell c) {
        VercelSandboxRunner r = runner(b -> b.teardownTimeout(Duration.ofMillis(150)));
        FailureCells.walk(c, r, () -> arm(c),
                onResult -> CodeExecutionTool.builder(r).onResult(onResult).build().execute("print(1)", "python", null),
                c.failure().type(), retryAfter(c), TOKEN);
    }
}
