package dev.sandbox4j.emulators.modal;

import static dev.sandbox4j.emulators.modal.WireClient.definition;
import static dev.sandbox4j.emulators.modal.WireClient.fails;
import static dev.sandbox4j.emulators.modal.WireClient.readAll;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.google.protobuf.ByteString;
import dev.sandbox4j.emulators.modal.internal.proto.ModalApi;
import dev.sandbox4j.emulators.modal.internal.proto.ModalApi.NetworkAccess.NetworkAccessType;
import dev.sandbox4j.emulators.modal.internal.proto.RouterApi;
import dev.sandbox4j.emulators.modal.internal.proto.TaskCommandRouterGrpc;
import io.grpc.Status;
import java.nio.charset.StandardCharsets;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * What the emulator gained against modal.md and the SDKs: stdio delivered while the command runs, the
 * filesystem tool the JS SDK 0.11.1 runs (its content on stdin), a signal death as {@code signal},
 * and a sandbox by name and its tags. One sandbox, a few seconds.
 */
class ModalEmulatorStreamsTest {
    private static final String TOOL = "/__modal/.bin/modal-sandbox-fs-tools";

    private static RouterApi.TaskExecStartRequest.Builder exec(String task, String... argv) {
        return RouterApi.TaskExecStartRequest.newBuilder().setTaskId(task).setExecId(UUID.randomUUID().toString())
                .addAllCommandArgs(List.of(argv))
                .setStdoutConfig(RouterApi.TaskExecStdoutConfig.TASK_EXEC_STDOUT_CONFIG_PIPE)
                .setStderrConfig(RouterApi.TaskExecStderrConfig.TASK_EXEC_STDERR_CONFIG_PIPE);
    }

    private static RouterApi.TaskExecWaitResponse await(TaskCommandRouterGrpc.TaskCommandRouterBlockingStub r, String task, String exec) {
        return r.taskExecWait(RouterApi.TaskExecWaitRequest.newBuilder().setTaskId(task).setExecId(exec).build());
    }

    /** One run of the tool: exit code, stdout, stderr. */
    private static Object[] tool(TaskCommandRouterGrpc.TaskCommandRouterBlockingStub r, String task, String json, byte[] stdin) {
        RouterApi.TaskExecStartRequest e = exec(task, TOOL, json).build();
        r.taskExecStart(e);
        if (stdin != null) {
            r.taskExecStdinWrite(RouterApi.TaskExecStdinWriteRequest.newBuilder().setTaskId(task).setExecId(e.getExecId())
                    .setData(ByteString.copyFrom(stdin, 0, 2)).build());
            // a resend from offset 0 skips what was taken; then the rest with EOF
            r.taskExecStdinWrite(RouterApi.TaskExecStdinWriteRequest.newBuilder().setTaskId(task).setExecId(e.getExecId())
                    .setData(ByteString.copyFrom(stdin)).setEof(true).build());
        }
        int code = await(r, task, e.getExecId()).getCode();
        return new Object[] {code, new String(readAll(r, task, e.getExecId(), 0, 0), StandardCharsets.UTF_8),
                new String(readAll(r, task, e.getExecId(), 1, 0), StandardCharsets.UTF_8)};
    }

