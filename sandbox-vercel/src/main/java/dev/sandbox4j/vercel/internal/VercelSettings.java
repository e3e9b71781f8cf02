package dev.sandbox4j.vercel.internal;

import java.time.Duration;
import java.util.Objects;
import okhttp3.HttpUrl;
import okhttp3.OkHttpClient;

/** The Vercel adapter's configuration, as the runner's builder resolved it; the driver builds its transport from it. */
public final class VercelSettings {
    static final String USER_AGENT = "sandbox4j-vercel";
    final VercelCredentials credentials;
    final HttpUrl baseUrl;
    final OkHttpClient client;
    final Duration retryBaseDelay;
    final String image;
    final String runtime;
    final Duration execGrace;
    final Duration killTimeout;
    final int maxArgvBytes;
    final Duration requestTimeout;

    /**
     * @param client         the caller's client, or null for the default
     * @param retryBaseDelay the first retry delay, or null for the default
     * @param image          a registry image, or null
     * @param runtime        a Vercel runtime name (the v2 create), or null
     */
    public VercelSettings(VercelCredentials credentials, HttpUrl baseUrl, OkHttpClient client, Duration retryBaseDelay,
            String image, String runtime, Duration execGrace, Duration killTimeout, int maxArgvBytes,
            Duration requestTimeout) {
        this.credentials = Objects.requireNonNull(credentials, "credentials");
        this.baseUrl = Objects.requireNonNull(baseUrl, "baseUrl");
        this.client = client;
        this.retryBaseDelay = retryBaseDelay;
        this.image = image;
        this.runtime = runtime;
        this.execGrace = Objects.requireNonNull(execGrace, "execGrace");
        this.killTimeout = Objects.requireNonNull(killTimeout, "killTimeout");
        this.maxArgvBytes = maxArgvBytes;
        this.requestTimeout = Objects.requireNonNull(requestTimeout, "requestTimeout");
    }

    @Override
    public String toString() {
        return "VercelSettings[" + baseUrl + ", team " + credentials.teamId() + ", project " + credentials.projectId() + "]";
    }
}
