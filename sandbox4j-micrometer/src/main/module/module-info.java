/**
 * The dev.sandbox4j.micrometer module.
 *
 * @since 0.1.0
 */
module dev.sandbox4j.micrometer {
    requires transitive dev.sandbox4j.api;
    requires transitive micrometer.observation;
    requires micrometer.core;
    requires micrometer.commons;

    exports dev.sandbox4j.micrometer;
}
