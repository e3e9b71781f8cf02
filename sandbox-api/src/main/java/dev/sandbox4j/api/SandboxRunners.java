package dev.sandbox4j.api;

import dev.sandbox4j.api.spi.SandboxRunnerProvider;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.ServiceLoader;

/**
 * Finds runners on the classpath. Provider modules register a {@link SandboxRunnerProvider}.
 *
 * <p>{@link #fromEnv()} never falls back to the local runner silently: with no provider configured it
 * throws and says what to set. Ask for the local runner explicitly with {@link #local()}.
 */
public final class SandboxRunners {
    /** The environment variable naming the provider: {@code local}, {@code e2b}, {@code daytona}, {@code vercel}, {@code modal}. */
    public static final String PROVIDER_VARIABLE = "SANDBOX4J_PROVIDER";

    private static final Map<String, String> KNOWN_ARTIFACTS = Map.of(
            "local", "dev.sandbox4j:sandbox-local",
            "e2b", "dev.sandbox4j:sandbox-e2b",
            "daytona", "dev.sandbox4j:sandbox-daytona",
            "vercel", "dev.sandbox4j:sandbox-vercel",
            "modal", "dev.sandbox4j:sandbox-modal");

    private SandboxRunners() {
    }

    /** The local bubblewrap runner (needs {@code dev.sandbox4j:sandbox-local} on the classpath). */
    public static SandboxRunner local() {
        return byName("local", System.getenv());
    }

    /** The runner named by {@code SANDBOX4J_PROVIDER}, configured from that provider's own variables. */
    public static SandboxRunner fromEnv() {
        return fromEnv(System.getenv());
    }

    /** As {@link #fromEnv()}, reading {@code env} instead of the process environment. */
    public static SandboxRunner fromEnv(Map<String, String> env) {
        String name = env.get(PROVIDER_VARIABLE);
        if (name == null || name.isBlank()) {
            List<String> configured = new ArrayList<>();
            for (SandboxRunnerProvider p : providers()) {
                if (p.isConfigured(env)) {
                    configured.add(p.name());
                }
            }
            throw new SandboxConfigurationException(PROVIDER_VARIABLE + " is not set: set it to one of "
                    + KNOWN_ARTIFACTS.keySet().stream().sorted().toList()
                    + (configured.isEmpty() ? "" : " (credentials found for " + configured + ")")
                    + ", or call SandboxRunners.local() to use the local bubblewrap runner explicitly");
        }
        return byName(name, env);
    }

    /**
     * The runner for {@code name}, configured from {@code env}.
     *
     * @throws SandboxConfigurationException when the provider's module is not on the classpath (naming
     *         the artifact to add) or its configuration is missing
     */
    public static SandboxRunner byName(String name, Map<String, String> env) {
        String key = name.trim().toLowerCase(Locale.ROOT);
        return provider(key).orElseThrow(() -> new SandboxConfigurationException(
                        KNOWN_ARTIFACTS.containsKey(key)
                                ? "provider '" + key + "' is not on the classpath: add " + KNOWN_ARTIFACTS.get(key)
                                : "unknown provider '" + name + "': known are " + KNOWN_ARTIFACTS.keySet().stream().sorted().toList()))
                .fromEnv(env);
    }

    /** The provider registered under {@code name}, if its module is on the classpath. */
    public static Optional<SandboxRunnerProvider> provider(String name) {
        for (SandboxRunnerProvider p : providers()) {
            if (p.name().equalsIgnoreCase(name)) {
                return Optional.of(p);
            }
        }
        return Optional.empty();
    }

    /** Every provider on the classpath. */
    public static List<SandboxRunnerProvider> providers() {
        List<SandboxRunnerProvider> list = new ArrayList<>();
        ServiceLoader.load(SandboxRunnerProvider.class, SandboxRunners.class.getClassLoader()).forEach(list::add);
        return list;
    }

    /** The Maven coordinates that bring the provider {@code name}, if it is a known one. */
    public static Optional<String> artifactFor(String name) {
        return Optional.ofNullable(KNOWN_ARTIFACTS.get(name.toLowerCase(Locale.ROOT)));
    }
}