    @Test
    void streamsStdinFilesSignalsNamesAndTags() throws Exception {
        ObjectMapper json = new ObjectMapper();
        try (ModalEmulator emulator = ModalEmulator.builder().token("ak-test", "as-test").build();
                WireClient c = new WireClient(emulator)) {
            String[] ids = c.prepare();
            ModalApi.SandboxCreateV2Response created = c.cp().sandboxCreateV2(ModalApi.SandboxCreateV2Request.newBuilder()
                    .setAppId(ids[0]).setDefinition(definition(ids[1], NetworkAccessType.BLOCKED).setName("named-1")).build());
            String task = created.getTaskId();
            TaskCommandRouterGrpc.TaskCommandRouterBlockingStub r = c.router(created.getCommandRouterAccess().getUrl(),
                    created.getCommandRouterAccess().getJwt());
            try {
                // output while the command runs: the first line arrives while it sleeps far past this test
                ModalApi.SandboxCreateV2Response other = c.cp().sandboxCreateV2(ModalApi.SandboxCreateV2Request.newBuilder()
                        .setAppId(ids[0]).setDefinition(definition(ids[1], NetworkAccessType.BLOCKED)).build());
                try {
                    TaskCommandRouterGrpc.TaskCommandRouterBlockingStub o = c.router(other.getCommandRouterAccess().getUrl(),
                            other.getCommandRouterAccess().getJwt());
                    RouterApi.TaskExecStartRequest slow = exec(other.getTaskId(), "python3", "-c",
                            "import time\nprint('first', flush=True)\ntime.sleep(600)").setTimeoutSecs(600).build();
                    o.taskExecStart(slow);
                    Iterator<RouterApi.TaskExecStdioReadResponse> out = o.taskExecStdioRead(RouterApi.TaskExecStdioReadRequest
                            .newBuilder().setTaskId(other.getTaskId()).setExecId(slow.getExecId()).build());
                    assertEquals("first\n", out.next().getData().toStringUtf8());
                    RouterApi.TaskExecPollResponse running = o.taskExecPoll(RouterApi.TaskExecPollRequest.newBuilder()
                            .setTaskId(other.getTaskId()).setExecId(slow.getExecId()).build());
                    assertEquals(RouterApi.TaskExecPollResponse.ExitStatusCase.EXITSTATUS_NOT_SET, running.getExitStatusCase());
                } finally {
                    c.cp().sandboxTerminateV2(ModalApi.SandboxTerminateRequest.newBuilder().setSandboxId(other.getSandboxId()).build());
                }

                // the filesystem tool's WriteFile takes its content on stdin
                Object[] w = tool(r, task, "{\"WriteFile\":{\"path\":\"/sandbox/go\"}}", "go ✓".getBytes(StandardCharsets.UTF_8));
                assertEquals(0, w[0], String.valueOf(w[2]));

                Object[] read = tool(r, task, "{\"ReadFile\":{\"path\":\"/sandbox/go\"}}", null);
                assertEquals(List.of(0, "go ✓", ""), List.of(read));
                Object[] listed = tool(r, task, "{\"ListFiles\":{\"path\":\"/sandbox\"}}", null);
                assertEquals(0, listed[0]);
                JsonNode entries = json.readTree((String) listed[1]);
                JsonNode go = null;
                for (JsonNode e : entries) {
                    if (e.path("name").asText().equals("go")) {
                        go = e;
                    }
                }
                assertEquals("file", go.path("type").asText(), entries.toString());
                assertEquals("/sandbox/go", go.path("path").asText());
                assertEquals("go ✓".getBytes(StandardCharsets.UTF_8).length, go.path("size").asInt());
                Object[] missing = tool(r, task, "{\"Stat\":{\"path\":\"/sandbox/nope\"}}", null);
                assertEquals(1, missing[0]);
                assertEquals("NotFound", json.readTree((String) missing[2]).path("error_kind").asText());
                Object[] outside = tool(r, task, "{\"ReadFile\":{\"path\":\"/etc/passwd\"}}", null);
                assertEquals("PermissionDenied", json.readTree((String) outside[2]).path("error_kind").asText());

                // a command's own stdin is at its end: data is refused, as for a command that exited
                RouterApi.TaskExecStartRequest cat = exec(task, "cat").build();
                r.taskExecStart(cat);
                assertEquals(Status.Code.FAILED_PRECONDITION, fails(() -> r.taskExecStdinWrite(RouterApi.TaskExecStdinWriteRequest
                        .newBuilder().setTaskId(task).setExecId(cat.getExecId()).setData(ByteString.copyFromUtf8("x")).build()))
                        .getStatus().getCode());
                assertEquals(0, await(r, task, cat.getExecId()).getCode());

                // a signal death is signal 9 (modal.md 3.9), not exit code 137
                RouterApi.TaskExecStartRequest kill = exec(task, "bash", "-c", "kill -9 $$").build();
                r.taskExecStart(kill);
                RouterApi.TaskExecWaitResponse killed = await(r, task, kill.getExecId());
                assertEquals(RouterApi.TaskExecWaitResponse.ExitStatusCase.SIGNAL, killed.getExitStatusCase(), killed.toString());
                assertEquals(9, killed.getSignal());

                // by name: the V2 family finds it, V1 does not
                ModalApi.SandboxGetFromNameRequest byName = ModalApi.SandboxGetFromNameRequest.newBuilder()
                        .setAppName("emulator-test").setSandboxName("named-1").build();
                assertEquals(created.getSandboxId(), c.cp().sandboxGetFromNameV2(byName).getSandboxId());
                assertEquals(Status.Code.NOT_FOUND, fails(() -> c.cp().sandboxGetFromName(byName)).getStatus().getCode());
                assertEquals(Status.Code.NOT_FOUND, fails(() -> c.cp().sandboxGetFromNameV2(byName.toBuilder()
                        .setSandboxName("other").build())).getStatus().getCode());

                // tags: a set replaces the whole set
                c.cp().sandboxTagsSetV2(ModalApi.SandboxTagsSetRequest.newBuilder().setSandboxId(created.getSandboxId())
                        .addTags(tag("a", "1")).addTags(tag("b", "2")).build());
                assertEquals(Map.of("a", "1", "b", "2"), tags(c, created.getSandboxId()));
                c.cp().sandboxTagsSetV2(ModalApi.SandboxTagsSetRequest.newBuilder().setSandboxId(created.getSandboxId())
                        .addTags(tag("c", "3")).build());
                assertEquals(Map.of("c", "3"), tags(c, created.getSandboxId()));
                assertEquals(Status.Code.NOT_FOUND, fails(() -> c.cp().sandboxTagsGet(ModalApi.SandboxTagsGetRequest.newBuilder()
                        .setSandboxId(created.getSandboxId()).build())).getStatus().getCode());
            } finally {
                c.cp().sandboxTerminateV2(ModalApi.SandboxTerminateRequest.newBuilder().setSandboxId(created.getSandboxId()).build());
            }
            assertFalse(c.cp().sandboxGetFromNameV2(ModalApi.SandboxGetFromNameRequest.newBuilder().setAppName("emulator-test")
                    .setSandboxName("named-1").setIncludeTerminated(true).build()).getSandboxId().isEmpty());
            assertTrue(emulator.ledger().live() == 0, emulator.ledger().toString());
        }
    }

    private static ModalApi.SandboxTag tag(String name, String value) {
        return ModalApi.SandboxTag.newBuilder().setTagName(name).setTagValue(value).build();
    }

    private static Map<String, String> tags(WireClient c, String id) {
        Map<String, String> m = new TreeMap<>();
        c.cp().sandboxTagsGetV2(ModalApi.SandboxTagsGetRequest.newBuilder().setSandboxId(id).build()).getTagsList()
                .forEach(t -> m.put(t.getTagName(), t.getTagValue()));
        return m;
    }
}
