package dev.sandbox4j.api.spi;

/** An adapter's own record of one sandbox (ids, tokens, endpoints). Its toString must hold no secrets. */
public interface SandboxHandle {
    /** The provider's id for the sandbox. */
    String id();
}
