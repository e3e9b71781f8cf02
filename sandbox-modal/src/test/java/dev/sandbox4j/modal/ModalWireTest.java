package dev.sandbox4j.modal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.sandbox4j.api.Execution;
import dev.sandbox4j.api.RunRequest;
import dev.sandbox4j.api.RunResult;
import dev.sandbox4j.api.RunStatus;
import dev.sandbox4j.api.SandboxSpec;
import dev.sandbox4j.spi.CreateRequest;
import dev.sandbox4j.modal.internal.proto.ModalRouterApi;
import dev.sandbox4j.policy.Limits;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The requests of one run, field by field, against what the JS SDK 0.11.1 sent in the shared
 * recordings ({@code modal-v2-default-create-exec-terminate}, {@code modal-v1-create-exec-terminate}),
 * with the same image (python:3.13-slim plus one RUN layer), lifetime 600 s, memory 1024 MiB, deny-all
 * egress, gVisor, workdir /tmp and a 30 s exec. The deliberate differences are spelled out in
 * {@link #expected}: the entrypoint, the resources (an integer vCPU limit set as reservation and cap),
 * the run-id tag, no empty {@code open_ports}, the random exec id and the kill marker in the exec env.
 */
class ModalWireTest extends ModalTestBase {
    static final String CODE = "import sys; print('hi'); print('err', file=sys.stderr); sys.exit(3)";
    static final Pattern UUID = Pattern.compile("[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}");

    private ModalSandboxRunner recordedSetup(boolean v2) {
        runner.close();
        runner = builder().sandboxV2(v2).appName("java-modal-research").image("python:3.13-slim")
                .dockerfileCommands(List.of("RUN pip install --no-cache-dir requests"))
                .runtime("gvisor").workdir("/tmp").build();
        return runner;
    }

    private RunResult recordedRun() {
        SandboxSpec spec = SandboxSpec.builder()
                .limits(Limits.builder().lifetime(Duration.ofSeconds(600)).memoryMib(1024).vcpus(1).build()).build();
        return runner.run(RunRequest.of(spec, Execution.builder(CODE).budget(Duration.ofSeconds(30)).build()));
    }

    @Test
    void v2RunMatchesTheJsSdkRecording() throws IOException {
        recordedSetup(true);
        RunResult r = recordedRun();
        assertEquals("hi\n", r.stdout());
        assertEquals("err\n", r.stderr());
        assertEquals(3, r.exitCode().getAsInt());
        assertEquals(RunStatus.EXITED, r.status());
        assertMatches(recording("modal-v2-default-create-exec-terminate.json"));
    }

    @Test
    void v1RunMatchesTheJsSdkRecording() throws IOException {
        recordedSetup(false);
        RunResult r = recordedRun();
        assertEquals("hi\n", r.stdout());
        assertEquals(3, r.exitCode().getAsInt());
        assertMatches(recording("modal-v1-create-exec-terminate.json"));
    }

    private void assertMatches(JsonNode rec) {
        List<JsonNode> recorded = new ArrayList<>();
        rec.path("calls").forEach(recorded::add);
        List<FakeModal.Call> ours = new ArrayList<>(fake.calls);
        List<String> recordedMethods = recorded.stream().map(c -> shortName(c.path("rpc").asText())).toList();
        sortStdioReads(recorded, ours);
        assertEquals(recordedMethods, ours.stream().map(c -> c.method).toList(), "the RPC sequence");
        String execId = null;
        for (int i = 0; i < recorded.size(); i++) {
            JsonNode want = recorded.get(i);
            FakeModal.Call got = ours.get(i);
            ObjectNode gotJson = json(got.request);
            if (got.method.equals("TaskExecStart")) {
                execId = gotJson.path("exec_id").asText();
                assertTrue(UUID.matcher(execId).matches(), "exec_id is a UUID v4: " + execId);
                assertEquals(execId, gotJson.path("env").path("SANDBOX4J_EXEC_ID").asText(), "the kill marker");
            }
            if (got.method.startsWith("TaskExecStdio") || got.method.equals("TaskExecWait")) {
                assertEquals(execId, gotJson.path("exec_id").asText(), got.method + " names the started exec");
            }
            if (got.method.startsWith("SandboxCreate")) {
                JsonNode tags = gotJson.path("tags");
                assertEquals(2, tags.size(), "two tags: the run id and the policy an attach checks");
                assertEquals(CreateRequest.RUN_ID_LABEL, tags.get(0).path("tag_name").asText());
                assertTrue(tags.get(0).path("tag_value").asText().matches("[a-z0-9]+"));
                assertEquals(CreateRequest.POLICY_LABEL, tags.get(1).path("tag_name").asText());
                assertTrue(tags.get(1).path("tag_value").asText().matches("[0-9]+s-[0-9a-f]{16}"),
                        tags.get(1).path("tag_value").asText());
            }
            assertEquals(canon(expected(got.method, want.path("request"))), canon(normalized(got.method, gotJson)),
                    "request " + (i + 1) + " " + got.method);
            assertHeaders(got, want);
        }
    }

    /** The recorded request, changed only where this adapter deliberately differs (each line says why). */
    static JsonNode expected(String method, JsonNode recorded) {
        ObjectNode e = recorded.deepCopy();
        if (method.startsWith("SandboxCreate")) {
            ObjectNode def = (ObjectNode) e.path("definition");
            // keep the sandbox up whatever the image's CMD (python:*-slim runs python3, which exits)
            def.putArray("entrypoint_args").add("sleep").add("infinity");
            // our limits are whole vCPUs, set as reservation and hard cap; the JS SDK sent 0.5 CPU as a reservation
            ObjectNode res = def.putObject("resources");
            res.put("memory_mb", 1024).put("memory_mb_max", 1024).put("milli_cpu", 1000).put("milli_cpu_max", 1000);
            // JS always sends an empty PortSpecs; no ports are opened here
            def.remove("open_ports");
        }
        if (method.equals("TaskExecStart") || method.startsWith("TaskExecStdio") || method.equals("TaskExecWait")) {
            e.remove("exec_id"); // random per exec, checked to be one UUID across the exec's calls
        }
        return e;
    }

    static JsonNode normalized(String method, ObjectNode got) {
        ObjectNode n = got.deepCopy();
        if (method.startsWith("SandboxCreate")) {
            n.remove("tags"); // the run id, random; checked above
        }
        if (method.equals("TaskExecStart") || method.startsWith("TaskExecStdio") || method.equals("TaskExecWait")) {
            n.remove("exec_id");
        }
        if (method.equals("TaskExecStart")) {
            n.remove("env"); // only the kill marker; checked above
        }
        return n;
    }

    private static void assertHeaders(FakeModal.Call got, JsonNode want) {
        JsonNode md = want.path("metadata");
        boolean router = want.path("rpc").asText().startsWith("/modal.task_command_router.");
        if (router) {
            assertTrue(got.header("authorization").startsWith("Bearer ey"), got.method + " carries the router JWT");
            assertNull(got.header("x-modal-token-id"), "no control-plane credentials on router calls");
            assertNull(got.header("x-modal-token-secret"), "no control-plane credentials on router calls");
            return;
        }
        assertNull(got.header("authorization"), got.method);
        for (String name : List.of("x-modal-client-type", "x-modal-client-version", "x-modal-host")) {
            assertEquals(md.path(name).asText(), got.header(name), got.method + " " + name);
        }
        assertEquals(TOKEN_ID, got.header("x-modal-token-id"));
        assertEquals(TOKEN_SECRET, got.header("x-modal-token-secret"));
        assertTrue(got.header("x-modal-libmodal-version").startsWith("sandbox4j-modal/"));
        assertEquals(md.has("x-modal-auth-token"), got.header("x-modal-auth-token") != null, got.method + " x-modal-auth-token");
        if (md.has("x-idempotency-key")) {
            assertTrue(UUID.matcher(got.header("x-idempotency-key")).matches(), got.method + " x-idempotency-key");
            assertEquals("0", got.header("x-retry-attempt"));
            assertEquals("0", got.header("x-throttle-retry-attempt"));
        } else {
            assertNull(got.header("x-idempotency-key"), got.method + " (streams are not retried)");
        }
    }

    /** The two stdio reads and the wait run concurrently: put ours in the recorded order (stdout, stderr, wait). */
    private static void sortStdioReads(List<JsonNode> recorded, List<FakeModal.Call> ours) {
        inRecordedOrder(ours);
        int first = ours.indexOf(ours.stream().filter(c -> c.method.equals("TaskExecStdioRead")).findFirst().orElseThrow());
        assertEquals("TASK_EXEC_STDIO_FILE_DESCRIPTOR_STDERR",
                recorded.get(first + 1).path("request").path("file_descriptor").asText(), "the recording reads stdout, then stderr");
    }

    /** Sorts each run's three concurrent router calls after TaskExecStart: stdout read, stderr read, wait. */
    static void inRecordedOrder(List<FakeModal.Call> calls) {
        for (int i = 0; i + 3 < calls.size(); i++) {
            if (calls.get(i).method.equals("TaskExecStart")) {
                List<FakeModal.Call> three = new ArrayList<>(calls.subList(i + 1, i + 4));
                three.sort(Comparator.comparingInt(ModalWireTest::concurrentRank));
                for (int k = 0; k < 3; k++) {
                    calls.set(i + 1 + k, three.get(k));
                }
            }
        }
    }

    private static int concurrentRank(FakeModal.Call c) {
        if (c.request instanceof ModalRouterApi.TaskExecStdioReadRequest) {
            return ((ModalRouterApi.TaskExecStdioReadRequest) c.request).getFileDescriptorValue();
        }
        return c.method.equals("TaskExecWait") ? 2 : 3;
    }

    static String shortName(String rpc) {
        return rpc.substring(rpc.lastIndexOf('/') + 1);
    }

    @Test
    void laterRunsOnOneRunnerMakeSixRpcsOnV2() {
        recordedSetup(true);
        recordedRun();
        int afterFirst = fake.calls.size();
        RunResult r = recordedRun();
        assertEquals(3, r.exitCode().getAsInt());
        List<FakeModal.Call> all = new ArrayList<>(fake.calls);
        inRecordedOrder(all);
        List<String> second = all.subList(afterFirst, all.size()).stream().map(c -> c.method).toList();
        assertEquals(List.of("SandboxCreateV2", "TaskExecStart", "TaskExecStdioRead", "TaskExecStdioRead", "TaskExecWait",
                "SandboxTerminateV2"), second);
        assertEquals(fake.calls.size(), driver(runner).rpcCount(), "the driver counts what the server saw");
    }

    @Test
    void laterRunsOnOneRunnerOnV1AlsoPollTheTaskAndFetchTheRouter() {
        recordedSetup(false);
        recordedRun();
        int afterFirst = fake.calls.size();
        recordedRun();
        List<FakeModal.Call> all = new ArrayList<>(fake.calls);
        inRecordedOrder(all);
        List<String> second = all.subList(afterFirst, all.size()).stream().map(c -> c.method).toList();
        assertEquals(List.of("SandboxCreate", "SandboxGetTaskId", "SandboxGetTaskId", "TaskGetCommandRouterAccess",
                "TaskExecStart", "TaskExecStdioRead", "TaskExecStdioRead", "TaskExecWait", "SandboxTerminate"), second);
    }
}
