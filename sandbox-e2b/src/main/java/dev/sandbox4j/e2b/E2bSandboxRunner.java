package dev.sandbox4j.e2b;

import dev.sandbox4j.api.ForwardingSandboxRunner;
import dev.sandbox4j.api.Sandbox;
import dev.sandbox4j.api.exception.SandboxConfigurationException;
import dev.sandbox4j.api.SandboxRunner;
import dev.sandbox4j.spi.LifecycleOptions;
import dev.sandbox4j.spi.RunnerBuilder;
import dev.sandbox4j.spi.lifecycle.ManagedSandboxRunner;
import dev.sandbox4j.spi.Secret;
import dev.sandbox4j.e2b.internal.E2bDriver;
import dev.sandbox4j.e2b.internal.E2bHandle;
import dev.sandbox4j.e2b.internal.E2bSettings;
import dev.sandbox4j.policy.Capabilities;
import java.time.Duration;
import java.util.Map;
import java.util.Objects;
import okhttp3.HttpUrl;
import okhttp3.OkHttpClient;

/**
 * Runs code in <a href="https://e2b.dev">E2B</a> sandboxes.
 *
 * <pre>{@code
 * try (SandboxRunner e2b = E2bSandboxRunner.fromEnv()) {      // E2B_API_KEY
 *     RunResult r = e2b.run(RunRequest.python("print(6 * 7)"));
 * }
 * }</pre>
 *
 * <p>One small run costs three HTTP requests: create (with the whole egress policy, the lifetime,
 * labels and env), one streamed {@code process.Process/Start}, and the kill. Code goes to the
 * interpreter as an argument ({@code python3 -c CODE}, {@code node -e CODE}, {@code bash -c CODE});
 * code with a NUL byte or over the argv limit is uploaded and run as a file.
 *
 * <p>With {@link Builder#codeInterpreter(boolean)}, Python and JavaScript run as cells of E2B's code
 * interpreter ({@code code-interpreter-v1}, port 49999): state persists between execs of one
 * sandbox, an exception becomes its traceback on stderr and exit code 1, and a cell's result text
 * is appended to stdout. Bash (and the setup commands) still run as processes.
 *
 * <p>What E2B cannot enforce exactly is refused before any call; see {@link #capabilities()}.
 *
 * @since 0.1.0
 */
public final class E2bSandboxRunner extends ForwardingSandboxRunner<SandboxRunner> {
    // held here, not in the superclass's type: the public signature names no handle of the internal package
    private final ManagedSandboxRunner<E2bHandle> lifecycle;
    /**
     * The environment variable holding the team API key ({@code e2b_...}); required by {@link #fromEnv(Map)}.
     */
    public static final String API_KEY_VARIABLE = "E2B_API_KEY";
    /** The environment variable naming E2B's domain; {@link #DEFAULT_DOMAIN} when unset. */
    public static final String DOMAIN_VARIABLE = "E2B_DOMAIN";
    /** The environment variable replacing the control-plane base URL {@code https://api.<domain>}. */
    public static final String API_URL_VARIABLE = "E2B_API_URL";
    /** The environment variable replacing the envd and code-interpreter base URL of every sandbox. */
    public static final String SANDBOX_URL_VARIABLE = "E2B_SANDBOX_URL";
    /** sandbox4j's own: the template to create sandboxes from. */
    public static final String TEMPLATE_VARIABLE = "SANDBOX4J_E2B_TEMPLATE";
    /**
     * sandbox4j's own: the template's languages, a comma list ({@code python,javascript,bash}) for {@code
     * Builder.languages}, or {@code probe} for {@code Builder.probeLanguages}; unset declares all three
     * (E2B's default templates have them).
     */
    public static final String LANGUAGES_VARIABLE = "SANDBOX4J_E2B_LANGUAGES";
    /** sandbox4j's own: {@code true} runs Python and JavaScript as code-interpreter cells. */
    public static final String CODE_INTERPRETER_VARIABLE = "SANDBOX4J_E2B_CODE_INTERPRETER";
    /** E2B's domain when none is set: the API is {@code https://api.e2b.app}. */
    public static final String DEFAULT_DOMAIN = "e2b.app";
    /** The template sandboxes are created from when none is set and cells are off. */
    public static final String DEFAULT_TEMPLATE = "base";
    /**
     * The template sandboxes are created from when none is set and {@link Builder#codeInterpreter} is on.
     */
    public static final String CODE_INTERPRETER_TEMPLATE = "code-interpreter-v1";

