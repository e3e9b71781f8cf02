package dev.sandbox4j.daytona.internal;

import dev.sandbox4j.spi.Secret;
import java.time.Duration;
import java.util.Objects;
import okhttp3.HttpUrl;
import okhttp3.OkHttpClient;

/** The Daytona adapter's configuration, as the runner's builder resolved it; the driver builds its transport from it. */
public final class DaytonaSettings {
    static final String USER_AGENT = "sandbox4j-daytona";
    /**
     * What every request sends as {@code X-Daytona-SDK-Version}: the official SDK release whose wire
     * this adapter follows (the {@code @daytonaio/sdk} recorded in {@code daytona.md}). The daemon reads
     * it to choose a session log's format: a client without it gets stdout and stderr merged
     * (daytonaio/daytona v0.190 {@code apps/daemon/pkg/session/common.go}); from 0.167 on the log keeps
     * the daemon's stream labels. The API uses it for audit and metrics only.
     */
    static final String SDK_VERSION = "0.218.0";
    final Secret apiKey;
    final HttpUrl apiUrl;
    final OkHttpClient client;
    final String target;
    final String snapshot;
    final String image;
    final Duration startTimeout;
    final Duration pollInterval;
    final Duration requestTimeout;

    /**
     * @param client         the caller's client, or null for the default
     * @param target         region, or null for the organisation's default
     * @param snapshot       snapshot name or id, or null for the server's default
     * @param image          base image for {@code buildInfo} (enables resource limits), or null
     * @param startTimeout   how long to wait for {@code started} after the create answered
     * @param pollInterval   the first status-poll delay (it grows to 1 s)
     * @param requestTimeout the client deadline of one API call (Daytona holds a create up to 30 s)
     */
    public DaytonaSettings(Secret apiKey, HttpUrl apiUrl, OkHttpClient client, String target, String snapshot,
            String image, Duration startTimeout, Duration pollInterval, Duration requestTimeout) {
        if (snapshot != null && image != null) {
            throw new IllegalArgumentException("set a snapshot or an image, not both (Daytona refuses the mix)");
        }
        this.apiKey = Objects.requireNonNull(apiKey, "apiKey");
        this.apiUrl = Objects.requireNonNull(apiUrl, "apiUrl");
        this.client = client;
        this.target = target;
        this.snapshot = snapshot;
        this.image = image;
        this.startTimeout = Objects.requireNonNull(startTimeout, "startTimeout");
        this.pollInterval = Objects.requireNonNull(pollInterval, "pollInterval");
        this.requestTimeout = Objects.requireNonNull(requestTimeout, "requestTimeout");
    }

    @Override
    public String toString() {
        return "DaytonaSettings[" + apiUrl + (target == null ? "" : ", target=" + target) + "]";
    }
}
