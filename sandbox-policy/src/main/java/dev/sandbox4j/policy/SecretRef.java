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

    /** A secret read from the JVM's environment variable {@code variable} when it is needed. */
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

    /** A secret resolved by the application, named {@code name} in logs and messages. */
    public static SecretRef of(String name, Supplier<String> resolver) {
        return new SecretRef(Objects.requireNonNull(name, "name"), Objects.requireNonNull(resolver, "resolver"));
    }

    public String name() {
        return name;
    }

    /** The secret's value. Callers must not log it. */
    public String resolve() {
        return resolver.get();
    }

    @Override
    public String toString() {
        return "SecretRef[" + name + "]";
    }
}
