package dev.sandbox4j.api;

import dev.sandbox4j.api.SandboxRunnerProvider;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.ServiceConfigurationError;
import java.util.ServiceLoader;
import java.util.TreeSet;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import dev.sandbox4j.api.exception.SandboxConfigurationException;

/**
 * Finds runners on the classpath. Provider modules register a {@link SandboxRunnerProvider}.
 *
 * <p>{@link #fromEnv()} never falls back to the local runner silently: with no provider configured it
 * throws and says what to set. Ask for the local runner explicitly with {@link #local()}.
 *
 * @since 0.1.0
 */
public final class SandboxRunners {
    private static final Logger log = LoggerFactory.getLogger(SandboxRunners.class);

    /** The environment variable naming the provider: {@code local}, {@code docker}, {@code e2b}, {@code daytona}, {@code vercel}, {@code modal}. */
    public static final String PROVIDER_VARIABLE = "SANDBOX4J_PROVIDER";

    private static final Map<String, String> KNOWN_ARTIFACTS = Map.of(
            "local", "dev.sandbox4j:sandbox-local",
            "docker", "dev.sandbox4j:sandbox-docker",
            "e2b", "dev.sandbox4j:sandbox-e2b",
            "daytona", "dev.sandbox4j:sandbox-daytona",
            "vercel", "dev.sandbox4j:sandbox-vercel",
            "modal", "dev.sandbox4j:sandbox-modal");

    // a value that does not look like a name is not echoed: someone may have pasted a key there
    private static final Pattern NAME = Pattern.compile("[a-z0-9][a-z0-9._-]{0,31}");

    private SandboxRunners() {
    }

    /**
     * The local bubblewrap runner (needs {@code dev.sandbox4j:sandbox-local} on the classpath).
     *
     * @return the runner, configured from the process environment
     * @throws SandboxConfigurationException when sandbox-local is not on the classpath or cannot be
     *     configured
     */
    public static SandboxRunner local() {
        return byName("local", System.getenv());
    }

    /** The embedded runners {@link #auto()} tries, in this order. */
    private static final List<String> EMBEDDED = List.of("local", "docker");

    /**
     * The embedded runner that works on this machine: the local bubblewrap runner where it can make a
     * sandbox (Linux with bubblewrap), else the Docker runner where an engine answers and holds its image
     * (macOS and Windows with Docker Desktop, Colima or Podman). The choice, and why the other was not
     * taken, is logged at INFO; ask the runner which it is with {@code capabilities().runner()}
     * ({@code local} or {@code docker}). Never a hosted provider, and never a runner that cannot run.
     *
     * @return a runner that can run code here
     * @throws SandboxConfigurationException in one sentence saying what to install, when neither can
     * @since 0.1.0
     */
    public static SandboxRunner auto() {
        return auto(System.getenv());
    }

    /**
     * As {@link #auto()}, reading {@code env} instead of the process environment.
     *
     * @param env the environment to read
     * @return a runner that can run code here
     */
    public static SandboxRunner auto(Map<String, String> env) {
        List<String> reasons = new ArrayList<>();
        List<SandboxRunnerProvider> loaded = providers();
        for (String name : EMBEDDED) {
            Optional<SandboxRunnerProvider> p = loaded.stream().filter(x -> x.name().equalsIgnoreCase(name) && x.embedded()).findFirst();
            if (p.isEmpty()) {
                reasons.add(name + ": not on the classpath (add " + KNOWN_ARTIFACTS.get(name) + ")");
                continue;
            }
            try {
                SandboxRunner r = p.get().usableRunner(env);
                log.info("SandboxRunners.auto() chose the {} runner ({}){}", name, r,
                        reasons.isEmpty() ? "" : "; passed over: " + String.join("; ", reasons));
                return r;
            } catch (SandboxConfigurationException e) {
                reasons.add(name + ": " + e.getMessage());
            }
        }
        throw new SandboxConfigurationException("no embedded sandbox runner can run code here: on Linux install bubblewrap"
                + " (apt-get install -y bubblewrap), elsewhere start Docker Desktop, Colima or Podman and pull the Docker"
                + " runner's image once (details: " + String.join("; ", reasons) + ")");
    }

    /**
     * The runner named by {@code SANDBOX4J_PROVIDER}, configured from that provider's own variables.
     *
     * @return the runner
     * @throws SandboxConfigurationException as {@link #fromEnv(Map)} does
     */
    public static SandboxRunner fromEnv() {
        return fromEnv(System.getenv());
    }

    /**
     * As {@link #fromEnv()}, reading {@code env} instead of the process environment.
     *
     * @param env the environment to read
     * @return the runner
     * @throws SandboxConfigurationException when {@code SANDBOX4J_PROVIDER} is unset (naming the values it
     *     takes), names no provider on the classpath, or the provider's own variables are missing
     */
    public static SandboxRunner fromEnv(Map<String, String> env) {
        String name = env.get(PROVIDER_VARIABLE);
        if (name == null || name.isBlank()) {
            Loaded loaded = load();
            List<String> configured = new ArrayList<>();
            for (SandboxRunnerProvider p : loaded.providers) {
                if (p.isConfigured(env)) {
                    configured.add(p.name());
                }
            }
            throw new SandboxConfigurationException(PROVIDER_VARIABLE + " is not set: set it to the provider to use, one of "
                    + choices(loaded)
                    + (configured.isEmpty() ? "" : " (credentials found for " + configured + ")")
                    + ", or call SandboxRunners.local() to use the local bubblewrap runner explicitly"
                    + " (SandboxRunners.auto() for bubblewrap or else Docker)");
        }
        return byName(name, env);
    }

