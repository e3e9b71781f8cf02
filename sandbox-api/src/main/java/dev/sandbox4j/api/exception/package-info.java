/**
 * API. The exception family: what the infrastructure did, as an unchecked {@link
 * dev.sandbox4j.api.exception.SandboxException} (HTTP status, provider code, retry-after) with
 * {@code isRetriable()} and {@code codeMayHaveRun()}, and its subtypes for an authentication
 * failure, a rate limit, no capacity, a configuration error, a sandbox not found, an interrupt and a
 * refused or unsupported attach. What the code did is a result, never one of these.
 *
 * @since 0.1.0
 */
package dev.sandbox4j.api.exception;
