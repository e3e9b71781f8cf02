package dev.sandbox4j.modal;

import static org.junit.jupiter.api.Assertions.assertFalse;

import com.google.protobuf.Any;
import dev.sandbox4j.modal.internal.proto.ModalApi;
import dev.sandbox4j.tck.FailureCells;
import dev.sandbox4j.tck.FailureCells.Cell;
import dev.sandbox4j.tck.FailureCells.Failure;
import dev.sandbox4j.tck.FailureCells.Phase;
import dev.sandbox4j.tool.CodeExecutionTool;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Issue 32 item 4: UNAUTHENTICATED, RESOURCE_EXHAUSTED (with Modal's retry policy) and NOT_FOUND
 * during create (SandboxCreateV2), exec (the router's TaskExecStart) and teardown (SandboxTerminateV2)
 * reach the caller, and the agent tool, with their type and flags, and without the token or the
 * router's JWT. The status descriptions echo the token, as a careless server might.
 */
class ModalFailureMatrixTest extends ModalTestBase {
    private static final Duration RETRY_AFTER = Duration.ofSeconds(3);

    static List<Cell> cells() {
        return FailureCells.cells();
    }

    private static StatusRuntimeException status(Failure f) {
        String echo = "refused for " + TOKEN_ID + ":" + TOKEN_SECRET;
        return switch (f) {
            case AUTHENTICATION -> Status.UNAUTHENTICATED.withDescription(echo).asRuntimeException();
            case NOT_FOUND -> Status.NOT_FOUND.withDescription(echo).asRuntimeException();
            case RATE_LIMIT -> {
                Metadata trailers = new Metadata();
                ModalApi.RPCStatus details = ModalApi.RPCStatus.newBuilder().setCode(Status.Code.RESOURCE_EXHAUSTED.value())
                        .addDetails(Any.pack(ModalApi.RPCRetryPolicy.newBuilder()
                                .setRetryAfterSecs(RETRY_AFTER.toSeconds()).build())).build();
                trailers.put(Metadata.Key.of("grpc-status-details-bin", Metadata.BINARY_BYTE_MARSHALLER), details.toByteArray());
                yield Status.RESOURCE_EXHAUSTED.withDescription(echo).asRuntimeException(trailers);
            }
        };
    }

    private static String method(Phase p) {
        return switch (p) {
            case CREATE -> "SandboxCreateV2";
            case EXEC -> "TaskExecStart";
            case TEARDOWN -> "SandboxTerminateV2";
        };
    }

    /**
     * Arms the method of the phase: more answers than any retry uses (an UNAUTHENTICATED is sent again
     * once with fresh credentials, a throttled create is retried by the lifecycle, a failing terminate
     * until the teardown deadline); the test's sleeper records instead of sleeping.
     */
    private void arm(Cell c) {
        String m = method(c.phase());
        fake.faults.remove(m);
        for (int i = 0; i < 32; i++) {
            fake.fail(m, status(c.failure()));
        }
    }

    /**
     * RESOURCE_EXHAUSTED without Modal's retry policy is the provider at its limit as well: a rate limit
     * as the API defines it, not the capacity failure of a local cap (it was one before).
     */
    @org.junit.jupiter.api.Test
    void resourceExhaustedWithoutARetryPolicyIsARateLimitToo() {
        ModalSandboxRunner r = builder().maxCreateAttempts(1).build();
        Runnable arm = () -> fake.fail("SandboxCreateV2", Status.RESOURCE_EXHAUSTED.withDescription("too many sandboxes"));
        try {
            arm.run();
            FailureCells.assertTyped(org.junit.jupiter.api.Assertions.assertThrows(RuntimeException.class,
                    () -> r.run(dev.sandbox4j.api.RunRequest.python("print(1)"))),
                    Failure.RATE_LIMIT.type(), Failure.RATE_LIMIT, null, TOKEN_ID, TOKEN_SECRET);
            arm.run();
            FailureCells.assertToolText(CodeExecutionTool.builder(r).build().execute("print(1)", "python", null),
                    Failure.RATE_LIMIT.type(), Failure.RATE_LIMIT, TOKEN_ID, TOKEN_SECRET);
        } finally {
            r.close();
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cells")
    void eachFailureKeepsItsType(Cell c) {
        // a throttle wait the RPC layer does not take itself, so the lifecycle's create attempts are what is exhausted
        ModalSandboxRunner r = builder().maxThrottleWait(Duration.ZERO).maxCreateAttempts(2)
                .teardownTimeout(Duration.ofMillis(150)).build();
        try {
            FailureCells.walk(c, r, () -> arm(c),
                    onResult -> CodeExecutionTool.builder(r).onResult(onResult).build().execute("print(1)", "python", null),
                    c.failure().type(), c.failure() == Failure.RATE_LIMIT ? RETRY_AFTER : null,
                    TOKEN_ID, TOKEN_SECRET, fake.routerJwt, fake.authToken);
        } finally {
            r.close();
        }
        assertFalse(fake.calls(method(c.phase())).isEmpty(), "the armed method was called");
        fake.faults.clear();
        if (c.phase() == Phase.TEARDOWN) {
            fake.sandboxes.values().forEach(s -> s.alive = false); // left for Modal's lifetime clock, as the contract says
        }
    }
}
