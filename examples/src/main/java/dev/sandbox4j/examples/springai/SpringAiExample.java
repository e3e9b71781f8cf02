package dev.sandbox4j.examples.springai;

import org.springframework.ai.chat.client.ChatClient;
import org.springframework.ai.chat.client.advisor.ToolCallAdvisor;
import org.springframework.ai.chat.model.ChatModel;
import org.springframework.ai.tool.ToolCallbackProvider;

/** A {@link ChatClient} that may call the sandbox tool, for whichever chat model the application uses. */
public final class SpringAiExample {
    private SpringAiExample() {
    }

    // tag::spring-ai-chat[]
    public static ChatClient chatClient(ChatModel chatModel, ToolCallbackProvider sandboxToolCallbacks) {
        return ChatClient.builder(chatModel)
                .defaultToolCallbacks(sandboxToolCallbacks)
                // runs the tool-calling loop in the client: model, tool, model, ... until an answer
                .defaultAdvisors(ToolCallAdvisor.builder().build())
                .build();
    }

    // String answer = chatClient(chatModel, sandboxToolCallbacks)
    //         .prompt("What is the 30th Fibonacci number? Compute it.")
    //         .call()
    //         .content();
    // end::spring-ai-chat[]
}
