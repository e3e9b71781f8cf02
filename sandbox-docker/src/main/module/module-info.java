/**
 * The dev.sandbox4j.docker module.
 *
 * @since 0.1.0
 */
module dev.sandbox4j.docker {
    requires transitive dev.sandbox4j.api;
    requires dev.sandbox4j.egress;
    requires dev.sandbox4j.http;
    requires transitive okhttp3;
    requires com.fasterxml.jackson.databind;
    requires org.slf4j;

    exports dev.sandbox4j.docker;

    provides dev.sandbox4j.api.SandboxRunnerProvider with dev.sandbox4j.docker.internal.DockerSandboxRunnerProvider;
}