    /**
     * The runner for {@code name}, configured from {@code env}.
     *
     * @param name the provider's name, e.g. {@code e2b}; case and surrounding blanks are ignored
     * @param env the environment the provider reads its configuration from
     * @return the runner
     * @throws SandboxConfigurationException when the provider's module is not on the classpath (naming the
     *     artifact to add), two modules claim the name, or its configuration is missing
     */
    public static SandboxRunner byName(String name, Map<String, String> env) {
        return byName(name, env, LifecycleListener.NONE);
    }

    /**
     * As {@link #byName(String, Map)}, with a listener hearing every create, exec, teardown and suspected
     * leak of the runner (metrics and traces: see {@link LifecycleListener}).
     *
     * @param name the provider's name, e.g. {@code e2b}; case and surrounding blanks are ignored
     * @param env the environment the provider reads its configuration from
     * @param listener not null; {@link LifecycleListener#NONE} for none
     * @return the runner
     * @throws SandboxConfigurationException as {@link #byName(String, Map)} does
     */
    public static SandboxRunner byName(String name, Map<String, String> env, LifecycleListener listener) {
        java.util.Objects.requireNonNull(listener, "listener");
        String key = name.trim().toLowerCase(Locale.ROOT);
        Loaded loaded = load();
        List<SandboxRunnerProvider> matching = loaded.providers.stream()
                .filter(p -> p.name().equalsIgnoreCase(key)).toList();
        if (matching.size() > 1) {
            throw new SandboxConfigurationException("provider '" + key + "' is registered by "
                    + matching.stream().map(p -> p.getClass().getName()).toList()
                    + ": keep only one of their modules on the classpath");
        }
        if (matching.isEmpty()) {
            String shown = NAME.matcher(key).matches() ? "'" + key + "'" : "named by " + PROVIDER_VARIABLE;
            String message = KNOWN_ARTIFACTS.containsKey(key)
                    ? "provider '" + key + "' is not on the classpath: add " + KNOWN_ARTIFACTS.get(key)
                    : "unknown provider " + shown + ": use one of " + choices(loaded);
            if (!loaded.errors.isEmpty()) {
                message += "; " + loaded.errors.size() + " provider(s) failed to load: " + String.join("; ", loaded.errors);
            }
            throw new SandboxConfigurationException(message);
        }
        SandboxRunnerProvider provider = matching.get(0);
        SandboxRunner runner = provider.fromEnv(env, listener);
        if (runner == null) {
            throw new SandboxConfigurationException("provider '" + key + "' (" + provider.getClass().getName()
                    + ") returned no runner");
        }
        return runner;
    }

    /**
     * {@return the provider registered under {@code name} (ignoring case), if its module is on the classpath}
     *
     * @param name the provider's name
     */
    public static Optional<SandboxRunnerProvider> provider(String name) {
        for (SandboxRunnerProvider p : providers()) {
            if (p.name().equalsIgnoreCase(name)) {
                return Optional.of(p);
            }
        }
        return Optional.empty();
    }

    /**
     * {@return every provider on the classpath that loads (one that fails to load is logged and left out)}
     */
    public static List<SandboxRunnerProvider> providers() {
        return load().providers;
    }

    /**
     * {@return the Maven coordinates ({@code groupId:artifactId}) that bring the provider {@code name}, if it
     * is a known one}
     *
     * @param name the provider's name, ignoring case
     */
    public static Optional<String> artifactFor(String name) {
        return Optional.ofNullable(KNOWN_ARTIFACTS.get(name.toLowerCase(Locale.ROOT)));
    }

    private static String choices(Loaded loaded) {
        TreeSet<String> onClasspath = new TreeSet<>();
        loaded.providers.forEach(p -> onClasspath.add(p.name().toLowerCase(Locale.ROOT)));
        TreeSet<String> elsewhere = new TreeSet<>(KNOWN_ARTIFACTS.keySet());
        elsewhere.removeAll(onClasspath);
        return (onClasspath.isEmpty() ? "none on the classpath" : onClasspath + " on the classpath")
                + (elsewhere.isEmpty() ? "" : " or " + elsewhere + " with their modules added");
    }

    /** One pass of the ServiceLoader; a provider that fails to load does not hide the others. */
    private static Loaded load() {
        Loaded loaded = new Loaded();
        Iterator<SandboxRunnerProvider> it =
                ServiceLoader.load(SandboxRunnerProvider.class, SandboxRunners.class.getClassLoader()).iterator();
        while (true) {
            try {
                if (!it.hasNext()) {
                    break;
                }
                loaded.providers.add(it.next());
            } catch (ServiceConfigurationError e) {
                // the message names the provider class; its cause is logged at debug level only
                log.warn("a sandbox runner provider failed to load: {}", e.getMessage());
                log.debug("provider load failure", e);
                loaded.errors.add(e.getMessage());
                if (loaded.errors.size() >= 32) {
                    break; // the iterator's recovery after an error is best effort: never spin on one
                }
            }
        }
        return loaded;
    }

    private static final class Loaded {
        final List<SandboxRunnerProvider> providers = new ArrayList<>();
        final List<String> errors = new ArrayList<>();
    }
}
