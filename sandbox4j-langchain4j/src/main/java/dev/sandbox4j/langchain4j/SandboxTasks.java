package dev.sandbox4j.langchain4j;

import dev.langchain4j.service.AiServices;
import dev.sandbox4j.tool.CodeExecutionSession;
import dev.sandbox4j.tool.CodeExecutionTool;
import dev.sandbox4j.policy.UnsupportedPolicyException;
import java.util.Objects;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * One sandbox per agent task: every tool call of the task runs in the same sandbox, so files written
 * by one call are there for the next, and the sandbox is torn down when the task ends, however it ends.
 *
 * <pre>{@code
 * String answer = SandboxTasks.run(tool,
 *         () -> AiServices.builder(Assistant.class).chatModel(model),
 *         assistant -> assistant.chat(task));
 * }</pre>
 *
 * @since 0.1.0
 */
public final class SandboxTasks {
    private SandboxTasks() {
    }

    /**
     * Opens a session of {@code tool}, builds an assistant whose code-execution tool is that session
     * (registered with {@link SandboxTools#addTo}, so bad arguments go back to the model), runs
     * {@code task} with it and closes the session.
     *
     * @param tool the code-execution tool whose policy the task's sandbox gets
     * @param services a fresh AiServices builder per call, configured with the chat model (and memory,
     *        other tools...); the session's tool is added to it
     * @param task what to do with the assistant, typically {@code a -> a.chat(message)}
     * @param <A> the assistant interface
     * @param <R> the task's result
     * @return what {@code task} returned
     * @throws UnsupportedPolicyException when the tool's runner cannot keep a sandbox across calls
     */
    public static <A, R> R run(CodeExecutionTool tool, Supplier<AiServices<A>> services, Function<A, R> task) {
        Objects.requireNonNull(services, "services");
        Objects.requireNonNull(task, "task");
        try (CodeExecutionSession session = tool.session()) {
            A assistant = SandboxTools.addTo(services.get(), session).build();
            return task.apply(assistant);
        }
    }
}
