package dev.sandbox4j.tool;

import dev.sandbox4j.api.Execution;

/** A model's request after validation: either an execution (with an optional note about it) or an error text. */
record ToolCall(Execution execution, String note, String error) {
    static ToolCall of(Execution execution, String note) {
        return new ToolCall(execution, note, null);
    }

    static ToolCall error(String error) {
        return new ToolCall(null, null, error);
    }
}
