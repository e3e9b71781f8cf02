/**
 * API. An MCP server that offers the sandbox4j code-execution tool ({@value
 * dev.sandbox4j.tool.CodeExecutionTool#NAME}) to any MCP client, built on the official MCP Java SDK.
 * Run it as a jar ({@code java -jar sandbox4j-mcp.jar --provider local --egress deny-all}; {@code --help}
 * lists the options) or embed it with {@link dev.sandbox4j.mcp.SandboxMcpServer}.
 *
 * <p>The policy (runner, egress, resources, the longest time limit, the output the model sees) is the
 * operator's, fixed when the server is built: the tool's input schema has only {@code code},
 * {@code language} and {@code timeoutSeconds}, and any other argument is refused.
 *
 * <p>Each frame is checked before the SDK reads it, so a malformed one is answered ({@code -32700},
 * {@code -32600}, {@code -32602}) and the next is served; {@code notifications/cancelled} and the end of
 * stdin stop running calls and tear their sandboxes down at once.
 */
package dev.sandbox4j.mcp;
