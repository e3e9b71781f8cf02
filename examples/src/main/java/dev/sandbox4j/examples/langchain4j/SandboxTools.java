package dev.sandbox4j.examples.langchain4j;

import dev.langchain4j.agent.tool.P;
import dev.langchain4j.agent.tool.Tool;
import dev.sandbox4j.api.tool.CodeExecutionTool;
import dev.sandbox4j.api.tool.CodeTool;

// tag::langchain4j[]
/** A LangChain4j tool: pass an instance to {@code AiServices.builder(...).tools(...)}. */
public class SandboxTools {
    private final CodeTool tool;

    /** A {@link CodeExecutionTool} (a fresh sandbox per call) or a session of one (one sandbox per task). */
    public SandboxTools(CodeTool tool) {
        this.tool = tool;
    }

    @Tool(name = CodeExecutionTool.NAME, value = CodeExecutionTool.DESCRIPTION)
    public String runCode(
            @P(name = "code", value = CodeExecutionTool.CODE_DESCRIPTION) String code,
            @P(name = "language", value = CodeExecutionTool.LANGUAGE_DESCRIPTION, required = false) String language,
            @P(name = "timeoutSeconds", value = CodeExecutionTool.TIMEOUT_DESCRIPTION, required = false) Integer timeoutSeconds) {
        // never throws: bad arguments and sandbox failures come back as text for the model
        return tool.execute(code, language, timeoutSeconds);
    }
}
// end::langchain4j[]
