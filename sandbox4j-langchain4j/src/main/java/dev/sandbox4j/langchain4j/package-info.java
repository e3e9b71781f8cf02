/**
 * API. The sandbox4j code-execution tool for LangChain4j, on both of its tool paths.
 *
 * <ul>
 *   <li>{@link dev.sandbox4j.langchain4j.SandboxTools}: an object with one {@code @Tool} method, for
 *       {@code AiServices.builder(...).tools(...)}; {@link dev.sandbox4j.langchain4j.SandboxTools#addTo}
 *       registers it together with the error handlers, so arguments the model gets wrong come back to
 *       the model as text instead of making {@code chat()} throw.</li>
 *   <li>{@link dev.sandbox4j.langchain4j.SandboxToolExecutor}: a {@code ToolSpecification} and
 *       {@code ToolExecutor} pair for applications that build their tools programmatically; it reads
 *       the arguments itself and answers bad ones with an error text.</li>
 *   <li>{@link dev.sandbox4j.langchain4j.SandboxToolErrors}: the two error handlers on their own.</li>
 *   <li>{@link dev.sandbox4j.langchain4j.SandboxTasks}: one sandbox per agent task (files carry over
 *       between the task's tool calls), torn down when the task ends.</li>
 * </ul>
 *
 * <p>The policy (runner, egress, resources, the longest time limit, the output the model sees) is the
 * application's, fixed when it builds the {@link dev.sandbox4j.tool.CodeExecutionTool}: the model
 * chooses only the code, its language and a time limit that is lowered to the maximum.
 */
package dev.sandbox4j.langchain4j;
