package dev.sandbox4j.examples.springai;

import org.springframework.ai.chat.client.ChatClient;
import org.springframework.ai.chat.client.advisor.ToolCallAdvisor;
import org.springframework.ai.chat.model.ChatModel;
import org.springframework.ai.tool.ToolCallbackProvider;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.context.annotation.Bean;

/**
 * A Spring Boot application whose chat client may run code: sandbox4j-spring-boot-starter configures
 * the runner, the tool and its callbacks from {@code sandbox4j.*} properties (application.properties);
 * the chat model comes from the application's model starter (OpenAI, Anthropic, Ollama, ...).
 */
// tag::spring-ai[]
@SpringBootApplication
public class SpringAiExample {

    public static void main(String[] args) {
        SpringApplication.run(SpringAiExample.class, args);
    }

    @Bean
    ChatClient chatClient(ChatModel chatModel, @Qualifier("sandbox4jToolCallbacks") ToolCallbackProvider sandbox) {
        return ChatClient.builder(chatModel)
                .defaultToolCallbacks(sandbox)
                // runs the tool-calling loop in the client: model, tool, model, ... until an answer
                .defaultAdvisors(ToolCallAdvisor.builder().build())
                .build();
    }
}
// end::spring-ai[]
