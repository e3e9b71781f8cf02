/**
 * The dev.sandbox4j.daytona module.
 *
 * @since 0.1.0
 */
module dev.sandbox4j.daytona {
    requires transitive dev.sandbox4j.api;
    requires dev.sandbox4j.http;
    requires transitive okhttp3;
    requires com.fasterxml.jackson.databind;
    requires org.slf4j;

    exports dev.sandbox4j.daytona;

    provides dev.sandbox4j.api.SandboxRunnerProvider with dev.sandbox4j.daytona.internal.DaytonaSandboxRunnerProvider;
}
