/**
 * Example (internal, not published): a LangChain4j agent using the {@code sandbox4j-langchain4j} tool.
 */
package dev.sandbox4j.examples.langchain4j;
