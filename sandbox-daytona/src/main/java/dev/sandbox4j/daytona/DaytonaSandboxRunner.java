package dev.sandbox4j.daytona;

import dev.sandbox4j.api.ForwardingSandboxRunner;
import dev.sandbox4j.api.exception.SandboxConfigurationException;
import dev.sandbox4j.api.SandboxRunner;
import dev.sandbox4j.spi.LifecycleOptions;
import dev.sandbox4j.spi.RunnerBuilder;
import dev.sandbox4j.spi.lifecycle.ManagedSandboxRunner;
import dev.sandbox4j.spi.Secret;
import dev.sandbox4j.daytona.internal.DaytonaDriver;
import dev.sandbox4j.daytona.internal.DaytonaHandle;
import dev.sandbox4j.daytona.internal.DaytonaSettings;
import dev.sandbox4j.policy.Capabilities;
import java.time.Duration;
import java.util.Map;
import java.util.Objects;
import okhttp3.HttpUrl;
import okhttp3.OkHttpClient;

/**
 * Runs code in <a href="https://www.daytona.io">Daytona</a> sandboxes.
 *
 * <pre>{@code
 * try (SandboxRunner runner = DaytonaSandboxRunner.fromEnv()) {   // DAYTONA_API_KEY, DAYTONA_API_URL, DAYTONA_TARGET
 *     RunResult r = runner.run(RunRequest.python("print(6 * 7)"));
 * }
 * }</pre>
 *
 * <p>What Daytona does differently from other runners:
 * <ul>
 *   <li><b>Every exec is a session command</b> whose log is followed over the toolbox's WebSocket as it
 *       is written, with or without an {@link dev.sandbox4j.api.OutputListener}: upload, session,
 *       exec, log, session delete, five toolbox calls where the one-call {@code process/code-run}
 *       would merge stdout and stderr and keep nothing of a timed-out command. The daemon's log labels
 *       the streams, so stderr comes apart ({@code SEPARATE_STDERR}), and a command past its budget
 *       (kept here: the daemon has no timeout for session commands) is ended by deleting its session,
 *       keeping what it printed ({@code OUTPUT_ON_TIMEOUT}). The command prints an end frame with its
 *       exit code on each stream once its output is all written, so the run ends at once and the
 *       output is kept byte for byte. The daemon's shell hands the log on line by line: a line reaches
 *       a listener once its newline is written (each stream is cut one byte past the hard cap, so a
 *       flood without newlines still ends), and a NUL byte does not survive it (bash's {@code read}
 *       drops it). A command's stdin is empty.</li>
 *   <li><b>Egress</b> is exactly one of: deny-all ({@code networkBlockAll}), up to 10 allowed IPv4
 *       CIDRs, or up to 10 allowed domains ({@code *.x} matches subdomains only). Denied CIDRs, IPv6,
 *       header rules, and domains mixed with CIDRs are refused before any call, because Daytona
 *       would silently apply only part of such a mix. A sandbox whose record does not hold the field
 *       sent (a server older than the field ignores it) is deleted before any code runs. See
 *       {@link Capabilities#implicitAllowances()} for what Daytona allows on its own.</li>
 *   <li><b>Lock-down after setup</b>: setup commands may run under a wider egress; before the code,
 *       {@code POST /sandbox/{id}/network-settings} sets the code's egress and the sandbox record is read
 *       until it shows exactly that (bounded), else the sandbox is torn down before any code runs. The
 *       record may show the rules once the job is queued, not once it ran (see
 *       {@link Capabilities#implicitAllowances()}).</li>
 *   <li><b>Resources</b> (vCPU, memory and disk in whole GiB) only with {@link Builder#image(String)};
 *       a snapshot keeps its own size.</li>
 *   <li><b>Lifetime</b> is sent in whole minutes, rounded up, as {@code autoStopInterval} (idle stop,
 *       then deletion, as the sandbox is ephemeral) and {@code ttlMinutes} (a wall-clock cap).</li>
 * </ul>
 *
 * @since 0.1.0
 */
public final class DaytonaSandboxRunner extends ForwardingSandboxRunner<SandboxRunner> {
    /** Daytona Cloud's API. */
    public static final String DEFAULT_API_URL = "https://app.daytona.io/api";
    /** The environment variable holding the API key; required by {@link #fromEnv(Map)}. */
    public static final String API_KEY_VARIABLE = "DAYTONA_API_KEY";
    /** The environment variable replacing {@link #DEFAULT_API_URL}. */
    public static final String API_URL_VARIABLE = "DAYTONA_API_URL";
    /**
     * The environment variable naming the region ({@code us}, {@code eu}); the organisation's default when
     * unset.
     */
    public static final String TARGET_VARIABLE = "DAYTONA_TARGET";

