package dev.sandbox4j.spring;

/**
 * The caps key of each tool call, asked for when the call opens its sandbox (on the calling thread),
 * so a per-key cap is per user, per tenant or per conversation. The starter's default returns
 * {@code sandbox4j.caps.key} (default {@code default}): one key for the whole application. Declare a
 * bean of your own to cap per user, for example from Spring Security's {@code SecurityContextHolder}.
 * Only used when the caps are on ({@code sandbox4j.caps.per-key} or a {@code ConcurrencyLimiter} bean).
 *
 * @since 0.1.0
 */
@FunctionalInterface
public interface SandboxKeyResolver {
    /**
     * The key for the call now being made.
     *
     * @return a non-blank key
     */
    String key();
}
