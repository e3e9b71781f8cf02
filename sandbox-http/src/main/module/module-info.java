/**
 * The dev.sandbox4j.http module.
 *
 * @since 0.1.0
 */
module dev.sandbox4j.http {
    requires transitive dev.sandbox4j.api;
    requires transitive okhttp3;
    requires okio;
    requires transitive com.fasterxml.jackson.databind;
    requires org.slf4j;

    // plumbing for this project's REST adapters only
    exports dev.sandbox4j.http to dev.sandbox4j.e2b, dev.sandbox4j.daytona, dev.sandbox4j.vercel, dev.sandbox4j.docker;
}
