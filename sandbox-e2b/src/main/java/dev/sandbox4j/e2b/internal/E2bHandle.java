package dev.sandbox4j.e2b.internal;

import dev.sandbox4j.spi.SandboxHandle;
import dev.sandbox4j.http.HttpTransport;
import okhttp3.HttpUrl;

/**
 * One E2B sandbox: its id, its envd and code-interpreter base URLs, and a transport that sends its
 * envd access token (a secret: held only by that transport, redacted from its messages, never in
 * {@link #toString()}). A handle found by run id after a lost create has no envd transport: it is
 * only ever destroyed.
 */
public final class E2bHandle implements SandboxHandle {
    private final String id;
    private final HttpUrl envdUrl;
    private final HttpUrl interpreterUrl;
    private final HttpTransport envd;
    private final String envdVersion;
    /** Header-rule secrets resolved for this sandbox, redacted from the API transport while it lives. */
    private volatile HttpTransport.SecretScope secrets;

    E2bHandle(String id, HttpUrl envdUrl, HttpUrl interpreterUrl, HttpTransport envd, String envdVersion) {
        this.id = id;
        this.envdUrl = envdUrl;
        this.interpreterUrl = interpreterUrl;
        this.envd = envd;
        this.envdVersion = envdVersion;
    }

    static E2bHandle found(String id) {
        return new E2bHandle(id, null, null, null, null);
    }

    @Override
    public String id() {
        return id;
    }

    /** envd's base URL (port 49983). */
    HttpUrl envdUrl() {
        return envdUrl;
    }

    /** The code interpreter's base URL (port 49999). */
    HttpUrl interpreterUrl() {
        return interpreterUrl;
    }

    HttpTransport envd() {
        if (envd == null) {
            throw new IllegalStateException("sandbox " + id + " was found by run id and can only be destroyed");
        }
        return envd;
    }

    String envdVersion() {
        return envdVersion;
    }

    void secrets(HttpTransport.SecretScope scope) {
        this.secrets = scope;
    }

    HttpTransport.SecretScope secrets() {
        return secrets;
    }

    @Override
    public String toString() {
        return "E2bSandbox[" + id + (envdUrl == null ? "" : " " + envdUrl.host()) + "]";
    }
}
