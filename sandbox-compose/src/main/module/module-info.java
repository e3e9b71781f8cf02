/**
 * The dev.sandbox4j.compose module.
 *
 * @since 0.1.0
 */
module dev.sandbox4j.compose {
    requires transitive dev.sandbox4j.api;
    requires org.slf4j;

    exports dev.sandbox4j.compose;
}
