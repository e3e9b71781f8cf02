package dev.sandbox4j.examples.springai;

import org.springframework.ai.chat.client.ChatClient;

/** What the application does with the chat client: ask, and let the model compute in the sandbox. */
public final class SpringAiTask {
    private SpringAiTask() {
    }

    // tag::spring-ai-chat[]
    public static String fibonacci(ChatClient chatClient) {
        return chatClient.prompt("What is the 30th Fibonacci number? Compute it.")
                .call()
                .content();
    }
    // end::spring-ai-chat[]
}
