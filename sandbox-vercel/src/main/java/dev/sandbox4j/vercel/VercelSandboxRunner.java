package dev.sandbox4j.vercel;

import dev.sandbox4j.api.ForwardingSandboxRunner;
import dev.sandbox4j.api.Sandbox;
import dev.sandbox4j.api.exception.SandboxConfigurationException;
import dev.sandbox4j.api.SandboxRunner;
import dev.sandbox4j.spi.LifecycleOptions;
import dev.sandbox4j.spi.RunnerBuilder;
import dev.sandbox4j.spi.lifecycle.ManagedSandboxRunner;
import dev.sandbox4j.policy.Capabilities;
import dev.sandbox4j.vercel.internal.VercelCredentials;
import dev.sandbox4j.vercel.internal.VercelDriver;
import dev.sandbox4j.vercel.internal.VercelSettings;
import dev.sandbox4j.vercel.internal.VercelHandle;
import java.time.Duration;
import java.util.Map;
import java.util.Objects;
import okhttp3.HttpUrl;
import okhttp3.OkHttpClient;

/**
 * Runs code in <a href="https://vercel.com/docs/sandbox">Vercel Sandbox</a> microVMs.
 *
 * <pre>{@code
 * try (SandboxRunner vercel = VercelSandboxRunner.fromEnv()) {   // VERCEL_TOKEN, VERCEL_TEAM_ID, VERCEL_PROJECT_ID
 *     RunResult r = vercel.run(RunRequest.python("print(6 * 7)"));
 * }
 * }</pre>
 *
 * <p>Each sandbox is created non-persistent, named {@code s4j-<runId>}, with the spec's lifetime as
 * Vercel's timeout and the whole egress policy in the create call; every command is one streaming
 * request; close stops the session. A one-shot run is three HTTP requests: create, run, stop.
 *
 * <p>Credentials: an access token with the team and project it acts for, or a Vercel OIDC token
 * ({@code VERCEL_OIDC_TOKEN}) whose claims name them. The token never appears in logs, messages or
 * {@link #toString()}.
 *
 * @since 0.1.0
 */
public final class VercelSandboxRunner extends ForwardingSandboxRunner<SandboxRunner> {
    // held here, not in the superclass's type: the public signature names no handle of the internal package
    private final ManagedSandboxRunner<VercelHandle> lifecycle;
    /** Vercel's REST API. */
    public static final String DEFAULT_BASE_URL = "https://vercel.com/api";
    /** Overrides the base URL (a proxy or an emulator). */
    public static final String API_URL = "VERCEL_API_URL";
    /** Code up to this many UTF-8 bytes goes as one argv element; longer code is uploaded as a file. */
    public static final int DEFAULT_MAX_ARGV_BYTES = 64 * 1024;

    private final String description;

    private VercelSandboxRunner(ManagedSandboxRunner<VercelHandle> delegate, String description) {
        super(delegate);
        this.lifecycle = delegate;
        this.description = description;
    }

    /** The lifecycle and, through it, the driver (for this module's tests). */
    ManagedSandboxRunner<VercelHandle> lifecycle() {
        return lifecycle;
    }

    /** {@return a new builder; a token with a team and project id, or an OIDC token, is required} */
    public static Builder builder() {
        return new Builder();
    }

    /**
     * The runner configured from the process environment, as {@link #fromEnv(Map)} reads it.
     *
     * @return the runner
     * @throws SandboxConfigurationException naming the variables to set
     */
    public static VercelSandboxRunner fromEnv() {
        return fromEnv(System.getenv());
    }

    /**
     * Configured from Vercel's own variables: {@code VERCEL_TOKEN} with {@code VERCEL_TEAM_ID} and
     * {@code VERCEL_PROJECT_ID}, or {@code VERCEL_OIDC_TOKEN} alone; {@code VERCEL_API_URL} overrides
     * the base URL.
     *
     * @param env the environment to read
     * @return the runner
     * @throws SandboxConfigurationException naming the variables to set
     */
    public static VercelSandboxRunner fromEnv(Map<String, String> env) {
        return builderFromEnv(env).build();
    }

