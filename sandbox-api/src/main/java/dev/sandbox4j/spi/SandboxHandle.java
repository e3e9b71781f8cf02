package dev.sandbox4j.spi;

/**
 * An adapter's own record of one sandbox (ids, tokens, endpoints). Its toString must hold no secrets.
 *
 * @since 0.1.0
 */
public interface SandboxHandle {
    /** {@return the provider's id for the sandbox, as {@link dev.sandbox4j.api.Sandbox#id()} reports it} */
    String id();
}
