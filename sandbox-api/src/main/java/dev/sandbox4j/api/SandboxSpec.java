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

    /**
     * Deny-all egress, provider-default resources, no setup, no files.
     *
     * @return the shared default spec
     */
    public static SandboxSpec defaults() {
        return DEFAULTS;
    }

    /**
     * {@return a new builder at the defaults: deny-all egress, provider-default limits, a 5-minute setup
     * budget}
     */
    public static Builder builder() {
        return new Builder();
    }

    /** {@return a builder holding this spec's settings, to derive a changed spec from} */
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

    /** {@return the egress the untrusted code runs under; deny-all by default} */
    public EgressPolicy egress() {
        return egress;
    }

    /**
     * {@return the egress the trusted setup commands run under; the same as {@link #egress()} unless set}
     */
    public EgressPolicy setupEgress() {
        return setupEgress;
    }

    /**
     * {@return the trusted shell command lines, run in order with {@code bash -c} before the untrusted code}
     */
    public List<String> setupCommands() {
        return setupCommands;
    }

    /** {@return the budget of each setup command; default 5 minutes} */
    public Duration setupBudget() {
        return setupBudget;
    }

    /** {@return the size and lifetime limits; by default every one at the runner's default} */
    public Limits limits() {
        return limits;
    }

    /** {@return the files written into the sandbox before any command runs, in the order added} */
    public List<InputFile> files() {
        return files;
    }

    /**
     * {@return the non-secret environment variables for the sandbox: nothing else of the host's environment
     * gets in}
     */
    public Map<String, String> env() {
        return env;
    }

    /** {@return the caller's labels (metadata, tags) attached to the sandbox, besides the run-id label} */
    public Map<String, String> labels() {
        return labels;
    }

    /**
     * {@return true when the setup phase needs a different egress than the code, so the policy must change
     * live}
     */
    public boolean needsLockDown() {
        return !setupCommands.isEmpty() && !setupEgress.equals(egress);
    }

    /** {@return the lifetime the caller set in {@link #limits()}, if any} */
    public Optional<Duration> lifetime() {
        return limits.lifetime();
    }

    /**
     * The lifetime the provider's own clock enforces: the caller's {@link Limits#lifetime()} if set,
     * otherwise the default lifetime ({@link SandboxRunner#run} sets it to the setup and execution budgets
     * plus a margin; a session opened without one gets {@link #DEFAULT_SESSION_LIFETIME}).
     *
     * @return the lifetime, positive
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

    /**
     * Collects a spec; each setter checks its value at once.
     *
     * @since 0.1.0
     */
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
         * checked against capabilities: it is the provider-side backstop for a crashed client. Default {@link
         * SandboxSpec#DEFAULT_SESSION_LIFETIME}.
         *
         * @param defaultLifetime positive
         * @return this builder
         * @throws IllegalArgumentException when zero or negative
         */
        public Builder defaultLifetime(Duration defaultLifetime) {
            if (defaultLifetime.isNegative() || defaultLifetime.isZero()) {
                throw new IllegalArgumentException("defaultLifetime must be positive, was " + defaultLifetime);
            }
            this.defaultLifetime = defaultLifetime;
            return this;
        }

        /**
         * Sets the egress the untrusted code runs under. Default {@link EgressPolicy#denyAll()}.
         *
         * @param egress not null
         * @return this builder
         */
        public Builder egress(EgressPolicy egress) {
            this.egress = Objects.requireNonNull(egress, "egress");
            return this;
        }

        /**
         * Sets the egress the trusted setup commands run under. Default the same as {@link
         * #egress(EgressPolicy)}.
         *
         * @param setupEgress not null
         * @return this builder
         */
        public Builder setupEgress(EgressPolicy setupEgress) {
            this.setupEgress = Objects.requireNonNull(setupEgress, "setupEgress");
            return this;
        }

        /**
         * Adds a trusted command line from the application (never from the model), run with {@code bash -c}.
         *
         * @param commandLine not null
         * @return this builder
         */
        public Builder setupCommand(String commandLine) {
            setupCommands.add(Objects.requireNonNull(commandLine, "commandLine"));
            return this;
        }

        /**
         * Sets the budget of each setup command. Default 5 minutes.
         *
         * @param setupBudget positive
         * @return this builder
         * @throws IllegalArgumentException when zero or negative
         */
        public Builder setupBudget(Duration setupBudget) {
            if (setupBudget.isNegative() || setupBudget.isZero()) {
                throw new IllegalArgumentException("setupBudget must be positive, was " + setupBudget);
            }
            this.setupBudget = setupBudget;
            return this;
        }

        /**
         * Sets the size and lifetime limits. Default {@link Limits#defaults()}.
         *
         * @param limits not null
         * @return this builder
         */
        public Builder limits(Limits limits) {
            this.limits = Objects.requireNonNull(limits, "limits");
            return this;
        }

        /**
         * Adds a file written into the sandbox before any command runs.
         *
         * @param file not null
         * @return this builder
         */
        public Builder file(InputFile file) {
            files.add(Objects.requireNonNull(file, "file"));
            return this;
        }

        /**
         * Adds a UTF-8 text file written into the sandbox before any command runs.
         *
         * @param path relative to the working directory, without empty, {@code .} or {@code ..} parts
         * @param utf8 the content, encoded as UTF-8
         * @return this builder
         * @throws IllegalArgumentException when the path is absolute, empty or holds such a part
         */
        public Builder file(String path, String utf8) {
            return file(InputFile.of(path, utf8));
        }

        /**
         * Adds a non-secret variable; a later value for the same name replaces the earlier one. Secrets
         * belong in header rules of the egress policy, not here.
         *
         * @param name letters, digits and {@code _}, not starting with a digit
         * @param value not null
         * @return this builder
         * @throws IllegalArgumentException when the name is not a valid environment variable name
         */
        public Builder env(String name, String value) {
            if (name == null || !ENV_NAME.matcher(name).matches()) {
                throw new IllegalArgumentException("'" + name + "' is not a valid environment variable name");
            }
            env.put(name, Objects.requireNonNull(value, "value"));
            return this;
        }

        /**
         * Adds a label attached to the sandbox; a later value for the same key replaces the earlier one.
         *
         * @param key {@code [A-Za-z0-9._-]}, at most 63 characters, starting with a letter or digit; not
         *     starting with {@code sandbox4j}, which is reserved
         * @param value not null
         * @return this builder
         * @throws IllegalArgumentException when the key is not valid or reserved
         */
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

        /** {@return the spec} */
        public SandboxSpec build() {
            return new SandboxSpec(this);
        }
    }
}