    /**
     * The builder {@link #fromEnv(Map)} builds, for settings the environment does not carry (a
     * lifecycle listener, an HTTP client).
     *
     * @param env the environment to read
     * @return the builder, with the credentials and the base URL when set
     * @throws SandboxConfigurationException naming the variables to set
     */
    public static Builder builderFromEnv(Map<String, String> env) {
        String token = env.get(VercelCredentials.TOKEN);
        String team = env.get(VercelCredentials.TEAM_ID);
        String project = env.get(VercelCredentials.PROJECT_ID);
        String oidc = env.get(VercelCredentials.OIDC_TOKEN);
        Builder b = builder();
        boolean haveIds = !blank(team) && !blank(project);
        if (!blank(token) && (haveIds || blank(oidc))) {
            b.token(token).teamId(team).projectId(project);
        } else if (!blank(oidc)) {
            b.oidcToken(oidc);
        } else {
            throw new SandboxConfigurationException("vercel: no credentials: set " + VercelCredentials.TOKEN + ", "
                    + VercelCredentials.TEAM_ID + " and " + VercelCredentials.PROJECT_ID + " (an access token), or "
                    + VercelCredentials.OIDC_TOKEN + " (e.g. from `vercel env pull`)");
        }
        String url = env.get(API_URL);
        if (!blank(url)) {
            b.baseUrl(url.trim());
        }
        return b;
    }


    @Override
    public Capabilities capabilities() {
        return super.capabilities();
    }





    @Override
    public String toString() {
        return "VercelSandboxRunner[" + description + "]";
    }

    private static boolean blank(String s) {
        return s == null || s.isBlank();
    }

    /**
     * Settings for {@link VercelSandboxRunner}: Vercel's own here, the lifecycle's (teardown, retries, owner,
     * lost-create window, listener) from {@link RunnerBuilder}. Tokens never appear in {@code toString()} or
     * messages.
     *
     * @since 0.1.0
     */
    public static final class Builder extends RunnerBuilder<Builder> {
        private String token;
        private String teamId;
        private String projectId;
        private String oidcToken;
        private String baseUrl = DEFAULT_BASE_URL;
        private OkHttpClient httpClient;
        private String image;
        private String runtime;
        private Duration execGrace = Duration.ofSeconds(10);
        private Duration killTimeout = Duration.ofSeconds(10);
        private Duration requestTimeout = Duration.ofSeconds(60);
        private int maxArgvBytes = DEFAULT_MAX_ARGV_BYTES;

        private Builder() {
        }

        @Override
        protected Builder self() {
            return this;
        }

        /**
         * A Vercel access token (account settings); needs {@link #teamId} and {@link #projectId}.
         *
         * @param token the access token, or null
         * @return this builder
         */
        public Builder token(String token) {
            this.token = token;
            return this;
        }

        /**
         * The team the token acts for ({@code team_...}); sent as {@code teamId} on every request.
         *
         * @param teamId the team's id, or null
         * @return this builder
         */
        public Builder teamId(String teamId) {
            this.teamId = teamId;
            return this;
        }

        /**
         * The project sandboxes belong to ({@code prj_...}).
         *
         * @param projectId the project's id, or null
         * @return this builder
         */
        public Builder projectId(String projectId) {
            this.projectId = projectId;
            return this;
        }

        /**
         * A Vercel OIDC token instead of an access token: team and project come from its claims.
         *
         * @param jwt the OIDC token, or null
         * @return this builder
         */
        public Builder oidcToken(String jwt) {
            this.oidcToken = jwt;
            return this;
        }

        /**
         * Default {@value #DEFAULT_BASE_URL}.
         *
         * @param baseUrl an http or https URL, checked by {@link #build()}; not null
         * @return this builder
         */
        public Builder baseUrl(String baseUrl) {
            this.baseUrl = Objects.requireNonNull(baseUrl, "baseUrl");
            return this;
        }

        /**
         * Your OkHttpClient (its pool, proxy, interceptors); a shared default otherwise.
         *
         * @param client the client, or null for the shared default
         * @return this builder
         */
        public Builder httpClient(OkHttpClient client) {
            this.httpClient = client;
            return this;
        }

