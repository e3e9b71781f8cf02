package dev.sandbox4j.examples.springai;

import java.lang.reflect.Type;
import org.springframework.ai.tool.execution.ToolCallResultConverter;

/**
 * Hands a tool's text to the model as it is. Spring AI's default converter serializes the result to
 * JSON, which turns the tool's multi-line report into one quoted string full of escapes.
 */
public class PlainTextResultConverter implements ToolCallResultConverter {
    @Override
    public String convert(Object result, Type returnType) {
        return result == null ? "" : result.toString();
    }
}
