/**
 * Example: a LangChain4j tool.
 */
package dev.sandbox4j.examples.langchain4j;
