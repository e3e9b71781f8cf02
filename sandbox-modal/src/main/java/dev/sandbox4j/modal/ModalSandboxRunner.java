package dev.sandbox4j.modal;

import dev.sandbox4j.api.ForwardingSandboxRunner;
import dev.sandbox4j.api.SandboxRunner;
import dev.sandbox4j.api.exception.SandboxConfigurationException;
import dev.sandbox4j.spi.Backoff;
import dev.sandbox4j.spi.LifecycleOptions;
import dev.sandbox4j.spi.RunnerBuilder;
import dev.sandbox4j.spi.lifecycle.ManagedSandboxRunner;
import dev.sandbox4j.spi.Secret;
import dev.sandbox4j.modal.internal.ModalDriver;
import dev.sandbox4j.modal.internal.ModalHandle;
import dev.sandbox4j.modal.internal.ModalSettings;
import dev.sandbox4j.policy.Capabilities;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;

/**
 * Runs code in <a href="https://modal.com/docs/guide/sandbox">Modal Sandboxes</a>, over gRPC (Modal
 * has no REST API): the control plane at {@code MODAL_SERVER_URL} and, for exec and output, the
 * per-task command router whose URL and JWT the control plane hands out.
 *
 * <pre>{@code
 * try (SandboxRunner modal = ModalSandboxRunner.fromEnv()) {   // MODAL_TOKEN_ID, MODAL_TOKEN_SECRET
 *     RunResult r = modal.run(RunRequest.python("print(6 * 7)"));
 * }
 * }</pre>
 *
 * <p>Per runner, once and cached: the auth JWT ({@code AuthTokenGet}, refreshed after half its
 * lifetime and re-fetched on UNAUTHENTICATED), the app ({@code AppGetOrCreate}), the environment's
 * image builder version ({@code EnvironmentGetOrCreate}) and the image ({@code ImageGetOrCreate}, one
 * per layer, plus {@code ImageJoinStreaming} while it builds). Then one small run is six RPCs:
 * {@code SandboxCreateV2} (with the whole egress policy, the lifetime, resources and the run id as a
 * tag), {@code TaskExecStart}, the stdout and stderr {@code TaskExecStdioRead} streams,
 * {@code TaskExecWait} and {@code SandboxTerminateV2}. V2 is the JS SDK 0.11.1's default and saves
 * V1's {@code SandboxGetTaskId} polling and {@code TaskGetCommandRouterAccess} (V2's create returns
 * the task and the router access); {@link Builder#sandboxV2(boolean) sandboxV2(false)} (or
 * {@code MODAL_SANDBOX_V2=false}) selects V1.
 *
 * <p>Code goes to the interpreter as an argument ({@code python3 -c CODE}, {@code bash -c CODE});
 * code with a NUL byte or over the argv limit (the router takes 64 KiB of arguments in all) is written,
 * in base64 chunks passed as arguments to a fixed script, to a file in the working directory and run
 * from there. The router has no kill for one exec: at the hard output cap or the client deadline the
 * adapter kills the command's processes by a marker variable in a second exec, and the sandbox stays
 * usable for the next exec of a session. An interrupt tears the sandbox down.
 *
 * <p>Output streams as it happens ({@code Feature.STREAMING}): the two {@code TaskExecStdioRead}
 * streams are read as the router sends them, from the offset received so far (a dropped stream is
 * reopened there), and each chunk reaches the execution's listener while the command runs. Files are
 * read and listed ({@code Feature.READ_FILES}, {@code LIST_FILES}) through Modal's filesystem tool, as
 * the JS SDK 0.11.1's {@code sandbox.filesystem} runs it: an exec of
 * {@code /__modal/.bin/modal-sandbox-fs-tools} with one JSON argument ({@code Stat}, {@code ReadFile},
 * {@code ListFiles}), three router calls each (start, wait, one stdio read). The tool follows links, so
 * a {@code Stat} of every path component (which describes a link itself) refuses a link first; code
 * still running in the sandbox could swap a component between that check and the read, which reaches
 * only files of its own sandbox. Reads are cut at the cap (the stream is cancelled past it); a listing
 * larger than 4 MiB of JSON is refused. Without a configured {@link Builder#workdir(String) workdir}
 * the working directory is asked once per sandbox ({@code pwd}), since the tool takes absolute paths.
 * The languages are those of the image: declared ({@link Builder#languages}, default Python and Bash,
 * what {@code python:3.13-slim} has), or found in it once per runner ({@link Builder#probeLanguages}:
 * Modal answers in one exec, {@code command -v python3 node bash}, in a deny-all sandbox the lifecycle
 * opens and terminates); code in any other language is refused before any call.
 *
 * <p>TLS on the JVM's default trust roots for the control plane and the router; plaintext only when
 * the server URL is {@code http://} (a local server), as the SDKs do. There is no trust-all switch.
 * What Modal cannot enforce exactly is refused before any call; see {@link #capabilities()}.
 *
 * @since 0.1.0
 */
