package dev.sandbox4j.examples.springai;

import dev.sandbox4j.api.tool.CodeExecutionTool;
import dev.sandbox4j.api.tool.CodeTool;
import org.springframework.ai.tool.annotation.Tool;
import org.springframework.ai.tool.annotation.ToolParam;

// tag::spring-ai[]
/** A Spring AI tool bean; its ToolCallback comes from {@code MethodToolCallbackProvider} or {@code ToolCallbacks.from}. */
public class SandboxTool {
    private final CodeTool tool;

    public SandboxTool(CodeTool tool) {
        this.tool = tool;
    }

    // PlainTextResultConverter: the default converter would JSON-quote the text (newlines as \n)
    @Tool(name = CodeExecutionTool.NAME, description = CodeExecutionTool.DESCRIPTION,
            resultConverter = PlainTextResultConverter.class)
    public String runCode(
            @ToolParam(description = CodeExecutionTool.CODE_DESCRIPTION) String code,
            @ToolParam(description = CodeExecutionTool.LANGUAGE_DESCRIPTION, required = false) String language,
            @ToolParam(description = CodeExecutionTool.TIMEOUT_DESCRIPTION, required = false) Integer timeoutSeconds) {
        // never throws: bad arguments and sandbox failures come back as text for the model
        return tool.execute(code, language, timeoutSeconds);
    }
}
// end::spring-ai[]
