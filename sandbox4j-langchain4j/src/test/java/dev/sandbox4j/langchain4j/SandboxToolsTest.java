package dev.sandbox4j.langchain4j;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.langchain4j.agent.tool.ToolExecutionRequest;
import dev.langchain4j.agent.tool.ToolSpecification;
import dev.langchain4j.data.message.ChatMessage;
import dev.langchain4j.data.message.ToolExecutionResultMessage;
import dev.langchain4j.model.chat.request.ChatRequest;
import dev.langchain4j.service.AiServices;
import dev.sandbox4j.tool.CodeExecutionTool;
import dev.sandbox4j.policy.EgressPolicy;
import java.time.Duration;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The {@code @Tool} path through AiServices with a scripted model; the code runs for real in the local sandbox. */
class SandboxToolsTest {
    interface Assistant {
        String chat(String userMessage);
    }

    private static LocalRunnerFixture local;
    private static CodeExecutionTool tool;

    @BeforeAll
    static void start() throws Exception {
        local = new LocalRunnerFixture();
        tool = CodeExecutionTool.builder(local.runner())
                .egress(EgressPolicy.denyAll())
                .defaultBudget(Duration.ofSeconds(10))
                .maxBudget(Duration.ofSeconds(30))
                .outputLimit(4_000)
                .build();
    }

    @AfterAll
    static void stop() throws Exception {
        local.close();
    }

    static Assistant assistant(ScriptedChatModel model) {
        return SandboxTools.addTo(AiServices.builder(Assistant.class).chatModel(model), tool).build();
    }

    static List<ToolExecutionResultMessage> toolResults(ChatRequest request) {
        return request.messages().stream()
                .filter(ToolExecutionResultMessage.class::isInstance)
                .map(ToolExecutionResultMessage.class::cast)
                .toList();
    }

    static ToolExecutionResultMessage lastToolResult(ChatRequest request) {
        ChatMessage last = request.messages().get(request.messages().size() - 1);
        assertTrue(last instanceof ToolExecutionResultMessage, "last message: " + last);
        return (ToolExecutionResultMessage) last;
    }

