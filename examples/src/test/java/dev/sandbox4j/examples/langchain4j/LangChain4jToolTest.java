package dev.sandbox4j.examples.langchain4j;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.langchain4j.agent.tool.ToolSpecification;
import dev.langchain4j.data.message.ChatMessage;
import dev.langchain4j.data.message.ToolExecutionResultMessage;
import dev.langchain4j.model.chat.request.ChatRequest;
import dev.sandbox4j.tool.CodeExecutionTool;
import dev.sandbox4j.examples.LocalRunnerFixture;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The example application through LangChain4j's own tool path (AiServices) with a scripted model, running code in the local sandbox. */
class LangChain4jToolTest {
    private static LocalRunnerFixture local;
    private static CodeExecutionTool tool;

    @BeforeAll
    static void start() throws Exception {
        local = new LocalRunnerFixture();
        tool = LangChain4jExample.codeTool(local.runner());
    }

    @AfterAll
    static void stop() throws Exception {
        local.close();
    }

    private static List<ToolExecutionResultMessage> toolResults(ChatRequest request) {
        return request.messages().stream()
                .filter(ToolExecutionResultMessage.class::isInstance)
                .map(ToolExecutionResultMessage.class::cast)
                .toList();
    }

    private static ToolExecutionResultMessage lastToolResult(ChatRequest request) {
        ChatMessage last = request.messages().get(request.messages().size() - 1);
        assertTrue(last instanceof ToolExecutionResultMessage, "last message: " + last);
        return (ToolExecutionResultMessage) last;
    }

    @Test
    void aToolCallFromTheModelRunsInTheSandboxAndTheModelGetsTheFencedResult() throws Exception {
        ScriptedChatModel model = new ScriptedChatModel()
                .toolCalls(ScriptedChatModel.call("call-1",
                        "{\"code\": \"import sys\\nprint(6 * 7)\\nprint('careful', file=sys.stderr)\\nsys.exit(3)\","
                                + " \"language\": \"python\", \"timeoutSeconds\": 3600}"))
                .answer("6 * 7 = 42");

        String answer = LangChain4jExample.assistant(model, tool).chat("What is 6 * 7? Use the tool.");

        assertEquals("6 * 7 = 42", answer);
        assertEquals(2, model.requests.size());
        ToolSpecification spec = model.requests.get(0).toolSpecifications().stream()
                .filter(s -> s.name().equals("run_code")).findFirst().orElseThrow();
        assertEquals(tool.description(), spec.description(), "the description names the limits");
        assertEquals(List.of("code", "language", "timeoutSeconds"), List.copyOf(spec.parameters().properties().keySet()));
        assertEquals(List.of("code"), spec.parameters().required());

        ToolExecutionResultMessage result = lastToolResult(model.requests.get(1));
        assertEquals("call-1", result.id());
        assertEquals("run_code", result.toolName());
        String text = result.text();
        Matcher m = Pattern.compile("<stdout marker=([0-9a-f]{32})>\n").matcher(text);
        assertTrue(m.find(), text);
        String b = m.group(1);
        assertTrue(text.startsWith("status: exited with code 3 after "), text);
        assertTrue(text.contains("\nnote: a timeout of 3600 s was asked for; the maximum is 30 s, so that was used\n"), text);
        assertTrue(text.contains("<stdout marker=" + b + ">\n42\n</stdout marker=" + b + ">\n"), text);
        assertTrue(text.contains("<stderr marker=" + b + ">\ncareful\n</stderr marker=" + b + ">\n"), text);
        assertEquals(0, local.leftovers(), "the sandbox was torn down");
    }

    @Test
    void aTaskSessionKeepsFilesAcrossToolCallsAndTearsDownAtTheEnd() throws Exception {
        ScriptedChatModel model = new ScriptedChatModel()
                .toolCalls(ScriptedChatModel.call("c1", "{\"code\": \"echo 'state kept' > notes.txt\", \"language\": \"bash\"}"))
                .toolCalls(ScriptedChatModel.call("c2", "{\"code\": \"print(open('notes.txt').read().strip())\"}"))
                .answer("done");

        assertEquals("done", LangChain4jExample.solve(model, tool, "Write a note, then read it back."));

        assertEquals(3, model.requests.size());
        assertTrue(lastToolResult(model.requests.get(1)).text().startsWith("status: exited with code 0"));
        String read = lastToolResult(model.requests.get(2)).text();
        assertTrue(read.contains(">\nstate kept\n</stdout"), read);
        assertEquals(0, local.leftovers(), "the session's sandbox was torn down when the task ended");
    }

    @Test
    void unreadableArgumentsAndUnknownLanguagesGoBackToTheModelAsText() throws Exception {
        ScriptedChatModel model = new ScriptedChatModel()
                .toolCalls(ScriptedChatModel.call("bad-args", "{\"code\": \"print(1)\", \"timeoutSeconds\": \"soon\"}"),
                        ScriptedChatModel.call("ruby", "{\"code\": \"puts 1\", \"language\": \"ruby\"}"))
                .answer("I cannot run that.");

        assertEquals("I cannot run that.", LangChain4jExample.assistant(model, tool).chat("Run it."));

        List<ToolExecutionResultMessage> results = toolResults(model.requests.get(1));
        assertEquals(2, results.size());
        assertEquals("bad-args", results.get(0).id());
        // read as every agent surface reads it (ToolArguments)
        assertEquals("error: timeoutSeconds must be a whole number of seconds. Nothing ran.", results.get(0).text());
        assertEquals("ruby", results.get(1).id());
        assertEquals("error: unknown language 'ruby'; use one of python, javascript, bash. Nothing ran.", results.get(1).text());
        assertEquals(0, local.leftovers());
    }
}