public final class ModalSandboxRunner extends ForwardingSandboxRunner<SandboxRunner> {
    // held here, not in the superclass's type: the public signature names no handle of the internal package
    private final ManagedSandboxRunner<ModalHandle> lifecycle;
    /** The environment variable replacing the control-plane URL ({@code server_url} in the config file). */
    public static final String SERVER_URL_VARIABLE = "MODAL_SERVER_URL";
    /**
     * The environment variable holding the token id ({@code ak-...}); required unless the config file has
     * one.
     */
    public static final String TOKEN_ID_VARIABLE = "MODAL_TOKEN_ID";
    /**
     * The environment variable holding the token secret ({@code as-...}); required unless the config file has
     * one.
     */
    public static final String TOKEN_SECRET_VARIABLE = "MODAL_TOKEN_SECRET";
    /** The environment variable naming the Modal environment; the workspace default when unset. */
    public static final String ENVIRONMENT_VARIABLE = "MODAL_ENVIRONMENT";
    /**
     * The environment variable naming the profile of the config file to read; else the one marked {@code
     * active = true}.
     */
    public static final String PROFILE_VARIABLE = "MODAL_PROFILE";
    /** The environment variable naming the config file; {@code ~/.modal.toml} when unset. */
    public static final String CONFIG_PATH_VARIABLE = "MODAL_CONFIG_PATH";
    /** The environment variable naming the image builder version, which saves a lookup. */
    public static final String IMAGE_BUILDER_VERSION_VARIABLE = "MODAL_IMAGE_BUILDER_VERSION";
    /**
     * The environment variable choosing the V2 sandbox RPCs ({@code false} or {@code 0} for V1); default
     * true.
     */
    public static final String SANDBOX_V2_VARIABLE = "MODAL_SANDBOX_V2";
    /** The environment variable capping a server-requested throttle wait, in seconds. */
    public static final String MAX_THROTTLE_WAIT_VARIABLE = "MODAL_MAX_THROTTLE_WAIT";
    /** sandbox4j's own: the app the sandboxes belong to. */
    public static final String APP_VARIABLE = "SANDBOX4J_MODAL_APP";
    /** sandbox4j's own: the registry image to start from. */
    public static final String IMAGE_VARIABLE = "SANDBOX4J_MODAL_IMAGE";
    /** sandbox4j's own: {@code gvisor} or {@code vm}; unset for Modal's default. */
    public static final String RUNTIME_VARIABLE = "SANDBOX4J_MODAL_RUNTIME";
    /**
     * sandbox4j's own: the image's languages, a comma list ({@code python,javascript,bash}) for
     * {@link Builder#languages}, or {@code probe} for {@link Builder#probeLanguages}.
     */
    public static final String LANGUAGES_VARIABLE = "SANDBOX4J_MODAL_LANGUAGES";
    /** The app sandboxes are created in when none is set (made if missing). */
    public static final String DEFAULT_APP = "sandbox4j";
    /** The registry image sandboxes start from when none is set. */
    public static final String DEFAULT_IMAGE = "python:3.13-slim";
    private static final Duration DEFAULT_RETRY_BASE_DELAY = Duration.ofMillis(100);

    private final String description;

    private ModalSandboxRunner(ManagedSandboxRunner<ModalHandle> lifecycle, String description) {
        super(lifecycle);
        this.lifecycle = lifecycle;
        this.description = description;
    }

    /** {@return a new builder; {@link Builder#tokenId} and {@link Builder#tokenSecret} are required} */
    public static Builder builder() {
        return new Builder();
    }