    private static final Duration DEFAULT_RETRY_BASE_DELAY = Duration.ofMillis(500);

    private final String description;

    private E2bSandboxRunner(ManagedSandboxRunner<E2bHandle> lifecycle, String description) {
        super(lifecycle);
        this.lifecycle = lifecycle;
        this.description = description;
    }

    /** {@return a new builder; {@link Builder#apiKey} is required} */
    public static Builder builder() {
        return new Builder();
    }

    /**
     * The runner configured from the process environment, as {@link #fromEnv(Map)} reads it.
     *
     * @return the runner
     * @throws SandboxConfigurationException naming E2B_API_KEY when it is missing
     */
    public static E2bSandboxRunner fromEnv() {
        return fromEnv(System.getenv());
    }

    /**
     * Configured from E2B's own variables: {@code E2B_API_KEY} (required), {@code E2B_DOMAIN},
     * {@code E2B_API_URL} and {@code E2B_SANDBOX_URL} (which, as in E2B's SDKs, replaces the envd and
     * code-interpreter URLs of every sandbox, so one local emulator can serve both), plus
     * {@code SANDBOX4J_E2B_TEMPLATE} and {@code SANDBOX4J_E2B_CODE_INTERPRETER}.
     *
     * @param env the environment to read
     * @return the runner
     * @throws SandboxConfigurationException naming E2B_API_KEY when it is missing
     */
    public static E2bSandboxRunner fromEnv(Map<String, String> env) {
        return builderFromEnv(env).build();
    }

    /**
     * The builder {@link #fromEnv(Map)} builds, for settings the environment does not carry (a
     * lifecycle listener, an HTTP client).
     *
     * @param env the environment to read
     * @return the builder, with the key and whichever of the other variables are set
     * @throws SandboxConfigurationException naming E2B_API_KEY when it is missing
     */
    public static Builder builderFromEnv(Map<String, String> env) {
        Builder b = builder();
        String key = env.get(API_KEY_VARIABLE);
        if (key == null || key.isBlank()) {
            throw missingKey();
        }
        b.apiKey(key);
        ifSet(env, DOMAIN_VARIABLE, b::domain);
        ifSet(env, API_URL_VARIABLE, b::apiUrl);
        ifSet(env, SANDBOX_URL_VARIABLE, b::sandboxUrl);
        ifSet(env, TEMPLATE_VARIABLE, b::template);
        ifSet(env, CODE_INTERPRETER_VARIABLE, v -> b.codeInterpreter(Boolean.parseBoolean(v.trim())));
        return b.languagesSetting(LANGUAGES_VARIABLE, env.get(LANGUAGES_VARIABLE));
    }

    private static void ifSet(Map<String, String> env, String name, java.util.function.Consumer<String> setter) {
        String v = env.get(name);
        if (v != null && !v.isBlank()) {
            setter.accept(v.trim());
        }
    }

    private static SandboxConfigurationException missingKey() {
        return new SandboxConfigurationException(SandboxConfigurationException.builder(
                "e2b: no API key: set " + API_KEY_VARIABLE + " (from https://e2b.dev/dashboard) or call apiKey(...)")
                .provider("e2b"));
    }


