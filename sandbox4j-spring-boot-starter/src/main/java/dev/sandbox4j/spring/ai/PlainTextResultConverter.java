package dev.sandbox4j.spring.ai;

import java.lang.reflect.Type;
import org.springframework.ai.tool.execution.ToolCallResultConverter;

/**
 * Hands the tool's text to the model as it is. Spring AI's default converter serializes a result to
 * JSON, which turns the tool's multi-line report into one quoted string full of escapes.
 *
 * @since 0.1.0
 */
public class PlainTextResultConverter implements ToolCallResultConverter {
    /** Creates the converter (Spring AI does, from the {@code @Tool} annotation). */
    public PlainTextResultConverter() {
    }

    @Override
    public String convert(Object result, Type returnType) {
        return result == null ? "" : result.toString();
    }
}