    /**
     * The runner configured from the process environment and the Modal config file, as {@link #fromEnv(Map)}
     * reads them.
     *
     * @return the runner
     * @throws SandboxConfigurationException naming MODAL_TOKEN_ID and MODAL_TOKEN_SECRET when either is
     *     missing
     */
    public static ModalSandboxRunner fromEnv() {
        return fromEnv(System.getenv());
    }

    /**
     * Configured as Modal's SDKs resolve it: each of {@code MODAL_SERVER_URL}, {@code MODAL_TOKEN_ID},
     * {@code MODAL_TOKEN_SECRET}, {@code MODAL_ENVIRONMENT} and {@code MODAL_IMAGE_BUILDER_VERSION}
     * from the environment, else from the profile of {@code ~/.modal.toml} (or
     * {@code MODAL_CONFIG_PATH}) named by {@code MODAL_PROFILE} or marked {@code active = true}
     * ({@code server_url}, {@code token_id}, {@code token_secret}, {@code environment},
     * {@code image_builder_version}), else the default. Also {@code MODAL_SANDBOX_V2} (default true),
     * {@code MODAL_MAX_THROTTLE_WAIT} (seconds), and sandbox4j's {@code SANDBOX4J_MODAL_APP},
     * {@code SANDBOX4J_MODAL_IMAGE}, {@code SANDBOX4J_MODAL_RUNTIME} and {@code SANDBOX4J_MODAL_LANGUAGES}.
     *
     * @param env the environment to read
     * @return the runner
     * @throws SandboxConfigurationException naming MODAL_TOKEN_ID and MODAL_TOKEN_SECRET when either is missing
     */
    public static ModalSandboxRunner fromEnv(Map<String, String> env) {
        return builderFromEnv(env).build();
    }

    /**
     * The builder {@link #fromEnv(Map)} builds, for settings the environment does not carry (a
     * lifecycle listener, channels).
     *
     * @param env the environment to read
     * @return the builder, with the token and whichever of the other settings are set
     * @throws SandboxConfigurationException naming MODAL_TOKEN_ID and MODAL_TOKEN_SECRET when either is missing
     */
    public static Builder builderFromEnv(Map<String, String> env) {
        Map<String, String> profile = ModalSettings.profile(env);
        Builder b = builder();
        String id = pick(env, TOKEN_ID_VARIABLE, profile, "token_id");
        String secret = pick(env, TOKEN_SECRET_VARIABLE, profile, "token_secret");
        if (id == null || secret == null) {
            throw missingToken();
        }
        b.tokenId(id).tokenSecret(secret);
        ifSet(pick(env, SERVER_URL_VARIABLE, profile, "server_url"), b::serverUrl);
        ifSet(pick(env, ENVIRONMENT_VARIABLE, profile, "environment"), b::environment);
        ifSet(pick(env, IMAGE_BUILDER_VERSION_VARIABLE, profile, "image_builder_version"), b::imageBuilderVersion);
        ifSet(pick(env, SANDBOX_V2_VARIABLE, profile, "sandbox_v2"), v -> b.sandboxV2(!v.equalsIgnoreCase("false") && !v.equals("0")));
        ifSet(env.get(MAX_THROTTLE_WAIT_VARIABLE), v -> {
            try {
                b.maxThrottleWait(Duration.ofMillis((long) (Double.parseDouble(v.trim()) * 1000)));
            } catch (NumberFormatException e) {
                throw new SandboxConfigurationException("modal: " + MAX_THROTTLE_WAIT_VARIABLE + " must be a number of seconds");
            }
        });
        ifSet(env.get(APP_VARIABLE), b::appName);
        ifSet(env.get(IMAGE_VARIABLE), b::image);
        ifSet(env.get(RUNTIME_VARIABLE), b::runtime);
        b.languagesSetting(LANGUAGES_VARIABLE, env.get(LANGUAGES_VARIABLE));
        return b;
    }

    private static String pick(Map<String, String> env, String variable, Map<String, String> profile, String key) {
        String v = env.get(variable);
        if (v == null || v.isBlank()) {
            v = profile.get(key);
        }
        return v == null || v.isBlank() ? null : v.trim();
    }

    private static void ifSet(String v, java.util.function.Consumer<String> setter) {
        if (v != null && !v.isBlank()) {
            setter.accept(v.trim());
        }
    }

