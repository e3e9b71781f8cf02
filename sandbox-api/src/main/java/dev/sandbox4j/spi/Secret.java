package dev.sandbox4j.spi;

import java.util.Objects;

/**
 * An API key or token, for any adapter whatever its transport (HTTP, gRPC). {@link #toString()} never shows it; only {@link #reveal()} does, at the one
 * place it goes on the wire.
 *
 * @since 0.1.0
 */
public final class Secret {
    private final String value;

    private Secret(String value) {
        this.value = value;
    }

    /**
     * Wraps an API key or token.
     *
     * @param value not null, not blank
     * @return the secret
     * @throws IllegalArgumentException if blank (the message does not echo the value)
     */
    public static Secret of(String value) {
        Objects.requireNonNull(value, "secret");
        if (value.isBlank()) {
            throw new IllegalArgumentException("secret must not be blank");
        }
        return new Secret(value);
    }

    /** {@return the value, for a request header or the wire; never log it} */
    public String reveal() {
        return value;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Secret s && s.value.equals(value);
    }

    @Override
    public int hashCode() {
        return value.hashCode();
    }

    @Override
    public String toString() {
        return "Secret[***]";
    }
}
