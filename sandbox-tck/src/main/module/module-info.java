/**
 * The dev.sandbox4j.tck module.
 *
 * @since 0.1.0
 */
module dev.sandbox4j.tck {
    requires transitive dev.sandbox4j.api;
    requires dev.sandbox4j.compose;
    requires transitive org.junit.jupiter.api;

    exports dev.sandbox4j.tck;
}
