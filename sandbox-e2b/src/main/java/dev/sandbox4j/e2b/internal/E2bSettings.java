package dev.sandbox4j.e2b.internal;

import dev.sandbox4j.spi.Secret;
import java.time.Duration;
import java.util.Objects;
import okhttp3.HttpUrl;
import okhttp3.OkHttpClient;

/** The E2B adapter's configuration, as the runner's builder resolved it; the driver builds its transports from it. */
public final class E2bSettings {
    static final String USER_AGENT = "sandbox4j-e2b";
    final Secret apiKey;
    final HttpUrl apiUrl;
    final String domain;
    final HttpUrl sandboxUrl;
    final String template;
    final boolean codeInterpreter;
    final OkHttpClient client;
    final Duration execGrace;
    final Duration requestTimeout;
    final Duration retryBaseDelay;
    final int keepaliveSeconds;
    final int maxFrameBytes;
    final int maxLineBytes;
    final int argvLimitBytes;

    public E2bSettings(Secret apiKey, HttpUrl apiUrl, String domain, HttpUrl sandboxUrl, String template,
                    boolean codeInterpreter, OkHttpClient client, Duration execGrace, Duration requestTimeout,
                    Duration retryBaseDelay, int maxFrameBytes, int maxLineBytes, int argvLimitBytes) {
        this.apiKey = Objects.requireNonNull(apiKey, "apiKey");
        this.apiUrl = Objects.requireNonNull(apiUrl, "apiUrl");
        this.domain = Objects.requireNonNull(domain, "domain");
        this.sandboxUrl = sandboxUrl;
        this.template = Objects.requireNonNull(template, "template");
        this.codeInterpreter = codeInterpreter;
        this.client = client;
        this.execGrace = Objects.requireNonNull(execGrace, "execGrace");
        this.requestTimeout = Objects.requireNonNull(requestTimeout, "requestTimeout");
        this.retryBaseDelay = Objects.requireNonNull(retryBaseDelay, "retryBaseDelay");
        this.keepaliveSeconds = 50;
        this.maxFrameBytes = maxFrameBytes;
        this.maxLineBytes = maxLineBytes;
        this.argvLimitBytes = argvLimitBytes;
    }

    @Override
    public String toString() {
        return "E2bSettings[" + apiUrl + ", template=" + template + "]";
    }
}