    private static SandboxConfigurationException missingToken() {
        return new SandboxConfigurationException(SandboxConfigurationException.builder(
                "modal: no token: set " + TOKEN_ID_VARIABLE + " and " + TOKEN_SECRET_VARIABLE
                        + " (from `modal token new` or modal.com/settings/tokens), put them in ~/.modal.toml,"
                        + " or call tokenId(...) and tokenSecret(...)")
                .provider("modal"));
    }

    /**
     * Egress Modal enforces exactly: deny-all (BLOCKED), allow-all (OPEN), default deny with IPv4 CIDRs
     * and exact domains (ALLOWLIST; domains reach TLS on port 443 only, matched on SNI, which is
     * stricter than a domain here and listed among the implicit allowances); an empty allow list is
     * deny-all. Limits: vCPUs (milli-CPU, reservation and cap), memory (MiB, reservation and cap), and a
     * lifetime up to 24 hours in whole seconds, rounded up. Refused: wildcard domains (whether Modal's
     * {@code *.x} also matches {@code x} is undocumented), IPv6, denied CIDRs, default-allow rules, header
     * rules and disk limits. Live update ({@code Egress.LIVE_UPDATE}): a setup egress different from the
     * code's is given at create, and after the setup commands the router's {@code TaskSetNetworkAccess}
     * replaces it with the code's (an ALLOWLIST, as the official SDKs send it), then one exec kills every
     * process the setup left; Modal has no call that reads the policy back, so the call's OK is the only
     * confirmation, and any failure tears the sandbox down before the code runs.
     */
    @Override
    public Capabilities capabilities() {
        return super.capabilities();
    }

    /** The lifecycle and, through it, the driver (for this module's tests). */
    ManagedSandboxRunner<ModalHandle> lifecycle() {
        return lifecycle;
    }

    @Override
    public String toString() {
        return description;
    }

    /**
     * Settings for {@link ModalSandboxRunner}: Modal's own here, the lifecycle's (teardown, retries, owner,
     * lost-create window, listener) from {@link RunnerBuilder}; the default retry base delay is 100 ms, as
     * Modal's SDKs wait. The token id and secret never appear in {@code toString()} or messages.
     *
     * @since 0.1.0
     */
    public static final class Builder extends RunnerBuilder<Builder> {
        private String serverUrl = ModalSettings.DEFAULT_SERVER_URL;
        private Secret tokenId;
        private Secret tokenSecret;
        private String environment = "";
        private String appName = DEFAULT_APP;
        private String image = DEFAULT_IMAGE;
        private final List<String> dockerfileCommands = new ArrayList<>();
        private String imageBuilderVersion;
        private String runtime;
        private String workdir;
        private boolean sandboxV2 = true;
        private Duration requestTimeout = Duration.ofSeconds(60);
        private Duration execGrace = Duration.ofSeconds(1);
        private Duration imageBuildTimeout = Duration.ofMinutes(15);
        private Duration scheduleTimeout = Duration.ofMinutes(5);
        private Duration maxThrottleWait = Duration.ofSeconds(20);
        private int maxUnaryAttempts = 4;
        private int argvLimitBytes = 60 * 1024;
        private Backoff backoff;
        private ModalSettings.Channels channels;

        private Builder() {
        }

        @Override
        protected Builder self() {
            return this;
        }

        /**
         * The control-plane URL, {@code https://api.modal.com:443} by default (MODAL_SERVER_URL). {@code http://} means plaintext.
         *
         * @param url not null; an {@code http://} URL means plaintext
         * @return this builder
         */
        public Builder serverUrl(String url) {
            this.serverUrl = Objects.requireNonNull(url, "serverUrl");
            return this;
        }

        /**
         * The token id ({@code ak-...}). Required.
         *
         * @param tokenId not blank
         * @return this builder
         * @throws IllegalArgumentException when blank
         */
        public Builder tokenId(String tokenId) {
            this.tokenId = Secret.of(tokenId);
            return this;
        }

        /**
         * The token secret ({@code as-...}). Required.
         *
         * @param tokenSecret not blank
         * @return this builder
         * @throws IllegalArgumentException when blank
         */
        public Builder tokenSecret(String tokenSecret) {
            this.tokenSecret = Secret.of(tokenSecret);
            return this;
        }

        /**
         * The Modal environment; empty for the workspace default (MODAL_ENVIRONMENT).
         *
         * @param environment not null; empty for the default
         * @return this builder
         */
        public Builder environment(String environment) {
            this.environment = Objects.requireNonNull(environment, "environment");
            return this;
        }