        /**
         * The image to boot ({@code vercel/sandbox/universal}, the server's default when unset, has
         * python3, node and bash; {@code vercel/sandbox/node:24}, your own, ...).
         *
         * @param image the image's name, or null for the server's default
         * @return this builder
         */
        public Builder image(String image) {
            this.image = image;
            return this;
        }

        /**
         * A legacy runtime ({@code node24}, {@code python3.13}) instead of an image; creates go to /v2.
         *
         * @param runtime the runtime's name, or null for none
         * @return this builder
         */
        public Builder runtime(String runtime) {
            this.runtime = runtime;
            return this;
        }

        /**
         * The client deadline of one API call other than a command's stream. Default 60 s.
         *
         * @param timeout positive
         * @return this builder
         * @throws IllegalArgumentException when null, zero or negative
         */
        public Builder requestTimeout(Duration timeout) {
            this.requestTimeout = requirePositive(timeout, "requestTimeout");
            return this;
        }

        /**
         * How long past a command's budget this client keeps reading before it kills the command itself
         * (Vercel's own per-command timeout fires at the budget). Default 10 s.
         *
         * @param grace positive
         * @return this builder
         * @throws IllegalArgumentException when null, zero or negative
         */
        public Builder execGrace(Duration grace) {
            this.execGrace = requirePositive(grace, "execGrace");
            return this;
        }

        /**
         * Code longer than this (UTF-8 bytes) is uploaded and run as a file. Default 64 KiB.
         *
         * @param bytes from 1 to 120 KiB
         * @return this builder
         * @throws IllegalArgumentException when outside 1 to 122,880
         */
        public Builder maxArgvBytes(int bytes) {
            if (bytes < 1 || bytes > 120 * 1024) {
                throw new IllegalArgumentException("maxArgvBytes must be 1..122880 (Linux caps one argument at 128 KiB)");
            }
            this.maxArgvBytes = bytes;
            return this;
        }

        /** The kill request's own deadline (tests shorten it). */
        Builder killTimeout(Duration timeout) {
            this.killTimeout = timeout;
            return this;
        }

        /**
         * @return the runner
         * @throws SandboxConfigurationException when credentials are missing or inconsistent, or both an
         *         image and a runtime are set
         */
        public VercelSandboxRunner build() {
            VercelCredentials credentials;
            if (token != null && !token.isBlank()) {
                credentials = VercelCredentials.of(token, teamId, projectId);
            } else if (oidcToken != null && !oidcToken.isBlank()) {
                credentials = VercelCredentials.oidc(oidcToken);
            } else {
                throw new SandboxConfigurationException("vercel: no credentials: set a token with teamId and projectId ("
                        + VercelCredentials.TOKEN + ", " + VercelCredentials.TEAM_ID + ", " + VercelCredentials.PROJECT_ID
                        + ") or an OIDC token (" + VercelCredentials.OIDC_TOKEN + ")");
            }
            if (image != null && runtime != null) {
                throw new SandboxConfigurationException("vercel: set an image or a runtime, not both");
            }
            HttpUrl url = HttpUrl.parse(baseUrl);
            if (url == null) {
                throw new SandboxConfigurationException("vercel: base URL '" + baseUrl + "' is not an http(s) URL");
            }
            LifecycleOptions options = lifecycleOptions();
            VercelDriver driver = new VercelDriver(new VercelSettings(credentials, url, httpClient,
                    options.retryBaseDelay().orElse(null), image, runtime, execGrace, killTimeout, maxArgvBytes,
                    requestTimeout));
            ManagedSandboxRunner<VercelHandle> managed = ManagedSandboxRunner.builder(driver).options(options).build();
            return new VercelSandboxRunner(managed, driver.baseUrl() + ", team " + credentials.teamId()
                    + ", project " + credentials.projectId());
        }

        private static Duration requirePositive(Duration d, String what) {
            if (d == null || d.isNegative() || d.isZero()) {
                throw new IllegalArgumentException(what + " must be positive, was " + d);
            }
            return d;
        }
    }
}