    private final String apiUrl;

    private DaytonaSandboxRunner(Builder b, LifecycleOptions options) {
        this(lifecycle(b, options), HttpUrl.parse(b.apiUrl).toString());
    }

    private DaytonaSandboxRunner(ManagedSandboxRunner<DaytonaHandle> lifecycle, String apiUrl) {
        super(lifecycle); // typed as a plain SandboxRunner: the public signature names no internal handle
        this.apiUrl = apiUrl;
    }

    /** Checks the configuration, then builds the transport, the driver and the lifecycle. */
    private static ManagedSandboxRunner<DaytonaHandle> lifecycle(Builder b, LifecycleOptions options) {
        if (b.apiKey == null) {
            throw new SandboxConfigurationException("daytona: no API key: set " + API_KEY_VARIABLE
                    + " or call DaytonaSandboxRunner.builder().apiKey(...)");
        }
        HttpUrl url = HttpUrl.parse(b.apiUrl);
        if (url == null) {
            throw new SandboxConfigurationException("daytona: API URL '" + b.apiUrl + "' is not an http(s) URL");
        }
        Duration startTimeout = b.startTimeout != null ? b.startTimeout
                : b.image != null ? Duration.ofMinutes(10) : Duration.ofSeconds(60);
        DaytonaDriver driver = new DaytonaDriver(new DaytonaSettings(b.apiKey, url, b.client, b.target, b.snapshot,
                b.image, startTimeout, b.statusPollInterval, b.requestTimeout));
        return ManagedSandboxRunner.builder(driver).options(options).build();
    }

    /** {@return a new builder; {@link Builder#apiKey} is required} */
    public static Builder builder() {
        return new Builder();
    }

    /**
     * Configured from the process environment: {@value #API_KEY_VARIABLE}, {@value #API_URL_VARIABLE}, {@value #TARGET_VARIABLE}.
     *
     * @return the runner
     * @throws SandboxConfigurationException naming {@value #API_KEY_VARIABLE} when it is not set
     */
    public static DaytonaSandboxRunner fromEnv() {
        return fromEnv(System.getenv());
    }

    /**
     * Configured from {@code env}: {@value #API_KEY_VARIABLE} (required), {@value #API_URL_VARIABLE}
     * (default {@value #DEFAULT_API_URL}) and {@value #TARGET_VARIABLE} (the region; default: the
     * organisation's).
     *
     * @param env the environment to read
     * @return the runner
     * @throws SandboxConfigurationException naming {@value #API_KEY_VARIABLE} when it is not set
     */
    public static DaytonaSandboxRunner fromEnv(Map<String, String> env) {
        return builderFromEnv(env).build();
    }

    /**
     * The builder {@link #fromEnv(Map)} builds, for settings the environment does not carry (a
     * lifecycle listener, an HTTP client).
     *
     * @param env the environment to read
     * @return the builder, with the key and whichever of the URL and target are set
     * @throws SandboxConfigurationException naming {@value #API_KEY_VARIABLE} when it is not set
     */
    public static Builder builderFromEnv(Map<String, String> env) {
        String key = env.get(API_KEY_VARIABLE);
        if (key == null || key.isBlank()) {
            throw new SandboxConfigurationException("daytona: " + API_KEY_VARIABLE + " is not set");
        }
        Builder b = builder().apiKey(key.trim());
        String url = env.get(API_URL_VARIABLE);
        if (url != null && !url.isBlank()) {
            b.apiUrl(url.trim());
        }
        String target = env.get(TARGET_VARIABLE);
        if (target != null && !target.isBlank()) {
            b.target(target.trim());
        }
        return b;
    }


    @Override
    public Capabilities capabilities() {
        return super.capabilities();
    }





    @Override
    public String toString() {
        return "DaytonaSandboxRunner[" + apiUrl + "]";
    }

    /**
     * Settings for {@link DaytonaSandboxRunner}: Daytona's own here, the lifecycle's (teardown, retries, owner,
     * lost-create window, listener) from {@link RunnerBuilder}. The API key never appears in {@code toString()}
     * or messages.
     *
     * @since 0.1.0
     */
    public static final class Builder extends RunnerBuilder<Builder> {
        private Secret apiKey;
        private String apiUrl = DEFAULT_API_URL;
        private String target;
        private String snapshot;
        private String image;
        private OkHttpClient client;
        private Duration requestTimeout = Duration.ofSeconds(90);
        private Duration startTimeout;
        private Duration statusPollInterval = Duration.ofMillis(100);

