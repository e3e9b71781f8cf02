/**
 * The dev.sandbox4j.local module.
 *
 * @since 0.1.0
 */
module dev.sandbox4j.local {
    requires transitive dev.sandbox4j.api;
    requires dev.sandbox4j.egress;
    requires org.slf4j;

    exports dev.sandbox4j.local;

    provides dev.sandbox4j.api.SandboxRunnerProvider with dev.sandbox4j.local.internal.LocalSandboxRunnerProvider;
}
