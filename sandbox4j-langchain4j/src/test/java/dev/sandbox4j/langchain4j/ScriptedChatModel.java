package dev.sandbox4j.langchain4j;

import dev.langchain4j.agent.tool.ToolExecutionRequest;
import dev.langchain4j.data.message.AiMessage;
import dev.langchain4j.model.chat.ChatModel;
import dev.langchain4j.model.chat.request.ChatRequest;
import dev.langchain4j.model.chat.response.ChatResponse;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;

/**
 * A fake of the LLM only: it answers each chat request with the next scripted message (tool calls,
 * then a final text) and records what it was sent. Everything between, from AiServices' tool
 * dispatch to the sandbox, is real.
 */
final class ScriptedChatModel implements ChatModel {
    private final Deque<AiMessage> script = new ArrayDeque<>();
    final List<ChatRequest> requests = new ArrayList<>();

    ScriptedChatModel toolCalls(ToolExecutionRequest... calls) {
        script.add(AiMessage.from(calls));
        return this;
    }

    ScriptedChatModel answer(String text) {
        script.add(AiMessage.from(text));
        return this;
    }

    static ToolExecutionRequest call(String id, String argumentsJson) {
        return ToolExecutionRequest.builder().id(id).name("run_code").arguments(argumentsJson).build();
    }

    @Override
    public ChatResponse doChat(ChatRequest request) {
        requests.add(request);
        AiMessage next = script.poll();
        if (next == null) {
            throw new AssertionError("the script has no answer for request " + requests.size());
        }
        return ChatResponse.builder().aiMessage(next).build();
    }
}
