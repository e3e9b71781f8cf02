package dev.sandbox4j.policy;

import java.util.Objects;
import java.util.function.Supplier;

/**
 * A reference to a secret that the JVM resolves and hands to a provider's egress proxy, never to
 * the sandbox. {@link #toString()} shows only the reference's name, never the value.
 *
 * @since 0.1.0
 */
public final class SecretRef {
    private final String name;
    private final Supplier<String> resolver;

    private SecretRef(String name, Supplier<String> resolver) {
        this.name = name;
        this.resolver = resolver;
    }

    /**
     * A secret read from the JVM's environment variable {@code variable} each time it is resolved.
     *
     * @param variable the variable's name; not null
     * @return a reference named {@code env:variable}; {@link #resolve()} throws {@link IllegalStateException}
     *     when the variable is unset or empty
     */
    public static SecretRef env(String variable) {
        Objects.requireNonNull(variable, "variable");
        return new SecretRef("env:" + variable, () -> {
            String v = System.getenv(variable);
            if (v == null || v.isEmpty()) {
                throw new IllegalStateException("secret env:" + variable + " is not set");
            }
            return v;
        });
    }

    /**
     * A secret resolved by the application, named {@code name} in logs and messages.
     *
     * @param name shown in logs, messages and {@link #toString()}; not null
     * @param resolver called on every {@link #resolve()}; not null
     * @return the reference
     */
    public static SecretRef of(String name, Supplier<String> resolver) {
        return new SecretRef(Objects.requireNonNull(name, "name"), Objects.requireNonNull(resolver, "resolver"));
    }

    /** {@return the reference's name, safe to show (e.g. {@code env:OPENAI_API_KEY}); never the value} */
    public String name() {
        return name;
    }

    /**
     * The secret's value, resolved anew on each call. Callers must not log it.
     *
     * @return the value
     * @throws IllegalStateException when an {@link #env(String)} variable is unset or empty (or what the
     *     application's resolver throws)
     */
    public String resolve() {
        return resolver.get();
    }

    @Override
    public String toString() {
        return "SecretRef[" + name + "]";
    }
}
