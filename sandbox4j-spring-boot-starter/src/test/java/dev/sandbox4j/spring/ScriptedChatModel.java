package dev.sandbox4j.spring;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import org.springframework.ai.chat.messages.AssistantMessage;
import org.springframework.ai.chat.model.ChatModel;
import org.springframework.ai.chat.model.ChatResponse;
import org.springframework.ai.chat.model.Generation;
import org.springframework.ai.chat.prompt.ChatOptions;
import org.springframework.ai.chat.prompt.Prompt;
import org.springframework.ai.model.tool.ToolCallingChatOptions;

/**
 * A fake of the LLM only: each call returns the next scripted assistant message (tool calls, then a
 * final text) and records the prompt. Spring AI's ChatClient, ToolCallAdvisor and ToolCallingManager
 * do the rest, as they would for a provider's model.
 */
final class ScriptedChatModel implements ChatModel {
    private final Deque<AssistantMessage> script = new ArrayDeque<>();
    final List<Prompt> prompts = new ArrayList<>();

    /** One assistant message with several tool calls, each {id, argumentsJson}. */
    ScriptedChatModel toolCalls(String[]... calls) {
        List<AssistantMessage.ToolCall> list = new ArrayList<>();
        for (String[] c : calls) {
            list.add(new AssistantMessage.ToolCall(c[0], "function", "run_code", c[1]));
        }
        script.add(AssistantMessage.builder().content("").toolCalls(list).build());
        return this;
    }

    ScriptedChatModel answer(String text) {
        script.add(new AssistantMessage(text));
        return this;
    }

    @Override
    public ChatResponse call(Prompt prompt) {
        prompts.add(prompt);
        AssistantMessage next = script.poll();
        if (next == null) {
            throw new AssertionError("the script has no answer for prompt " + prompts.size());
        }
        return new ChatResponse(List.of(new Generation(next)));
    }

    /** Like a provider's model: options that can carry tools. */
    @Override
    public ChatOptions getDefaultOptions() {
        return ToolCallingChatOptions.builder().build();
    }
}
