package dev.sandbox4j.docker;

import dev.sandbox4j.api.exception.SandboxConfigurationException;
import dev.sandbox4j.api.exception.SandboxException;
import dev.sandbox4j.tck.FailureCells;
import dev.sandbox4j.tck.FailureCells.Cell;
import dev.sandbox4j.tck.FailureCells.Failure;
import dev.sandbox4j.tck.FailureCells.Phase;
import dev.sandbox4j.tool.CodeExecutionTool;
import java.io.IOException;
import java.time.Duration;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.concurrent.atomic.AtomicInteger;
import mockwebserver3.Dispatcher;
import mockwebserver3.MockResponse;
import mockwebserver3.MockWebServer;
import mockwebserver3.RecordedRequest;
import okio.Buffer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Issue 32 item 4: a 401, a 429 and a 404 from the engine (or a proxy in front of it) during create
 * ({@code POST /containers/create}), exec (the code's {@code POST /containers/{id}/exec}, or a one-shot's
 * {@code POST /containers/{id}/attach}: both runner paths are walked) and teardown
 * ({@code DELETE /containers/{id}}) reach the caller, and the agent tool, with their type and flags.
 * A small engine over TCP on loopback (MockWebServer), as {@code DOCKER_HOST=tcp://...} reaches one,
 * answering the calls one run makes; no real engine. The engine API carries no credential of its own,
 * so there is no secret to check here.
 */
class DockerFailureMatrixTest {
    private MockWebServer server;
    private final Engine engine = new Engine();

    @BeforeEach
    void start() throws IOException {
        server = new MockWebServer();
        server.setDispatcher(engine);
        server.start();
    }

    @AfterEach
    void stop() {
        server.close();
    }

    static List<Cell> cells() {
        return FailureCells.cells();
    }

    /** The engine's answers to one run, with a queue of faults per route. */
    static final class Engine extends Dispatcher {
        final Map<String, Deque<MockResponse>> faults = new ConcurrentHashMap<>();
        final AtomicInteger ids = new AtomicInteger();

        @Override
        public MockResponse dispatch(RecordedRequest r) {
            String m = r.getMethod();
            String p = r.getUrl().encodedPath().replaceFirst("^/v1\\.41", "");
            String route = m.equals("POST") && p.equals("/containers/create") ? "create"
                    // the code's call: an exec's create, or a one-shot's attach (its code is the container's process)
                    : m.equals("POST") && p.matches("/containers/[^/]+/(exec|attach)") ? "exec"
                    : m.equals("DELETE") && p.matches("/containers/[^/]+") ? "remove" : "";
            Deque<MockResponse> q = faults.get(route);
            MockResponse fault = q == null ? null : q.poll();
            if (fault != null) {
                return fault;
            }
            if (m.equals("GET") && p.equals("/version")) {
                return json(200, "{\"Version\":\"27.0.0\",\"ApiVersion\":\"1.46\",\"Os\":\"linux\",\"Arch\":\"amd64\","
                        + "\"Components\":[{\"Name\":\"Engine\"}]}");
            }
            if (m.equals("GET") && p.matches("/images/[^/]+/json")) {
                return json(200, "{\"Id\":\"sha256:0123\"}");
            }
            if (m.equals("GET") && p.equals("/containers/json")) {
                return json(200, "[]");
            }
            if (m.equals("GET") && p.equals("/volumes")) {
                return json(200, "{\"Volumes\":[]}");
            }
            switch (route) {
                case "create":
                    return json(201, "{\"Id\":\"c" + ids.incrementAndGet() + "\",\"Warnings\":[]}");
                case "exec":
                    if (p.endsWith("/attach")) {
                        return stream();
                    }
                    return json(201, "{\"Id\":\"e" + ids.incrementAndGet() + "\"}");
                case "remove":
                    return new MockResponse.Builder().code(204).build();
                default:
                    break;
            }
            if (m.equals("POST") && p.matches("/containers/[^/]+/(start|kill)")) {
                return new MockResponse.Builder().code(204).build();
            }
            if (m.equals("POST") && p.matches("/exec/[^/]+/start")) {
                return stream();
            }
            if (m.equals("POST") && p.matches("/containers/[^/]+/wait")) {
                return json(200, "{\"StatusCode\":0}");
            }
            if (m.equals("GET") && p.matches("/exec/[^/]+/json")) {
                return json(200, "{\"Running\":false,\"ExitCode\":0}");
            }
            if (m.equals("GET") && p.matches("/containers/[^/]+/json")) {
                return json(200, "{\"State\":{\"Running\":true}}");
            }
            return json(404, "{\"message\":\"page not found: " + m + " " + p + "\"}");
        }

        /** The multiplexed stream of a command that printed {@code 1}. */
        static MockResponse stream() {
            byte[] out = "1\n".getBytes(java.nio.charset.StandardCharsets.UTF_8);
            Buffer b = new Buffer().writeByte(1).write(new byte[3]).writeInt(out.length).write(out);
            return new MockResponse.Builder().code(200)
                    .setHeader("Content-Type", "application/vnd.docker.raw-stream").body(b).build();
        }

        static MockResponse json(int status, String body) {
            return new MockResponse.Builder().code(status).setHeader("Content-Type", "application/json").body(body).build();
        }
    }

    private static int status(Failure f) {
        return switch (f) {
            case AUTHENTICATION -> 401;
            case RATE_LIMIT -> 429;
            case NOT_FOUND -> 404;
        };
    }

    private static String route(Phase p) {
        return switch (p) {
            case CREATE -> "create";
            case EXEC -> "exec";
            case TEARDOWN -> "remove";
        };
    }

    /** Retry-After 0 on a 429, so the lifecycle's three create attempts go at once. */
    private void arm(Cell c) {
        int s = status(c.failure());
        MockResponse.Builder b = new MockResponse.Builder().code(s).setHeader("Content-Type", "application/json")
                .body("{\"message\":\"refused (" + s + ")\"}");
        if (c.failure() == Failure.RATE_LIMIT) {
            b.setHeader("Retry-After", "0");
        }
        Deque<MockResponse> q = new ConcurrentLinkedDeque<>();
        for (int i = 0; i < 8; i++) {
            q.add(b.build());
        }
        engine.faults.clear();
        engine.faults.put(route(c.phase()), q);
    }

    /**
     * The engine's 404 to a create is its "No such image": the runner says so as a configuration error
     * naming the pull command (DockerDriver.missingImage), rather than a not-found sandbox.
     */
    private static Class<? extends SandboxException> expected(Cell c) {
        return c.phase() == Phase.CREATE && c.failure() == Failure.NOT_FOUND
                ? SandboxConfigurationException.class : c.failure().type();
    }

    /** A one-shot's code as its container's process (the default), or as an exec in a session's container. */
    private DockerSandboxRunner runner(boolean oneShotAsContainerProcess) {
        return DockerSandboxRunner.builder().dockerHost("tcp://127.0.0.1:" + server.getPort()).image("img")
                .oneShotAsContainerProcess(oneShotAsContainerProcess).teardownTimeout(Duration.ofMillis(150)).build();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cells")
    void eachFailureKeepsItsType(Cell c) {
        for (boolean oneShot : new boolean[] {true, false}) {
            try (DockerSandboxRunner r = runner(oneShot)) {
                FailureCells.walk(c, r, () -> arm(c),
                        onResult -> CodeExecutionTool.builder(r).onResult(onResult).build().execute("print(1)", "python", null),
                        expected(c), c.failure() == Failure.RATE_LIMIT ? Duration.ZERO : null);
            }
        }
    }

    /** The control: with no fault armed, the engine above runs the code (so the cells fail for their fault alone). */
    @Test
    void theEngineRunsACleanRun() {
        for (boolean oneShot : new boolean[] {true, false}) {
            try (DockerSandboxRunner r = runner(oneShot)) {
                dev.sandbox4j.api.RunResult result = r.run(dev.sandbox4j.api.RunRequest.python("print(1)"));
                org.junit.jupiter.api.Assertions.assertEquals("1\n", result.stdout());
                org.junit.jupiter.api.Assertions.assertEquals(dev.sandbox4j.api.Teardown.DESTROYED, result.teardown());
            }
        }
    }
}
