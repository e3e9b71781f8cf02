package dev.sandbox4j.api;

/**
 * What happened to the sandbox after the run.
 *
 * @since 0.1.0
 */
public enum Teardown {
    /** Still open: a session that the caller has not closed yet. */
    OPEN,
    /** Destroyed by us. */
    DESTROYED,
    /** The provider said it was already gone (404 and the like). */
    ALREADY_GONE,
    /** Every attempt to destroy it failed before the teardown deadline; the provider's lifetime clock is the backstop. */
    FAILED,
    /** Released without being destroyed ({@link Sandbox#detach()}): another holder attaches to it by id. */
    DETACHED
}
