package dev.sandbox4j.spring;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sandbox4j.spring.ai.Sandbox4jSpringAiAutoConfiguration;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.springframework.ai.chat.client.ChatClient;
import org.springframework.ai.chat.client.advisor.ToolCallAdvisor;
import org.springframework.ai.chat.messages.Message;
import org.springframework.ai.chat.messages.ToolResponseMessage;
import org.springframework.ai.chat.prompt.Prompt;
import org.springframework.ai.tool.ToolCallbackProvider;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/**
 * The starter's tool through Spring AI's own tool loop (ChatClient, ToolCallAdvisor,
 * ToolCallingManager) with a scripted model, the code running for real on the local runner.
 */
class ChatClientToolLoopTest {
    private final ApplicationContextRunner contexts = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(Sandbox4jAutoConfiguration.class,
                    Sandbox4jSpringAiAutoConfiguration.class))
            .withPropertyValues("sandbox4j.provider=local", "sandbox4j.budget=5s", "sandbox4j.max-budget=3s",
                    "sandbox4j.output-limit=50");

    @Test
    void aToolLoopRunsCodeReportsBadArgumentsAndStopsAnInfiniteLoop() {
        // max-budget below budget is refused by the tool: this context uses a budget within it
        contexts.withPropertyValues("sandbox4j.budget=2s").run(context -> {
            assertThat(context).hasNotFailed();
            ToolCallbackProvider callbacks = context.getBean("sandbox4jToolCallbacks", ToolCallbackProvider.class);
            ScriptedChatModel model = new ScriptedChatModel()
                    .toolCalls(new String[] {"call-1", "{\"code\": \"print('x' * 120)\", \"timeoutSeconds\": 999}"},
                            new String[] {"bad-args", "{\"code\": \"print(1)\", \"timeoutSeconds\": \"soon\"}"},
                            new String[] {"loop", "{\"code\": \"while True: pass\"}"})
                    .answer("Done.");
            ChatClient client = ChatClient.builder(model)
                    .defaultToolCallbacks(callbacks)
                    .defaultAdvisors(ToolCallAdvisor.builder().build())
                    .build();

            assertThat(client.prompt("Print 120 x.").call().content()).isEqualTo("Done.");

            assertThat(model.prompts).hasSize(2);
            Prompt second = model.prompts.get(1);
            Message last = second.getInstructions().get(second.getInstructions().size() - 1);
            assertThat(last).isInstanceOf(ToolResponseMessage.class);
            List<ToolResponseMessage.ToolResponse> responses = ((ToolResponseMessage) last).getResponses();
            assertThat(responses).extracting(ToolResponseMessage.ToolResponse::id)
                    .containsExactly("call-1", "bad-args", "loop");

            String text = responses.get(0).responseData();
            Matcher m = Pattern.compile("<stdout marker=([0-9a-f]{32})>\n").matcher(text);
            assertThat(m.find()).as(text).isTrue();
            assertThat(text).startsWith("status: exited with code 0 after ")
                    .contains("\nnote: a timeout of 999 s was asked for; the maximum is 3 s, so that was used\n")
                    .contains(">\n" + "x".repeat(50) + "\n</stdout marker=" + m.group(1) + ">\n"
                            + "[stdout truncated: 50 characters shown, 71 bytes cut]\n");
            // Spring AI turns an argument that does not parse into a text for the model
            assertThat(responses.get(1).responseData()).isNotBlank().doesNotStartWith("status:");
            assertThat(responses.get(2).responseData()).startsWith("status: timed out");
        });
    }

    @Test
    void theOneRefusalTableHoldsThroughSpringAisToolLoop() {
        contexts.withPropertyValues("sandbox4j.budget=2s").run(context -> {
            ToolCallbackProvider callbacks = context.getBean("sandbox4jToolCallbacks", ToolCallbackProvider.class);
            List<dev.sandbox4j.tck.ToolArgumentCases.Case> table = dev.sandbox4j.tck.ToolArgumentCases.refusals();
            String[][] calls = new String[table.size()][];
            for (int i = 0; i < table.size(); i++) {
                calls[i] = new String[] {"c" + i, table.get(i).argumentsJson()};
            }
            ScriptedChatModel model = new ScriptedChatModel().toolCalls(calls).answer("Done.");
            ChatClient client = ChatClient.builder(model).defaultToolCallbacks(callbacks)
                    .defaultAdvisors(ToolCallAdvisor.builder().build()).build();
            assertThat(client.prompt("Run it.").call().content()).isEqualTo("Done.");
            Prompt second = model.prompts.get(1);
            Message last = second.getInstructions().get(second.getInstructions().size() - 1);
            List<ToolResponseMessage.ToolResponse> responses = ((ToolResponseMessage) last).getResponses();
            for (int i = 0; i < table.size(); i++) {
                assertThat(responses.get(i).responseData()).as(table.get(i).argumentsJson()).isEqualTo(table.get(i).refusal());
            }
        });
    }
}
