package dev.sandbox4j.examples.langchain4j;

// tag::langchain4j[]
import dev.langchain4j.model.chat.ChatModel;
import dev.langchain4j.service.AiServices;
import dev.sandbox4j.api.SandboxRunner;
import dev.sandbox4j.tool.CodeExecutionTool;
import dev.sandbox4j.langchain4j.SandboxTasks;
import dev.sandbox4j.langchain4j.SandboxTools;
import dev.sandbox4j.policy.EgressPolicy;
import java.time.Duration;
// end::langchain4j[]

/**
 * Wiring the sandbox4j tool of {@code sandbox4j-langchain4j} into a LangChain4j {@link AiServices}
 * agent. The chat model is whichever the application uses (OpenAI, Anthropic, Ollama...); the runner
 * is the local one by default ({@link dev.sandbox4j.examples.Runners#fromEnvOrLocal()}).
 */
public final class LangChain4jExample {
    private LangChain4jExample() {
    }

    // tag::langchain4j-wiring[]
    /** The agent's interface; LangChain4j implements it. */
    public interface Assistant {
        String chat(String userMessage);
    }

    /** One fixed policy for every call; the model picks only code, language and (clamped) time. */
    public static CodeExecutionTool codeTool(SandboxRunner runner) {
        return CodeExecutionTool.builder(runner)
                .egress(EgressPolicy.denyAll())
                .defaultBudget(Duration.ofSeconds(10))
                .maxBudget(Duration.ofSeconds(30))
                .outputLimit(4_000)
                .build(); // throws here if the runner cannot enforce the policy
    }

    /** A fresh sandbox per tool call; arguments the model gets wrong go back to it as text. */
    public static Assistant assistant(ChatModel chatModel, CodeExecutionTool tool) {
        return SandboxTools.addTo(AiServices.builder(Assistant.class).chatModel(chatModel), tool).build();
    }

    /** A task whose tool calls share one sandbox (files carry over), torn down when the task ends. */
    public static String solve(ChatModel chatModel, CodeExecutionTool tool, String task) {
        return SandboxTasks.run(tool, () -> AiServices.builder(Assistant.class).chatModel(chatModel),
                assistant -> assistant.chat(task));
    }
    // end::langchain4j-wiring[]
}
