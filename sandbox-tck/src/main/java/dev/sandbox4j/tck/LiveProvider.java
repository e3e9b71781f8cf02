package dev.sandbox4j.tck;

import dev.sandbox4j.api.SandboxRunner;
import dev.sandbox4j.api.SandboxRunners;
import dev.sandbox4j.api.SandboxRunnerProvider;
import java.net.InetAddress;
import java.net.URI;
import java.net.UnknownHostException;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import org.junit.jupiter.api.Assumptions;

/**
 * The {@code -Plive} run: the contract suite against a provider account named by the environment.
 * A live contract class builds its runner with {@link #runner()} and takes the canary's addresses
 * from here; every reason not to run ends the class as skipped, with the reason, before any call.
 *
 * <p>The egress canary cannot be a loopback listener when the sandbox runs in a provider's cloud: the
 * sandbox must reach this machine. {@value #CANARY_HOST} names the address the sandbox connects to (a
 * public address of this machine, or of a forwarder to it, with inbound TCP and UDP open on ephemeral
 * ports); the listener binds {@value #CANARY_BIND} (default {@code 0.0.0.0}). The canary counts only
 * bytes carrying the run's random tag, so stray traffic never makes a blocked connect look
 * successful, and the allow-all control run must reach it, so a canary nobody can reach fails rather
 * than passes. Against an emulator on loopback the sandbox runs on this machine and the loopback
 * canary is used.
 *
 * @since 0.1.0
 */
public final class LiveProvider {
    /** The address code in a remote sandbox connects to, to reach the canary on this machine. */
    public static final String CANARY_HOST = "SANDBOX4J_LIVE_CANARY_HOST";
    /** The address the canary listener binds to for a remote provider. Default {@code 0.0.0.0}. */
    public static final String CANARY_BIND = "SANDBOX4J_LIVE_CANARY_BIND";
    /** Set to {@code true} to allow a live run against a real provider where {@code CI} is set. */
    public static final String ALLOW_IN_CI = "SANDBOX4J_LIVE_IN_CI";

    private final String name;
    private final String credentialHint;
    private final String baseUrlVariable;
    private final Map<String, String> env;

    private LiveProvider(String name, String credentialHint, String baseUrlVariable, Map<String, String> env) {
        this.name = Objects.requireNonNull(name, "name");
        this.credentialHint = Objects.requireNonNull(credentialHint, "credentialHint");
        this.baseUrlVariable = Objects.requireNonNull(baseUrlVariable, "baseUrlVariable");
        this.env = Map.copyOf(env);
    }

    /**
     * The provider {@code name} (as {@link SandboxRunners#byName} knows it) configured from the process
     * environment. {@code credentialHint} says what to set; {@code baseUrlVariable} is the provider's
     * base-URL variable, which tells an emulator on loopback from the real service.
     *
     * @param name the provider's short name, e.g. {@code e2b}
     * @param credentialHint the variables a person sets, e.g. {@code E2B_API_KEY}
     * @param baseUrlVariable the provider's base-URL variable, e.g. {@code E2B_API_URL}
     * @return the live provider
     */
    public static LiveProvider of(String name, String credentialHint, String baseUrlVariable) {
        return new LiveProvider(name, credentialHint, baseUrlVariable, System.getenv());
    }

    /**
     * Whether the base URL is on this machine's loopback (an emulator), as opposed to the real service.
     *
     * @return true for an emulator on loopback
     */
    public boolean isLocalEmulator() {
        String url = env.get(baseUrlVariable);
        if (url == null || url.isBlank()) {
            return false;
        }
        try {
            String host = URI.create(url.trim()).getHost();
            return host != null && (host.equalsIgnoreCase("localhost") || InetAddress.getByName(host).isLoopbackAddress());
        } catch (IllegalArgumentException | UnknownHostException e) {
            return false;
        }
    }

    /**
     * The runner, or the calling class skipped with the reason: no credentials, a real provider from CI,
     * or a real provider with no canary address.
     *
     * @return the runner under test
     */
    public SandboxRunner runner() {
        SandboxRunnerProvider provider = SandboxRunners.providers().stream()
                .filter(p -> p.name().equals(name)).findFirst().orElse(null);
        String reason = null;
        if (provider == null) {
            reason = "its module is not on the test classpath";
        } else if (!provider.isConfigured(env)) {
            reason = "no credentials (set " + credentialHint + ")";
        } else if (!isLocalEmulator() && isCi() && !"true".equalsIgnoreCase(env.get(ALLOW_IN_CI))) {
            reason = "a live run against the real service never runs in CI (set " + ALLOW_IN_CI + "=true to allow it)";
        } else if (!isLocalEmulator() && env.getOrDefault(CANARY_HOST, "").isBlank()) {
            reason = "the egress canary needs an address the provider's sandboxes can reach: set " + CANARY_HOST
                    + " (see LiveProvider's javadoc)";
        }
        if (reason != null) {
            // surefire shows a class skipped in @BeforeAll as "Tests run: 0" without the reason: print it
            System.out.println("sandbox4j live: " + name + " skipped, " + reason);
            Assumptions.abort(name + ": skipped, " + reason);
        }
        System.out.println("sandbox4j live: " + name + " against " + (isLocalEmulator() ? "an emulator on loopback"
                : "the real service") + (env.containsKey(baseUrlVariable) ? " (" + baseUrlVariable + ")" : ""));
        return provider.fromEnv(env);
    }

    /**
     * The address code in the sandbox connects to: {@value #CANARY_HOST} for a real provider,
     * {@code 127.0.0.1} for an emulator.
     *
     * @return the canary host
     */
    public String canaryHost() {
        return isLocalEmulator() ? "127.0.0.1" : env.get(CANARY_HOST).trim();
    }

    /**
     * The address the canary listener binds to.
     *
     * @return loopback for an emulator, else {@value #CANARY_BIND} or the wildcard address
     */
    public InetAddress canaryBindAddress() {
        if (isLocalEmulator()) {
            return InetAddress.getLoopbackAddress();
        }
        try {
            return InetAddress.getByName(env.getOrDefault(CANARY_BIND, "0.0.0.0").trim());
        } catch (UnknownHostException e) {
            throw new IllegalArgumentException(CANARY_BIND + " is not an address: " + e.getMessage(), e);
        }
    }

    private boolean isCi() {
        String ci = env.getOrDefault("CI", "");
        return !ci.isBlank() && !ci.toLowerCase(Locale.ROOT).equals("false");
    }

    @Override
    public String toString() {
        return "LiveProvider[" + name + (isLocalEmulator() ? ", emulator" : "") + "]";
    }
}
