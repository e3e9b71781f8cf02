package dev.sandbox4j.examples.springai;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sandbox4j.compose.ConcurrencyLimiter;
import dev.sandbox4j.api.SandboxRunner;
import dev.sandbox4j.tool.CodeExecutionTool;
import dev.sandbox4j.examples.LocalRunnerFixture;
import dev.sandbox4j.policy.EgressPolicy;
import dev.sandbox4j.policy.UnsupportedPolicyException;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.springframework.ai.chat.client.ChatClient;
import org.springframework.ai.chat.messages.Message;
import org.springframework.ai.chat.messages.ToolResponseMessage;
import org.springframework.ai.chat.model.ChatModel;
import org.springframework.ai.chat.prompt.Prompt;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.support.GenericApplicationContext;

/**
 * The example application as Spring Boot starts it (application.properties, the starter's
 * auto-configuration), its chat client driven by a scripted model whose tool call runs for real on
 * the local runner.
 */
class SpringAiToolTest {

    static ConfigurableApplicationContext start(ChatModel model, SandboxRunner runner, String... properties) {
        return new SpringApplicationBuilder(SpringAiExample.class)
                .properties("spring.main.banner-mode=off", "spring.main.web-application-type=none")
                .initializers(context -> {
                    GenericApplicationContext c = (GenericApplicationContext) context;
                    c.registerBean(ChatModel.class, () -> model);
                    if (runner != null) {
                        c.registerBean(SandboxRunner.class, () -> runner, d -> d.setDestroyMethodName(""));
                    }
                })
                // command-line arguments, as a deployment overrides application.properties
                .run(java.util.Arrays.stream(properties).map(p -> "--" + p).toArray(String[]::new));
    }

    static String toolResponse(ScriptedChatModel model) {
        Prompt second = model.prompts.get(1);
        Message last = second.getInstructions().get(second.getInstructions().size() - 1);
        List<ToolResponseMessage.ToolResponse> responses = assertInstanceOf(ToolResponseMessage.class, last).getResponses();
        assertEquals(1, responses.size());
        return responses.get(0).responseData();
    }

    @Test
    void theApplicationsChatClientRunsTheModelsCodeInASandbox() throws Exception {
        ScriptedChatModel model = new ScriptedChatModel()
                .toolCalls(new String[] {"call-1", "{\"code\": \"a, b = 0, 1\\nfor _ in range(30): a, b = b, a + b\\nprint(a)\"}"})
                .answer("The 30th Fibonacci number is 832040.");
        try (LocalRunnerFixture local = new LocalRunnerFixture();
                ConfigurableApplicationContext app = start(model, local.runner())) {
            // application.properties, bound by the starter
            CodeExecutionTool tool = app.getBean(CodeExecutionTool.class);
            assertEquals(Duration.ofSeconds(10), tool.defaultBudget());
            assertEquals(Duration.ofSeconds(30), tool.maxBudget());
            assertEquals(4_000, tool.outputLimit());
            assertEquals(EgressPolicy.denyAll(), tool.spec().egress());
            assertEquals(2, app.getBean(ConcurrencyLimiter.class).perKey());

            String answer = SpringAiTask.fibonacci(app.getBean(ChatClient.class));

            assertEquals("The 30th Fibonacci number is 832040.", answer);
            String text = toolResponse(model);
            assertTrue(text.startsWith("status: exited with code 0 after "), text);
            assertTrue(text.contains(">\n832040\n</stdout marker="), text);
            assertEquals(0, local.leftovers(), "sandbox directories left");
        }
    }

    @Test
    void aPolicyTheProviderCannotEnforceStopsTheApplication() {
        // ApplicationContextRunner, not SpringApplication: the expected failure is asserted, not logged with its trace
        new ApplicationContextRunner().withUserConfiguration(SpringAiExample.class)
                .withBean(ChatModel.class, ScriptedChatModel::new)
                // default allow with a denied CIDR: the one egress form the local runner refuses (it enforces allow
                // lists through its egress proxy)
                .withPropertyValues("sandbox4j.egress.allow-all=true", "sandbox4j.egress.denied-cidrs=10.0.0.0/8")
                .run(context -> {
                    Throwable failure = context.getStartupFailure();
                    assertTrue(failure != null, "startup must fail");
                    Throwable root = failure;
                    while (root.getCause() != null) {
                        root = root.getCause();
                    }
                    assertInstanceOf(UnsupportedPolicyException.class, root);
                    assertTrue(root.getMessage().contains("default-allow egress with deny"), root.getMessage());
                });
    }
}
