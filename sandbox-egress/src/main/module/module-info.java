/**
 * The dev.sandbox4j.egress module.
 *
 * @since 0.1.0
 */
module dev.sandbox4j.egress {
    requires transitive dev.sandbox4j.policy;
    requires org.slf4j;

    exports dev.sandbox4j.egress;
}
