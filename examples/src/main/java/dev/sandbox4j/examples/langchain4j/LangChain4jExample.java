package dev.sandbox4j.examples.langchain4j;

import dev.langchain4j.model.chat.ChatModel;
import dev.langchain4j.service.AiServices;
import dev.langchain4j.service.tool.ToolErrorHandlerResult;
import dev.sandbox4j.api.SandboxRunner;
import dev.sandbox4j.api.tool.CodeExecutionSession;
import dev.sandbox4j.api.tool.CodeExecutionTool;
import dev.sandbox4j.policy.EgressPolicy;
import java.time.Duration;

/**
 * Wiring a sandbox4j tool into a LangChain4j {@link AiServices} agent. The chat model is whichever
 * the application uses (OpenAI, Anthropic, Ollama...); the runner is the local one by default
 * ({@link dev.sandbox4j.examples.Runners#fromEnvOrLocal()}).
 */
public final class LangChain4jExample {
    private LangChain4jExample() {
    }

    /** The agent's interface; LangChain4j implements it. */
    public interface Assistant {
        String chat(String userMessage);
    }

    // tag::langchain4j-wiring[]
    /** One fixed policy for every call; the model picks only code, language and (clamped) time. */
    public static CodeExecutionTool codeTool(SandboxRunner runner) {
        return CodeExecutionTool.builder(runner)
                .egress(EgressPolicy.denyAll())
                .defaultBudget(Duration.ofSeconds(10))
                .maxBudget(Duration.ofSeconds(30))
                .outputLimit(4_000)
                .build(); // throws here if the runner cannot enforce the policy
    }

    public static Assistant assistant(ChatModel chatModel, CodeExecutionTool tool) {
        return AiServices.builder(Assistant.class)
                .chatModel(chatModel)
                .tools(new SandboxTools(tool))
                // arguments that do not parse (a string for timeoutSeconds, say) go back to the model too
                .toolArgumentsErrorHandler((error, context) -> ToolErrorHandlerResult.text(
                        "error: the arguments of " + context.toolExecutionRequest().name()
                                + " could not be read; send code as a string and timeoutSeconds as a number"))
                .build();
    }

    /** A task whose tool calls share one sandbox (files carry over), torn down when the task ends. */
    public static String solve(ChatModel chatModel, CodeExecutionTool tool, String task) {
        try (CodeExecutionSession session = tool.session()) {
            Assistant assistant = AiServices.builder(Assistant.class)
                    .chatModel(chatModel)
                    .tools(new SandboxTools(session))
                    .build();
            return assistant.chat(task);
        }
    }
    // end::langchain4j-wiring[]
}
