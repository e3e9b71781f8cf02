package dev.sandbox4j.spi;

/**
 * An adapter's own record of one sandbox (ids, tokens, endpoints). Its toString must hold no secrets.
 *
 * @since 0.1.0
 */
public interface SandboxHandle {
    /** The provider's id for the sandbox. */
    String id();
}
