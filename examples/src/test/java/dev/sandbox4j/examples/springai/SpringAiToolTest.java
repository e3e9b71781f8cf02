package dev.sandbox4j.examples.springai;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.sandbox4j.api.SandboxConfigurationException;
import dev.sandbox4j.api.SandboxRunner;
import dev.sandbox4j.api.tool.CodeExecutionTool;
import dev.sandbox4j.policy.EgressPolicy;
import dev.sandbox4j.policy.UnsupportedPolicyException;
import java.io.InputStream;
import java.time.Duration;
import java.util.List;
import java.util.Properties;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.springframework.ai.chat.messages.Message;
import org.springframework.ai.chat.messages.ToolResponseMessage;
import org.springframework.ai.chat.prompt.Prompt;
import org.springframework.ai.model.tool.ToolCallingChatOptions;
import org.springframework.ai.tool.ToolCallback;
import org.springframework.ai.tool.ToolCallbackProvider;
import org.springframework.boot.context.properties.bind.BindHandler;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.bind.handler.NoUnboundElementsBindHandler;
import org.springframework.boot.context.properties.source.MapConfigurationPropertySource;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/** The configuration under Spring Boot's ApplicationContextRunner, and Spring AI's tool path with a scripted model. */
class SpringAiToolTest {
    private final ApplicationContextRunner contexts = new ApplicationContextRunner()
            .withUserConfiguration(SandboxToolConfiguration.class);

    @Test
    void propertiesBuildTheToolAndAToolCallRunsThroughChatClientOnTheLocalRunner() {
        contexts.withPropertyValues("sandbox4j.provider=local", "sandbox4j.budget=5s", "sandbox4j.max-budget=20s",
                        "sandbox4j.output-limit=50")
                .run(context -> {
                    assertNull(context.getStartupFailure());
                    assertEquals("local", context.getBean(SandboxRunner.class).name());
                    CodeExecutionTool tool = context.getBean(CodeExecutionTool.class);
                    assertEquals(Duration.ofSeconds(5), tool.defaultBudget());
                    assertEquals(Duration.ofSeconds(20), tool.maxBudget());
                    assertEquals(50, tool.outputLimit());
                    assertEquals(EgressPolicy.denyAll(), tool.spec().egress());

                    ToolCallbackProvider callbacks = context.getBean(ToolCallbackProvider.class);
                    ToolCallback callback = callbacks.getToolCallbacks()[0];
                    assertEquals("run_code", callback.getToolDefinition().name());
                    JsonNode schema = new ObjectMapper().readTree(callback.getToolDefinition().inputSchema());
                    assertEquals(List.of("code", "language", "timeoutSeconds"), fieldNames(schema.get("properties")));
                    assertEquals("[\"code\"]", schema.get("required").toString());

                    ScriptedChatModel model = new ScriptedChatModel()
                            .toolCalls(new String[] {"call-1", "{\"code\": \"print('x' * 120)\", \"timeoutSeconds\": 999}"},
                                    new String[] {"bad-args", "{\"code\": \"print(1)\", \"timeoutSeconds\": \"soon\"}"})
                            .answer("Done.");
                    String answer = SpringAiExample.chatClient(model, callbacks).prompt("Print 120 x.").call().content();

                    assertEquals("Done.", answer);
                    assertEquals(2, model.prompts.size());
                    ToolCallingChatOptions firstOptions = (ToolCallingChatOptions) model.prompts.get(0).getOptions();
                    assertEquals(List.of("run_code"),
                            firstOptions.getToolCallbacks().stream().map(c -> c.getToolDefinition().name()).toList());
                    assertFalse(firstOptions.getInternalToolExecutionEnabled(), "the advisor runs the loop");

                    Prompt second = model.prompts.get(1);
                    Message last = second.getInstructions().get(second.getInstructions().size() - 1);
                    List<ToolResponseMessage.ToolResponse> responses = assertInstanceOf(ToolResponseMessage.class, last).getResponses();
                    assertEquals(2, responses.size());
                    // Spring AI turns an argument that does not parse into a text for the model (its own message)
                    assertEquals("bad-args", responses.get(1).id());
                    assertFalse(responses.get(1).responseData().isBlank());
                    assertFalse(responses.get(1).responseData().startsWith("status:"), responses.get(1).responseData());
                    ToolResponseMessage.ToolResponse response = responses.get(0);
                    assertEquals("call-1", response.id());
                    assertEquals("run_code", response.name());
                    String text = response.responseData();
                    Matcher m = Pattern.compile("<stdout marker=([0-9a-f]{32})>\n").matcher(text);
                    assertTrue(m.find(), text);
                    // plain text, not a JSON-quoted string
                    assertTrue(text.startsWith("status: exited with code 0 after "), text);
                    assertTrue(text.contains("\nnote: a timeout of 999 s was asked for; the maximum is 20 s, so that was used\n"), text);
                    assertTrue(text.contains(">\n" + "x".repeat(50) + "\n</stdout marker=" + m.group(1) + ">\n"
                            + "[stdout truncated: 50 characters shown, 71 bytes cut]\n"), text);
                });
    }