        /**
         * The app the sandboxes are created in (made if missing). Default {@code sandbox4j}.
         *
         * @param appName not null
         * @return this builder
         */
        public Builder appName(String appName) {
            this.appName = Objects.requireNonNull(appName, "appName");
            return this;
        }

        /**
         * The registry image to start from ({@code FROM <image>}). Default {@code python:3.13-slim}.
         *
         * @param image not null
         * @return this builder
         */
        public Builder image(String image) {
            this.image = Objects.requireNonNull(image, "image");
            return this;
        }

        /**
         * Dockerfile commands built as one more layer on the image ({@code RUN pip install ...}); trusted.
         *
         * @param commands replace those set before; trusted, from the application
         * @return this builder
         */
        public Builder dockerfileCommands(List<String> commands) {
            this.dockerfileCommands.clear();
            this.dockerfileCommands.addAll(commands);
            return this;
        }

        /**
         * The image builder version, replacing the environment's (MODAL_IMAGE_BUILDER_VERSION); saves a lookup.
         *
         * @param version the version, or null to look it up
         * @return this builder
         */
        public Builder imageBuilderVersion(String version) {
            this.imageBuilderVersion = version;
            return this;
        }

        /**
         * {@code gvisor} or {@code vm}; null (the default) for Modal's own choice.
         *
         * @param runtime {@code gvisor} or {@code vm} (ignoring case and blanks), or null
         * @return this builder
         * @throws SandboxConfigurationException for any other value
         */
        public Builder runtime(String runtime) {
            if (runtime != null) {
                String r = runtime.trim().toLowerCase(Locale.ROOT);
                if (!r.equals("gvisor") && !r.equals("vm")) {
                    throw new SandboxConfigurationException("modal: runtime must be gvisor or vm, was '" + runtime + "'");
                }
                runtime = r;
            }
            this.runtime = runtime;
            return this;
        }

        /**
         * The absolute working directory of the sandbox and every exec; null (default) for the image's.
         *
         * @param workdir absolute, or null
         * @return this builder
         * @throws IllegalArgumentException when not absolute
         */
        public Builder workdir(String workdir) {
            if (workdir != null && !workdir.startsWith("/")) {
                throw new IllegalArgumentException("workdir must be absolute: " + workdir);
            }
            this.workdir = workdir;
            return this;
        }

        /**
         * {@code SandboxCreateV2} and the V2 RPCs (default, as the JS SDK 0.11.1), or V1 with {@code false}.
         *
         * @param v2 false for the V1 RPCs
         * @return this builder
         */
        public Builder sandboxV2(boolean v2) {
            this.sandboxV2 = v2;
            return this;
        }

        /**
         * The deadline of each unary call (lookups, create, terminate, TaskExecStart). Default 60 s.
         *
         * @param d positive
         * @return this builder
         * @throws IllegalArgumentException when null, zero or negative
         */
        public Builder requestTimeout(Duration d) {
            this.requestTimeout = positive(d, "requestTimeout");
            return this;
        }

        /**
         * How long past the budget the client waits for Modal's own exec timeout (the budget rounded up) before it gives up. Default 1 s.
         *
         * @param d zero or positive
         * @return this builder
         * @throws IllegalArgumentException when null or negative
         */
        public Builder execGrace(Duration d) {
            this.execGrace = positiveOrZero(d, "execGrace");
            return this;
        }

        /**
         * How long the first run may wait for the image to build: for each layer (the image, then the
         * {@link #dockerfileCommands} on it, if any), measured on the {@link #backoff} policy's clock.
         * Default 15 min.
         *
         * @param d positive
         * @return this builder
         * @throws IllegalArgumentException when null, zero or negative
         */
        public Builder imageBuildTimeout(Duration d) {
            this.imageBuildTimeout = positive(d, "imageBuildTimeout");
            return this;
        }

        /**
         * V1 only: how long a created sandbox may take to be scheduled before it is terminated. Its task is
         * looked up at once, then every 500 ms, on the {@link #backoff} policy's clock and sleeper; no lookup
         * starts after this. Default 5 min.
         *
         * @param d positive
         * @return this builder
         * @throws IllegalArgumentException when null, zero or negative
         */
        public Builder scheduleTimeout(Duration d) {
            this.scheduleTimeout = positive(d, "scheduleTimeout");
            return this;
        }

