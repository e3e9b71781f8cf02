package dev.sandbox4j.langchain4j;

import static dev.sandbox4j.langchain4j.SandboxToolsTest.lastToolResult;
import static dev.sandbox4j.langchain4j.SandboxToolsTest.toolResults;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.langchain4j.agent.tool.ToolExecutionRequest;
import dev.langchain4j.agent.tool.ToolSpecification;
import dev.langchain4j.data.message.ToolExecutionResultMessage;
import dev.langchain4j.model.chat.request.json.JsonObjectSchema;
import dev.langchain4j.service.AiServices;
import dev.sandbox4j.tool.CodeExecutionTool;
import dev.sandbox4j.policy.EgressPolicy;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The ToolSpecification/ToolExecutor path, through AiServices with a scripted model and the local sandbox. */
class SandboxToolExecutorTest {
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
                .maxBudget(Duration.ofSeconds(20))
                .build();
    }

    @AfterAll
    static void stop() throws Exception {
        local.close();
    }

    private static Assistant assistant(ScriptedChatModel model) {
        // no error handler: the executor answers bad arguments itself
        return AiServices.builder(Assistant.class).chatModel(model).tools(SandboxToolExecutor.tools(tool)).build();
    }

    @Test
    void theSpecificationIsTheToolsOwnDescriptionWithCodeRequiredAndNothingElseAllowed() {
        ToolSpecification spec = SandboxToolExecutor.specification(tool);

        assertEquals("run_code", spec.name());
        assertEquals(tool.description(), spec.description());
        assertTrue(spec.description().contains("at most 20 s"), spec.description());
        JsonObjectSchema params = spec.parameters();
        assertEquals(List.of("code", "language", "timeoutSeconds"), List.copyOf(params.properties().keySet()));
        assertEquals(List.of("code"), params.required());
        assertEquals(Boolean.FALSE, params.additionalProperties());
    }

    @Test
    void aCallThroughAiServicesRunsTheCodeAndTheModelSeesTheSpecification() throws Exception {
        ScriptedChatModel model = new ScriptedChatModel()
                .toolCalls(ScriptedChatModel.call("js", "{\"code\": \"console.log(2 ** 10)\", \"language\": \"javascript\","
                        + " \"timeoutSeconds\": 5.0}"))
                .answer("1024");

        assertEquals("1024", assistant(model).chat("2^10?"));

        assertEquals(List.of(SandboxToolExecutor.specification(tool)), model.requests.get(0).toolSpecifications());
        String text = lastToolResult(model.requests.get(1)).text();
        assertTrue(text.startsWith("status: exited with code 0 after "), text);
        assertTrue(text.contains(">\n1024\n</stdout marker="), text);
        assertEquals(0, local.leftovers());
    }

    @Test
    void badArgumentsAreAnsweredAsTextAndNothingRuns() throws Exception {
        String[][] cases = {
                {"{\"code\": \"print(1)\", \"timeoutSeconds\": \"soon\"}", "error: timeoutSeconds must be a whole number of seconds. Nothing ran."},
                {"{\"code\": \"print(1)\", \"timeoutSeconds\": 1.5}", "error: timeoutSeconds must be a whole number of seconds. Nothing ran."},
                {"{\"code\": \"print(1)\", \"timeoutSeconds\": 1e20}", "error: timeoutSeconds must be a whole number of seconds. Nothing ran."},
                {"{\"code\": \"print(1)\", \"egress\": \"allow-all\"}",
                        "error: unknown argument 'egress'; the arguments are code, language and timeoutSeconds "
                                + "(the policy is fixed by the application). Nothing ran."},
                {"{\"language\": \"python\"}", "error: code is missing. Nothing ran."},
                {"{\"code\": 42}", "error: code must be a string. Nothing ran."},
                {"{\"code\": \"print(1)\", \"language\": [\"python\"]}", "error: language must be a string. Nothing ran."},
                {"[\"print(1)\"]", "error: the arguments must be a JSON object. Nothing ran."},
                {"{\"code\": \"print(1)\"", "error: the arguments are not valid JSON. Nothing ran."},
        };
        ScriptedChatModel model = new ScriptedChatModel();
        ToolExecutionRequest[] calls = new ToolExecutionRequest[cases.length];
        for (int i = 0; i < cases.length; i++) {
            calls[i] = ScriptedChatModel.call("c" + i, cases[i][0]);
        }
        model.toolCalls(calls).answer("I will fix my arguments.");

        assertEquals("I will fix my arguments.", assistant(model).chat("Run it."));

        List<ToolExecutionResultMessage> results = toolResults(model.requests.get(1));
        assertEquals(cases.length, results.size());
        for (int i = 0; i < cases.length; i++) {
            assertEquals("c" + i, results.get(i).id());
            assertEquals(cases[i][1], results.get(i).text(), "arguments " + cases[i][0]);
        }
        assertEquals(0, local.leftovers(), "no sandbox was opened");
    }

    @Test
    void anInfiniteLoopEndsAtItsBudget() throws Exception {
        ScriptedChatModel model = new ScriptedChatModel()
                .toolCalls(ScriptedChatModel.call("loop", "{\"code\": \"while :; do :; done\", \"language\": \"bash\", \"timeoutSeconds\": 1}"))
                .answer("stopped");

        assertEquals("stopped", assistant(model).chat("Loop."));

        String text = lastToolResult(model.requests.get(1)).text();
        assertTrue(text.startsWith("status: timed out: stopped at the time limit of 1 s"), text);
        assertEquals(0, local.leftovers());
    }

    @Test
    void aSessionOnTheExecutorPathKeepsFiles() throws Exception {
        try (var session = tool.session()) {
            SandboxToolExecutor executor = new SandboxToolExecutor(session);
            String write = executor.execute(ScriptedChatModel.call("w", "{\"code\": \"echo 7 > n\", \"language\": \"bash\"}"), null);
            assertTrue(write.startsWith("status: exited with code 0"), write);
            String read = executor.execute(ScriptedChatModel.call("r", "{\"code\": \"cat n\", \"language\": \"bash\"}"), null);
            assertTrue(read.contains(">\n7\n</stdout marker="), read);
        }
        assertEquals(0, local.leftovers());
    }
}
