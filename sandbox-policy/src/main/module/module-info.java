/**
 * The dev.sandbox4j.policy module.
 *
 * @since 0.1.0
 */
module dev.sandbox4j.policy {
    exports dev.sandbox4j.policy;
}
