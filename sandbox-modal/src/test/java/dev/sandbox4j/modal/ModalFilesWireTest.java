package dev.sandbox4j.modal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.sandbox4j.api.FileEntry;
import dev.sandbox4j.api.Sandbox;
import dev.sandbox4j.api.exception.SandboxException;
import dev.sandbox4j.api.SandboxFile;
import dev.sandbox4j.api.SandboxSpec;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Reads and listings go through Modal's filesystem tool as the JS SDK 0.11.1's {@code sandbox.filesystem}
 * runs it (dist/index.js {@code readBytes}, {@code listFiles}, {@code stat}): per operation a
 * {@code TaskExecStart} with exactly what {@code buildTaskExecStartRequestProto} sends without
 * parameters (task id, exec id, {@code [tool, JSON]}, both streams PIPE), then {@code TaskExecWait}, then
 * one {@code TaskExecStdioRead} (stdout on exit 0).
 */
class ModalFilesWireTest extends ModalTestBase {

    @Test
    void readsAndListingsAreTheSdksFilesystemToolCalls() {
        runner.close();
        runner = builder().workdir(FakeModal.TOOL_ROOT).build();
        try (Sandbox sb = runner.open(SandboxSpec.builder().file("d/a.txt", "hello").build())) {
            int from = fake.calls.size();
            SandboxFile f = sb.readFile("d/a.txt", 3);
            assertEquals("hel", new String(f.content()));
            assertEquals(5, f.size());
            assertTrue(f.truncated());
            assertEquals(List.of(FileEntry.of("d/a.txt", FileEntry.Type.FILE, 5)), sb.listFiles("d"));
            SandboxException missing = assertThrows(SandboxException.class, () -> sb.readFile("d/missing.txt", 10));
            assertEquals(404, missing.httpStatus().orElse(0), missing.getMessage());

            List<FakeModal.Call> calls = new ArrayList<>(fake.calls.subList(from, fake.calls.size()));
            List<String> ops = new ArrayList<>();
            for (int i = 0; i < calls.size(); i += 3) {
                assertEquals("TaskExecStart", calls.get(i).method);
                ObjectNode start = json(calls.get(i).request);
                String execId = start.remove("exec_id").asText();
                assertTrue(ModalWireTest.UUID.matcher(execId).matches(), execId);
                String command = start.path("command_args").get(1).asText();
                ops.add(command);
                ObjectNode want = JSON.createObjectNode();
                want.put("task_id", start.path("task_id").asText());
                want.putArray("command_args").add(FakeModal.FS_TOOLS).add(command);
                want.put("stdout_config", "TASK_EXEC_STDOUT_CONFIG_PIPE").put("stderr_config", "TASK_EXEC_STDERR_CONFIG_PIPE");
                assertEquals(want, start, "what the SDK's exec sends for the tool, nothing more");
                assertEquals("TaskExecWait", calls.get(i + 1).method);
                assertEquals(execId, json(calls.get(i + 1).request).path("exec_id").asText());
                assertEquals("TaskExecStdioRead", calls.get(i + 2).method);
                ObjectNode read = json(calls.get(i + 2).request);
                assertEquals(execId, read.path("exec_id").asText());
                // stdout (the proto default, 0, is not on the wire) after exit 0; stderr after a failure
                assertEquals(command.contains("missing") ? "TASK_EXEC_STDIO_FILE_DESCRIPTOR_STDERR" : "",
                        read.path("file_descriptor").asText(""));
            }
            assertEquals(List.of(
                    "{\"Stat\":{\"path\":\"/tmp/d\"}}", "{\"Stat\":{\"path\":\"/tmp/d/a.txt\"}}",
                    "{\"ReadFile\":{\"path\":\"/tmp/d/a.txt\"}}",
                    "{\"Stat\":{\"path\":\"/tmp/d\"}}", "{\"ListFiles\":{\"path\":\"/tmp/d\"}}",
                    "{\"Stat\":{\"path\":\"/tmp/d\"}}", "{\"Stat\":{\"path\":\"/tmp/d/missing.txt\"}}"), ops);
        }
    }
}
