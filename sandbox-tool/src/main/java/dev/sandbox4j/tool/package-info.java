/**
 * API. A code-execution tool for agent frameworks: the model chooses code, language and a clamped
 * time limit; the application fixes everything else. With {@code collectFiles(dir)} the files the
 * code writes there reach the application (in {@code RunResult.files()}, through {@code onResult});
 * the model sees only their names, sizes and media types.
 */
package dev.sandbox4j.tool;
