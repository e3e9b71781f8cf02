/**
 * API: the code-execution tool for Spring AI: a {@code @Tool} bean and its
 * {@code ToolCallbackProvider}, auto-configured when Spring AI is on the classpath.
 */
package dev.sandbox4j.spring.ai;