    @Test
    void aPolicyTheProviderCannotEnforceFailsStartup() {
        // the local runner enforces deny-all or allow-all only: a domain allow list is refused before anything runs
        contexts.withPropertyValues("sandbox4j.egress.allowed-domains=pypi.org,files.pythonhosted.org")
                .run(context -> {
                    Throwable failure = context.getStartupFailure();
                    assertTrue(failure != null, "startup must fail");
                    Throwable root = failure;
                    while (root.getCause() != null) {
                        root = root.getCause();
                    }
                    assertInstanceOf(UnsupportedPolicyException.class, root);
                    assertTrue(root.getMessage().contains("allowed domain 'pypi.org'"), root.getMessage());
                });
    }

    @Test
    void aProviderThatIsNotThereOrAContradictoryEgressIsAClearError() {
        SandboxToolConfiguration configuration = new SandboxToolConfiguration();
        SandboxToolProperties properties = new SandboxToolProperties();
        properties.setProvider("e2b");
        SandboxConfigurationException missing = assertThrows(SandboxConfigurationException.class,
                () -> configuration.sandboxRunner(properties));
        assertTrue(missing.getMessage().contains("add dev.sandbox4j:sandbox-e2b"), missing.getMessage());

        SandboxToolProperties.Egress egress = new SandboxToolProperties.Egress();
        egress.setAllowAll(true);
        egress.setAllowedDomains(List.of("pypi.org"));
        assertThrows(IllegalStateException.class, () -> SandboxToolConfiguration.egress(egress));
        assertEquals(EgressPolicy.denyAll(), SandboxToolConfiguration.egress(new SandboxToolProperties.Egress()));
    }

    @Test
    void theDocumentedPropertiesBindAndAreTheDefaults() throws Exception {
        Properties file = new Properties();
        try (InputStream in = getClass().getResourceAsStream("/sandbox4j-example.properties")) {
            file.load(in);
        }
        // an unknown or misspelt key fails the binding
        SandboxToolProperties bound = new Binder(new MapConfigurationPropertySource(file))
                .bind("sandbox4j", Bindable.of(SandboxToolProperties.class), new NoUnboundElementsBindHandler(BindHandler.DEFAULT))
                .get();
        SandboxToolProperties defaults = new SandboxToolProperties();
        assertEquals(defaults.getProvider(), bound.getProvider());
        assertEquals(defaults.getBudget(), bound.getBudget());
        assertEquals(defaults.getMaxBudget(), bound.getMaxBudget());
        assertEquals(defaults.getOutputLimit(), bound.getOutputLimit());
        assertEquals(List.of(), bound.getEgress().getAllowedDomains());
        assertFalse(bound.getEgress().isAllowAll());
    }

    private static List<String> fieldNames(JsonNode node) {
        List<String> names = new java.util.ArrayList<>();
        node.fieldNames().forEachRemaining(names::add);
        return names;
    }
}