        private Builder() {
        }

        @Override
        protected Builder self() {
            return this;
        }

        /**
         * The API key ({@value #API_KEY_VARIABLE}); never logged or shown.
         *
         * @param apiKey not blank
         * @return this builder
         * @throws SandboxConfigurationException when null or blank
         */
        public Builder apiKey(String apiKey) {
            if (apiKey == null || apiKey.isBlank()) {
                throw new SandboxConfigurationException("daytona: the API key is empty (" + API_KEY_VARIABLE + ")");
            }
            this.apiKey = Secret.of(apiKey);
            return this;
        }

        /**
         * The API base URL, default {@value #DEFAULT_API_URL} ({@value #API_URL_VARIABLE}).
         *
         * @param apiUrl an http or https URL, checked by {@link #build()}; not null
         * @return this builder
         */
        public Builder apiUrl(String apiUrl) {
            this.apiUrl = Objects.requireNonNull(apiUrl, "apiUrl");
            return this;
        }

        /**
         * The region ({@value #TARGET_VARIABLE}), e.g. {@code us} or {@code eu}; default: the organisation's.
         *
         * @param target the region, or null for the organisation's
         * @return this builder
         */
        public Builder target(String target) {
            this.target = target;
            return this;
        }

        /**
         * The snapshot to create sandboxes from; default: Daytona's default snapshot. Not with {@link #image}.
         *
         * @param snapshot the snapshot's name, or null for Daytona's default
         * @return this builder
         */
        public Builder snapshot(String snapshot) {
            this.snapshot = snapshot;
            return this;
        }

        /**
         * Create sandboxes from this container image (Daytona builds, and caches, a snapshot from
         * {@code FROM <image>}) instead of a snapshot. Needed for vCPU, memory and disk limits. The
         * first create of an image waits for the build.
         *
         * @param image one word such as {@code python:3.12-slim}, or null for a snapshot
         * @return this builder
         * @throws IllegalArgumentException when blank or holding a space or control character
         */
        public Builder image(String image) {
            if (image != null && (image.isBlank() || image.chars().anyMatch(c -> c <= ' ' || c == 0x7f))) {
                throw new IllegalArgumentException("daytona: image '" + image + "' must be one word, e.g. python:3.12-slim");
            }
            this.image = image;
            return this;
        }

        /**
         * The caller's client (its pool, proxy, interceptors); read timeouts come from each call's deadline.
         *
         * @param client the client, or null for one of the runner's own
         * @return this builder
         */
        public Builder httpClient(OkHttpClient client) {
            this.client = client;
            return this;
        }

        /**
         * The deadline of one API call. Default 90 s: Daytona holds a create for up to 30 s.
         *
         * @param timeout positive
         * @return this builder
         * @throws IllegalArgumentException when null, zero or negative
         */
        public Builder requestTimeout(Duration timeout) {
            this.requestTimeout = positive(timeout, "requestTimeout");
            return this;
        }

        /**
         * How long to wait for a new sandbox to reach {@code started}. Default 60 s, or 10 min with an image.
         * It also bounds, up to 30 s, the wait for a lock-down after setup to show on the sandbox record.
         *
         * @param timeout positive
         * @return this builder
         * @throws IllegalArgumentException when null, zero or negative
         */
        public Builder startTimeout(Duration timeout) {
            this.startTimeout = positive(timeout, "startTimeout");
            return this;
        }

        /**
         * The first delay between status polls while a sandbox starts (it grows to 1 s). Default 100 ms.
         *
         * @param interval positive
         * @return this builder
         * @throws IllegalArgumentException when null, zero or negative
         */
        public Builder statusPollInterval(Duration interval) {
            this.statusPollInterval = positive(interval, "statusPollInterval");
            return this;
        }

        /**
         * @return the runner
         * @throws SandboxConfigurationException when the API key is missing or the URL is not http(s)
         * @throws IllegalArgumentException when both a snapshot and an image are set, the owner is malformed or
         *         the lost-create window is not positive
         */
        public DaytonaSandboxRunner build() {
            return new DaytonaSandboxRunner(this, lifecycleOptions());
        }

        private static Duration positive(Duration d, String what) {
            if (d == null || d.isNegative() || d.isZero()) {
                throw new IllegalArgumentException(what + " must be positive, was " + d);
            }
            return d;
        }
    }
}