        /**
         * The longest server-requested throttle wait honoured (MODAL_MAX_THROTTLE_WAIT). Default 20 s.
         *
         * @param d zero or positive
         * @return this builder
         * @throws IllegalArgumentException when null or negative
         */
        public Builder maxThrottleWait(Duration d) {
            this.maxThrottleWait = positiveOrZero(d, "maxThrottleWait");
            return this;
        }

        /**
         * The whole backoff policy (delays, sleeper, clock), e.g. for tests.
         *
         * @param backoff not null; used instead of the policy built from {@code retryBaseDelay} and
         *     {@link #maxThrottleWait}
         * @return this builder
         */
        public Builder backoff(Backoff backoff) {
            this.backoff = Objects.requireNonNull(backoff, "backoff");
            return this;
        }

        /**
         * Tries per idempotent unary call on a transient failure. Default 4 (three retries, as the SDKs).
         *
         * @param n at least 1
         * @return this builder
         * @throws IllegalArgumentException when below 1
         */
        public Builder maxUnaryAttempts(int n) {
            if (n < 1) {
                throw new IllegalArgumentException("maxUnaryAttempts must be at least 1");
            }
            this.maxUnaryAttempts = n;
            return this;
        }

        /**
         * Code longer than this (UTF-8 bytes) is written to a file and run from there. Default 60 KiB (the whole argv stays under 64 KiB).
         *
         * @param bytes from 0 to 120 KiB
         * @return this builder
         * @throws IllegalArgumentException when negative or over 120 KiB
         */
        public Builder argvLimitBytes(int bytes) {
            if (bytes < 0 || bytes > 120 * 1024) {
                throw new IllegalArgumentException("argvLimitBytes must be between 0 and 120 KiB (Linux allows 128 KiB per argument)");
            }
            this.argvLimitBytes = bytes;
            return this;
        }

        /** Opens the gRPC channels (control plane and routers); for tests with in-process channels. */
        Builder channels(ModalSettings.Channels channels) {
            this.channels = channels;
            return this;
        }

        /**
         * Builds the runner.
         *
         * @return the runner
         * @throws SandboxConfigurationException naming the token variables when either is missing, or a bad
         *     URL
         */
        public ModalSandboxRunner build() {
            if (tokenId == null || tokenSecret == null) {
                throw missingToken();
            }
            URI url;
            try {
                url = URI.create(serverUrl.trim());
            } catch (IllegalArgumentException e) {
                throw new SandboxConfigurationException("modal: " + SERVER_URL_VARIABLE + " '" + serverUrl + "' is not a URL");
            }
            LifecycleOptions options = lifecycleOptions();
            Backoff b = backoff != null ? backoff
                    : Backoff.builder().base(options.retryBaseDelay().orElse(DEFAULT_RETRY_BASE_DELAY))
                            .max(Duration.ofSeconds(1)).maxRetryAfter(maxThrottleWait).build();
            ModalSettings settings = new ModalSettings(url, tokenId, tokenSecret, environment, appName, image,
                    dockerfileCommands, imageBuilderVersion, runtime, workdir, sandboxV2, requestTimeout, execGrace,
                    imageBuildTimeout, scheduleTimeout, maxThrottleWait, maxUnaryAttempts, argvLimitBytes, b, channels);
            ModalDriver driver = new ModalDriver(settings);
            ManagedSandboxRunner<ModalHandle> lifecycle = ManagedSandboxRunner.builder(driver).options(options)
                    .backoff(b).build();
            return new ModalSandboxRunner(lifecycle, "ModalSandboxRunner[" + settings + "]");
        }

        private static Duration positive(Duration d, String what) {
            if (d == null || d.isNegative() || d.isZero()) {
                throw new IllegalArgumentException(what + " must be positive, was " + d);
            }
            return d;
        }

        private static Duration positiveOrZero(Duration d, String what) {
            if (d == null || d.isNegative()) {
                throw new IllegalArgumentException(what + " must not be negative, was " + d);
            }
            return d;
        }

        @Override
        public String toString() {
            return "ModalSandboxRunner.Builder[" + serverUrl + ", token=" + (tokenId == null ? "unset" : "***") + ", app=" + appName + "]";
        }
    }
}
