/**
 * API. A code-execution tool for agent frameworks: the model chooses code, language and a clamped
 * time limit; the application fixes everything else.
 */
package dev.sandbox4j.api.tool;