    @Test
    void aToolCallRunsInTheSandboxAndTheModelGetsTheFencedResult() throws Exception {
        ScriptedChatModel model = new ScriptedChatModel()
                .toolCalls(ScriptedChatModel.call("call-1",
                        "{\"code\": \"import sys\\nprint(6 * 7)\\nprint('careful', file=sys.stderr)\\nsys.exit(3)\","
                                + " \"language\": \"python\", \"timeoutSeconds\": 3600}"))
                .answer("6 * 7 = 42");

        assertEquals("6 * 7 = 42", assistant(model).chat("What is 6 * 7? Use the tool."));

        assertEquals(2, model.requests.size());
        ToolSpecification spec = model.requests.get(0).toolSpecifications().stream()
                .filter(s -> s.name().equals("run_code")).findFirst().orElseThrow();
        assertEquals(tool.description(), spec.description(), "the description names the limits");
        assertEquals(List.of("code", "language", "timeoutSeconds"), List.copyOf(spec.parameters().properties().keySet()));
        assertEquals(List.of("code"), spec.parameters().required());

        ToolExecutionResultMessage result = lastToolResult(model.requests.get(1));
        assertEquals("call-1", result.id());
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
    void argumentsLangChain4jCannotConvertGoBackToTheModelAsText() throws Exception {
        ScriptedChatModel model = new ScriptedChatModel()
                .toolCalls(ScriptedChatModel.call("bad-args", "{\"code\": \"print(1)\", \"timeoutSeconds\": \"soon\"}"),
                        ScriptedChatModel.call("ruby", "{\"code\": \"puts 1\", \"language\": \"ruby\"}"))
                .answer("I cannot run that.");

        assertEquals("I cannot run that.", assistant(model).chat("Run it."));

        List<ToolExecutionResultMessage> results = toolResults(model.requests.get(1));
        assertEquals(2, results.size());
        assertEquals("bad-args", results.get(0).id());
        assertEquals("error: timeoutSeconds must be a whole number of seconds. Nothing ran.", results.get(0).text(),
                "read as every surface reads it (ToolArguments), not as LangChain4j's conversion fails");
        assertEquals("ruby", results.get(1).id());
        assertEquals("error: unknown language 'ruby'; use one of python, javascript, bash. Nothing ran.", results.get(1).text());
        assertEquals(0, local.leftovers());
    }

    /** Why addTo installs a handler: LangChain4j's default for unconvertible arguments is to throw out of chat(). */
    @Test
    void withoutTheHandlersTheSameArgumentsMakeChatThrow() {
        ScriptedChatModel model = new ScriptedChatModel()
                .toolCalls(ScriptedChatModel.call("bad-args", "{\"code\": \"print(1)\", \"timeoutSeconds\": \"soon\"}"))
                .answer("unreachable");
        Assistant bare = AiServices.builder(Assistant.class).chatModel(model).tools(new SandboxTools(tool)).build();

        assertThrows(RuntimeException.class, () -> bare.chat("Run it."));
        assertEquals(1, model.requests.size(), "the model never saw an answer to its call");
    }

    @Test
    void anInfiniteLoopEndsAtItsBudgetAndTheModelIsToldSo() throws Exception {
        ScriptedChatModel model = new ScriptedChatModel()
                .toolCalls(ScriptedChatModel.call("loop", "{\"code\": \"while True:\\n    pass\", \"timeoutSeconds\": 1}"))
                .answer("it looped");
        long start = System.nanoTime();

        assertEquals("it looped", assistant(model).chat("Loop."));

        long seconds = Duration.ofNanos(System.nanoTime() - start).toSeconds();
        assertTrue(seconds < 25, "the loop was stopped near its 1 s budget (upper bound only), took " + seconds + " s");
        String text = lastToolResult(model.requests.get(1)).text();
        assertTrue(text.startsWith("status: timed out: stopped at the time limit of 1 s"), text);
        assertEquals(0, local.leftovers());
    }

    @Test
    void aTaskKeepsItsFilesAcrossToolCallsAndTearsTheSandboxDownAtTheEnd() throws Exception {
        ScriptedChatModel model = new ScriptedChatModel()
                .toolCalls(ScriptedChatModel.call("c1", "{\"code\": \"echo 'state kept' > notes.txt\", \"language\": \"bash\"}"))
                .toolCalls(ScriptedChatModel.call("c2", "{\"code\": \"print(open('notes.txt').read().strip())\"}"))
                .toolCalls(ScriptedChatModel.call("c3", "{\"code\": \"print(1)\", \"timeoutSeconds\": \"soon\"}"))
                .answer("done");

        String answer = SandboxTasks.run(tool, () -> AiServices.builder(Assistant.class).chatModel(model),
                a -> a.chat("Write a note, then read it back."));

        assertEquals("done", answer);
        assertEquals(4, model.requests.size());
        assertTrue(lastToolResult(model.requests.get(1)).text().startsWith("status: exited with code 0"));
        String read = lastToolResult(model.requests.get(2)).text();
        assertTrue(read.contains(">\nstate kept\n</stdout"), read);
        assertEquals("error: timeoutSeconds must be a whole number of seconds. Nothing ran.",
                lastToolResult(model.requests.get(3)).text(), "a task's assistant reads arguments as every surface does");
        assertEquals(0, local.leftovers(), "the session's sandbox was torn down when the task ended");
    }

    @Test
    void aTaskThatFailsStillTearsItsSandboxDown() throws Exception {
        ScriptedChatModel model = new ScriptedChatModel()
                .toolCalls(ScriptedChatModel.call("c1", "{\"code\": \"echo hi > f.txt\", \"language\": \"bash\"}"));
        // the script ends after one call: the model's second request fails, and the task with it

        AssertionError e = assertThrows(AssertionError.class, () -> SandboxTasks.run(tool,
                () -> AiServices.builder(Assistant.class).chatModel(model), a -> a.chat("Write.")));

        assertTrue(e.getMessage().contains("no answer for request 2"), e.getMessage());
        assertTrue(lastToolResult(model.requests.get(1)).text().startsWith("status: exited with code 0"));
        assertEquals(0, local.leftovers(), "closed on the way out");
    }

    @Test
    void theOneRefusalTableHoldsOnTheAiServicesPath() throws Exception {
        List<dev.sandbox4j.tck.ToolArgumentCases.Case> table = dev.sandbox4j.tck.ToolArgumentCases.refusals();
        ToolExecutionRequest[] calls = new ToolExecutionRequest[table.size()];
        for (int i = 0; i < table.size(); i++) {
            calls[i] = ScriptedChatModel.call("c" + i, table.get(i).argumentsJson());
        }
        ScriptedChatModel model = new ScriptedChatModel().toolCalls(calls).answer("Done.");
        assertEquals("Done.", assistant(model).chat("Run it."));
        List<ToolExecutionResultMessage> results = toolResults(model.requests.get(1));
        for (int i = 0; i < table.size(); i++) {
            assertEquals(table.get(i).refusal(), results.get(i).text(), table.get(i).argumentsJson());
        }
        assertEquals(0, local.leftovers(), "nothing ran");
    }

    @Test
    void theOneRefusalTableHoldsOnTheExecutorAndTheToolMethod() throws Exception {
        SandboxToolExecutor executor = new SandboxToolExecutor(tool);
        for (dev.sandbox4j.tck.ToolArgumentCases.Case c : dev.sandbox4j.tck.ToolArgumentCases.refusals()) {
            assertEquals(c.refusal(), executor.execute(ScriptedChatModel.call("x", c.argumentsJson()), null), c.argumentsJson());
        }
        // the typed method sees only what LangChain4j converted; what it can see is refused alike
        assertEquals("error: timeoutSeconds must be at least 1, was -5. Nothing ran.", new SandboxTools(tool).runCode("print(1)", null, -5));
        assertEquals(0, local.leftovers(), "nothing ran");
    }
}