    /**
     * Egress E2B enforces exactly: deny-all, allow-all, default deny with IPv4 CIDRs and domains
     * (exact or {@code *.x}), default allow with denied IPv4 CIDRs, header rules for exact hosts
     * under default deny, and a live update after setup commands. Refused: IPv6 CIDRs, a denied CIDR
     * inside an allowed one or next to allowed domains (E2B lets allow win), allowed CIDRs touching
     * the private ranges E2B always blocks, and lifetimes over 24 hours.
     */
    @Override
    public Capabilities capabilities() {
        return super.capabilities();
    }





    /** The lifecycle and, through it, the driver (for this module's tests). */
    ManagedSandboxRunner<E2bHandle> lifecycle() {
        return lifecycle;
    }

    @Override
    public String toString() {
        return description;
    }

    /**
     * Settings for {@link E2bSandboxRunner}: E2B's own here, the lifecycle's (teardown, retries, owner,
     * lost-create window, listener) from {@link RunnerBuilder}; the default retry base delay is 500 ms.
     * The API key never appears in {@code toString()} or messages.
     *
     * @since 0.1.0
     */
    public static final class Builder extends RunnerBuilder<Builder> {
        private Secret apiKey;
        private String domain = DEFAULT_DOMAIN;
        private String apiUrl;
        private String sandboxUrl;
        private String template;
        private boolean codeInterpreter;
        private OkHttpClient httpClient;
        private Duration execGrace = Duration.ofSeconds(5);
        private Duration requestTimeout = Duration.ofSeconds(60);
        private int maxFrameBytes = 1 << 20;
        private int maxLineBytes = 4 << 20;
        private int argvLimitBytes = 64 * 1024;

        private Builder() {
        }

        @Override
        protected Builder self() {
            return this;
        }

        /**
         * The team API key ({@code e2b_...}). Required.
         *
         * @param apiKey not blank; never shown in {@code toString()} or messages
         * @return this builder
         * @throws IllegalArgumentException when blank
         */
        public Builder apiKey(String apiKey) {
            this.apiKey = Secret.of(apiKey);
            return this;
        }

        /**
         * E2B's domain, {@code e2b.app} by default: the API is {@code https://api.<domain>}.
         *
         * @param domain not null
         * @return this builder
         */
        public Builder domain(String domain) {
            this.domain = Objects.requireNonNull(domain, "domain");
            return this;
        }

        /**
         * The control-plane base URL, replacing {@code https://api.<domain>} (E2B_API_URL).
         *
         * @param url an absolute http or https URL, checked by {@link #build()}; null for the default
         * @return this builder
         */
        public Builder apiUrl(String url) {
            this.apiUrl = url;
            return this;
        }

        /**
         * The envd and code-interpreter base URL for every sandbox, replacing
         * {@code https://49983-<id>.<domain>} and {@code https://49999-<id>.<domain>} (E2B_SANDBOX_URL).
         * Requests still carry {@code E2b-Sandbox-Id} and {@code E2b-Sandbox-Port}.
         *
         * @param url an absolute http or https URL, checked by {@link #build()}; null for E2B's per-sandbox
         *     hosts
         * @return this builder
         */
        public Builder sandboxUrl(String url) {
            this.sandboxUrl = url;
            return this;
        }

        /**
         * The template (name, {@code name:tag} or id). {@code base}, or {@code code-interpreter-v1} for cells.
         *
         * @param template the template, or null for the default
         * @return this builder
         */
        public Builder template(String template) {
            this.template = template;
            return this;
        }

        /**
         * Run Python and JavaScript as code-interpreter cells ({@code /execute}) instead of processes.
         *
         * @param codeInterpreter true to run cells; default false
         * @return this builder
         */
        public Builder codeInterpreter(boolean codeInterpreter) {
            this.codeInterpreter = codeInterpreter;
            return this;
        }

