package dev.sandbox4j.api;

import dev.sandbox4j.policy.EgressPolicy;
import dev.sandbox4j.policy.Limits;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * What a sandbox is, fixed before the first line of untrusted code runs: its egress, lifetime and
 * size, trusted setup commands (with their own egress), input files, non-secret environment and
 * labels.
 *
 * <p>Setup commands are trusted code from the application, never from the model. They run, in order,
 * under {@link #setupEgress()} with a budget of {@link #setupBudget()} each; then the runner locks the
 * network down to {@link #egress()} before any untrusted code runs. A setup command that fails tears
 * the sandbox down.
 *
 * @since 0.1.0
 */
public final class SandboxSpec {
    private static final Pattern ENV_NAME = Pattern.compile("[A-Za-z_][A-Za-z0-9_]*");
    private static final Pattern LABEL_KEY = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._-]{0,62}");
    /** The lifetime of a session opened with no lifetime set: 10 minutes. */
    public static final Duration DEFAULT_SESSION_LIFETIME = Duration.ofMinutes(10);
    /** Added to the budgets of a one-shot run to get its default lifetime. */
    public static final Duration LIFETIME_MARGIN = Duration.ofSeconds(30);
    private static final SandboxSpec DEFAULTS = builder().build();

    private final EgressPolicy egress;
    private final EgressPolicy setupEgress;
    private final List<String> setupCommands;
    private final Duration setupBudget;
    private final Limits limits;
    private final List<InputFile> files;
    private final Map<String, String> env;
    private final Map<String, String> labels;
    private final Duration defaultLifetime;

    private SandboxSpec(Builder b) {
        this.egress = b.egress;
        this.setupEgress = b.setupEgress == null ? b.egress : b.setupEgress;
        this.setupCommands = List.copyOf(b.setupCommands);
        this.setupBudget = b.setupBudget;
        this.limits = b.limits;
        this.files = List.copyOf(b.files);
        this.env = Map.copyOf(b.env);
        this.labels = Map.copyOf(b.labels);
        this.defaultLifetime = b.defaultLifetime;
    }

    /** Deny-all egress, provider-default resources, no setup, no files. */
    public static SandboxSpec defaults() {
        return DEFAULTS;
    }

    public static Builder builder() {
        return new Builder();
    }

    public Builder toBuilder() {
        Builder b = new Builder();
        b.egress = egress;
        b.setupEgress = setupEgress.equals(egress) ? null : setupEgress;
        b.setupCommands.addAll(setupCommands);
        b.setupBudget = setupBudget;
        b.limits = limits;
        b.files.addAll(files);
        b.env.putAll(env);
        b.labels.putAll(labels);
        b.defaultLifetime = defaultLifetime;
        return b;
    }

    /** The egress the untrusted code runs under. Deny-all by default. */
    public EgressPolicy egress() {
        return egress;
    }

    /** The egress the trusted setup commands run under; the same as {@link #egress()} unless set. */
    public EgressPolicy setupEgress() {
        return setupEgress;
    }

    /** Trusted shell command lines, run with {@code bash -c} before the untrusted code. */
    public List<String> setupCommands() {
        return setupCommands;
    }

    /** The budget of each setup command. */
    public Duration setupBudget() {
        return setupBudget;
    }

    public Limits limits() {
        return limits;
    }

    public List<InputFile> files() {
        return files;
    }

    /** Non-secret environment variables for the sandbox: nothing else of the host's environment gets in. */
    public Map<String, String> env() {
        return env;
    }

    /** Caller's labels (metadata, tags) attached to the sandbox, besides the run-id label. */
    public Map<String, String> labels() {
        return labels;
    }

    /** True when the setup phase needs a different egress than the code, so the policy must change live. */
    public boolean needsLockDown() {
        return !setupCommands.isEmpty() && !setupEgress.equals(egress);
    }

    /** The lifetime the caller set, if any. */
    public Optional<Duration> lifetime() {
        return limits.lifetime();
    }

    /**
     * The lifetime the provider's own clock enforces: the caller's {@link Limits#lifetime()} if set,
     * otherwise the default lifetime ({@link SandboxRunner#run} sets it to the setup and execution
     * budgets plus a margin; a session opened without one gets {@link #DEFAULT_SESSION_LIFETIME}).
     */
    public Duration effectiveLifetime() {
        return limits.lifetime().orElse(defaultLifetime);
    }

    @Override
    public String toString() {
        return "SandboxSpec[egress=" + egress
                + (setupCommands.isEmpty() ? "" : ", setupCommands=" + setupCommands.size() + ", setupEgress=" + setupEgress)
                + ", limits=" + limits + ", files=" + files.size() + ", env=" + env.keySet() + ", labels=" + labels + "]";
    }

    public static final class Builder {
        private EgressPolicy egress = EgressPolicy.denyAll();
        private EgressPolicy setupEgress;
        private final List<String> setupCommands = new ArrayList<>();
        private Duration setupBudget = Duration.ofMinutes(5);
        private Limits limits = Limits.defaults();
        private final List<InputFile> files = new ArrayList<>();
        private final Map<String, String> env = new LinkedHashMap<>();
        private final Map<String, String> labels = new LinkedHashMap<>();
        private Duration defaultLifetime = DEFAULT_SESSION_LIFETIME;

        private Builder() {
        }

        /**
         * The lifetime used when {@link Limits#lifetime()} is unset. Unlike a lifetime limit it is not
         * checked against capabilities: it is the provider-side backstop for a crashed client.
         */
        public Builder defaultLifetime(Duration defaultLifetime) {
            if (defaultLifetime.isNegative() || defaultLifetime.isZero()) {
                throw new IllegalArgumentException("defaultLifetime must be positive, was " + defaultLifetime);
            }
            this.defaultLifetime = defaultLifetime;
            return this;
        }

        public Builder egress(EgressPolicy egress) {
            this.egress = Objects.requireNonNull(egress, "egress");
            return this;
        }

        public Builder setupEgress(EgressPolicy setupEgress) {
            this.setupEgress = Objects.requireNonNull(setupEgress, "setupEgress");
            return this;
        }

        /** A trusted command line from the application (never from the model), run with {@code bash -c}. */
        public Builder setupCommand(String commandLine) {
            setupCommands.add(Objects.requireNonNull(commandLine, "commandLine"));
            return this;
        }

        public Builder setupBudget(Duration setupBudget) {
            if (setupBudget.isNegative() || setupBudget.isZero()) {
                throw new IllegalArgumentException("setupBudget must be positive, was " + setupBudget);
            }
            this.setupBudget = setupBudget;
            return this;
        }

        public Builder limits(Limits limits) {
            this.limits = Objects.requireNonNull(limits, "limits");
            return this;
        }

        public Builder file(InputFile file) {
            files.add(Objects.requireNonNull(file, "file"));
            return this;
        }

        public Builder file(String path, String utf8) {
            return file(InputFile.of(path, utf8));
        }

        /** A non-secret variable. Secrets belong in header rules of the egress policy, not here. */
        public Builder env(String name, String value) {
            if (name == null || !ENV_NAME.matcher(name).matches()) {
                throw new IllegalArgumentException("'" + name + "' is not a valid environment variable name");
            }
            env.put(name, Objects.requireNonNull(value, "value"));
            return this;
        }

        public Builder label(String key, String value) {
            if (key == null || !LABEL_KEY.matcher(key).matches()) {
                throw new IllegalArgumentException("'" + key + "' is not a valid label key ([A-Za-z0-9._-], at most 63)");
            }
            if (key.startsWith("sandbox4j")) {
                throw new IllegalArgumentException("label keys starting with 'sandbox4j' are reserved");
            }
            labels.put(key, Objects.requireNonNull(value, "value"));
            return this;
        }

        public SandboxSpec build() {
            return new SandboxSpec(this);
        }
    }
}
