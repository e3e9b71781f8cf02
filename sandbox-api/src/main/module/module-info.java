/**
 * The dev.sandbox4j.api module.
 *
 * @since 0.1.0
 */
module dev.sandbox4j.api {
    requires transitive dev.sandbox4j.policy;
    requires org.slf4j;

    exports dev.sandbox4j.api;
    exports dev.sandbox4j.api.exception;
    exports dev.sandbox4j.spi;
    // the one lifecycle: for this project's adapters only
    exports dev.sandbox4j.spi.lifecycle to
            dev.sandbox4j.local,
            dev.sandbox4j.docker,
            dev.sandbox4j.e2b,
            dev.sandbox4j.daytona,
            dev.sandbox4j.vercel,
            dev.sandbox4j.modal,
            dev.sandbox4j.kubernetes;

    uses dev.sandbox4j.api.SandboxRunnerProvider;
}