        /**
         * The caller's OkHttpClient (pool, proxy, interceptors); streams get a copy without a read timeout.
         *
         * @param client the client, or null for one of the runner's own
         * @return this builder
         */
        public Builder httpClient(OkHttpClient client) {
            this.httpClient = client;
            return this;
        }

        /**
         * How long past the budget the client waits for envd's own timeout verdict. Default 5 s.
         *
         * @param grace zero or positive
         * @return this builder
         * @throws IllegalArgumentException when null or negative
         */
        public Builder execGrace(Duration grace) {
            this.execGrace = positiveOrZero(grace, "execGrace");
            return this;
        }

        /**
         * The client deadline of each control-plane call (create, list, kill). Default 60 s.
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
         * The largest Connect envelope accepted from envd (it sends 32 KiB chunks). Default 1 MiB.
         *
         * @param bytes at least 1024
         * @return this builder
         * @throws IllegalArgumentException when below 1024
         */
        public Builder maxFrameBytes(int bytes) {
            this.maxFrameBytes = atLeast(bytes, 1024, "maxFrameBytes");
            return this;
        }

        /**
         * Code longer than this (UTF-8 bytes) is uploaded and run as a file. Default 64 KiB (Linux allows 128 KiB per argument).
         *
         * @param bytes from 0 to 120 KiB
         * @return this builder
         * @throws IllegalArgumentException when negative or over 120 KiB
         */
        public Builder argvLimitBytes(int bytes) {
            this.argvLimitBytes = atLeast(bytes, 0, "argvLimitBytes");
            if (bytes > 120 * 1024) {
                throw new IllegalArgumentException("argvLimitBytes must stay below Linux's 128 KiB per argument");
            }
            return this;
        }

        /**
         * Builds the runner.
         *
         * @return the runner
         * @throws SandboxConfigurationException naming E2B_API_KEY when no key was given, or a bad URL
         */
        public E2bSandboxRunner build() {
            if (apiKey == null) {
                throw missingKey();
            }
            HttpUrl api = url(apiUrl != null ? apiUrl : "https://api." + domain, API_URL_VARIABLE);
            HttpUrl sandbox = sandboxUrl == null ? null : url(sandboxUrl, SANDBOX_URL_VARIABLE);
            String tpl = template != null ? template : codeInterpreter ? CODE_INTERPRETER_TEMPLATE : DEFAULT_TEMPLATE;
            LifecycleOptions options = lifecycleOptions();
            Duration retryBaseDelay = options.retryBaseDelay().orElse(DEFAULT_RETRY_BASE_DELAY);
            E2bSettings settings = new E2bSettings(apiKey, api, domain, sandbox, tpl, codeInterpreter,
                    httpClient, execGrace, requestTimeout, retryBaseDelay, maxFrameBytes, maxLineBytes, argvLimitBytes);
            ManagedSandboxRunner<E2bHandle> lifecycle = ManagedSandboxRunner.builder(new E2bDriver(settings))
                    .retryBaseDelay(retryBaseDelay)
                    .options(options)
                    .build();
            return new E2bSandboxRunner(lifecycle, "E2bSandboxRunner[" + api + ", template=" + tpl
                    + (codeInterpreter ? ", code interpreter" : "") + (sandbox == null ? "" : ", sandboxUrl=" + sandbox) + "]");
        }

        private static HttpUrl url(String text, String variable) {
            HttpUrl u = HttpUrl.parse(text.trim());
            if (u == null) {
                throw new SandboxConfigurationException("e2b: " + variable + " '" + text + "' is not an http(s) URL");
            }
            return u;
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

        private static int atLeast(int n, int min, String what) {
            if (n < min) {
                throw new IllegalArgumentException(what + " must be at least " + min + ", was " + n);
            }
            return n;
        }

        @Override
        public String toString() {
            return "E2bSandboxRunner.Builder[apiKey=" + (apiKey == null ? "unset" : "***") + ", domain=" + domain + "]";
        }
    }
}
