package dev.sandbox4j.daytona;

import dev.sandbox4j.tck.FailureCells;
import dev.sandbox4j.tck.FailureCells.Cell;
import dev.sandbox4j.tck.FailureCells.Expected;
import dev.sandbox4j.tck.FailureCells.Failure;
import dev.sandbox4j.tck.FailureCells.Phase;
import dev.sandbox4j.tool.CodeExecutionTool;
import java.time.Duration;
import java.util.List;
import mockwebserver3.MockResponse;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Issue 32 item 4: a 401, a 429 and a 404 during create, exec (the session exec that starts the code) and teardown
 * (the DELETE) reach the caller, and the agent tool, with their type and flags, and without the API
 * key. The error bodies echo the key, as a careless server might.
 */
class DaytonaFailureMatrixTest {
    private static final Duration CREATE_RETRY_AFTER = Duration.ZERO;
    private static final Duration EXEC_RETRY_AFTER = Duration.ofSeconds(3);
    private final DaytonaFake fake = new DaytonaFake();

    @AfterEach
    void stop() {
        fake.close();
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

    private static MockResponse answer(Failure f, Duration retryAfter) {
        int s = status(f);
        MockResponse.Builder b = new MockResponse.Builder().code(s).setHeader("Content-Type", "application/json")
                .body("{\"statusCode\":" + s + ",\"message\":\"refused for key " + DaytonaFake.KEY + "\"}");
        if (retryAfter != null) {
            b.setHeader("Retry-After", String.valueOf(retryAfter.toSeconds()));
        }
        return b.build();
    }

    private static Duration retryAfter(Cell c) {
        if (c.failure() != Failure.RATE_LIMIT) {
            return null;
        }
        return c.phase() == Phase.CREATE ? CREATE_RETRY_AFTER : EXEC_RETRY_AFTER;
    }

    /**
     * Daytona may answer a create with an error after inserting the sandbox, so the adapter treats any
     * create error but 401/403/429 as an unknown outcome and looks the run id up: a 404 on create keeps
     * its type and is flagged so (DaytonaDriver.mayHaveCreated).
     */
    private static Expected expected(Cell c) {
        boolean ambiguous = c.phase() == Phase.CREATE && c.failure() == Failure.NOT_FOUND;
        return new Expected(c.failure().type(), retryAfter(c), ambiguous);
    }

    /** Scripts one call: the answers in the order the adapter asks for them. */
    private void arm(Cell c) {
        fake.clearScript();
        MockResponse fault = answer(c.failure(), retryAfter(c));
        switch (c.phase()) {
            case CREATE -> {
                if (c.failure() == Failure.RATE_LIMIT) {
                    for (int i = 0; i < 3; i++) { // the lifecycle tries a 429 three times
                        fake.enqueue(fault);
                    }
                } else {
                    fake.enqueue(fault);
                }
                if (expected(c).requestMayHaveSucceeded()) {
                    // the lookup by run id: an empty list, then the name not found
                    fake.json(200, "{\"items\":[],\"nextCursor\":null}");
                    fake.json(404, "{\"statusCode\":404,\"message\":\"not found\"}");
                }
            }
            case EXEC -> {
                fake.json(200, fake.sandbox("sbx-1", "started"));
                fake.json(200, "{\"files\":[]}"); // the program's upload
                fake.enqueue(new MockResponse.Builder().code(201).build()); // the session
                fake.enqueue(fault); // its exec, the call that starts the code
                fake.sessionDeleted();
                fake.json(200, fake.sandbox("sbx-1", "started")); // the delete
            }
            case TEARDOWN -> {
                fake.json(200, fake.sandbox("sbx-1", "started"));
                fake.sessionRun(0, DaytonaFake.stdout("1\n"));
                int n = c.failure() == Failure.RATE_LIMIT ? 64 : 1; // retried until the teardown deadline
                for (int i = 0; i < n; i++) {
                    fake.enqueue(fault);
                }
            }
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cells")
    void eachFailureKeepsItsType(Cell c) {
        try (DaytonaSandboxRunner r = fake.runner().teardownTimeout(Duration.ofMillis(150)).build()) {
            FailureCells.walk(c, r, () -> arm(c),
                    onResult -> CodeExecutionTool.builder(r).onResult(onResult).build().execute("print(1)", "python", null),
                    expected(c), DaytonaFake.KEY);
        }
    }
}
