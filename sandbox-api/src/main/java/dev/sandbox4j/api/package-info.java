/**
 * API. The contract every runner implements ({@link dev.sandbox4j.api.SandboxRunner}, {@link
 * dev.sandbox4j.api.Sandbox}), its request and result values, its lifecycle events, runner discovery
 * ({@link dev.sandbox4j.api.SandboxRunners}, over {@link dev.sandbox4j.api.SandboxRunnerProvider}s) and
 * the forwarding bases decorators and adapters extend. The exceptions are in {@link
 * dev.sandbox4j.api.exception}; the decorators themselves (failover, concurrency caps, warm pools)
 * are in the {@code sandbox-compose} module, the agent tool in {@code sandbox-tool}.
 *
 * <p>Files come back as {@link dev.sandbox4j.api.SandboxFile} values: read from an open sandbox
 * ({@link dev.sandbox4j.api.Sandbox#readFile}), listed ({@link dev.sandbox4j.api.Sandbox#listFiles}), or
 * collected by an {@link dev.sandbox4j.api.Execution} before a one-shot run's teardown
 * ({@link dev.sandbox4j.api.RunResult#files()}), with caps per file and per run; paths are checked by
 * {@link dev.sandbox4j.api.SandboxPaths}. Output can be streamed as it arrives to an
 * {@link dev.sandbox4j.api.OutputListener} set on the execution.
 *
 * <p>{@link dev.sandbox4j.api.UntrustedText} is the one sanitiser for untrusted text shown to a person
 * or a model (the CLI, the agent tool's text, MCP): it keeps what a reader sees and nothing invisible.
 *
 * @since 0.1.0
 */
package dev.sandbox4j.api;
