package dev.sandbox4j.spring;

/**
 * A {@code sandbox4j.*} property the library refused at startup, with its value and the fix; reported
 * by {@link Sandbox4jPropertyFailureAnalyzer} as one readable paragraph instead of a chain of causes
 * that name builder methods. Values are shown: no {@code sandbox4j.*} property holds a credential
 * (keys are read only from the providers' environment variables).
 *
 * @since 0.1.0
 */
public final class Sandbox4jPropertyException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    /** The property's name, such as {@code sandbox4j.caps.per-key}. */
    private final String property;
    /** The value as configured; null when unset. */
    private final String value;
    /** What to change, in one sentence. */
    private final String fix;

    /**
     * @param property the property, such as {@code sandbox4j.caps.per-key}
     * @param value its value as configured (null when unset)
     * @param fix what to change
     * @param cause the library's refusal
     */
    public Sandbox4jPropertyException(String property, Object value, String fix, RuntimeException cause) {
        super(property + (value == null ? "" : "=" + value) + ": " + cause.getMessage(), cause);
        this.property = property;
        this.value = value == null ? null : String.valueOf(value);
        this.fix = fix;
    }

    /** @return the property's name */
    public String property() {
        return property;
    }

    /** @return the value as configured, or null */
    public String value() {
        return value;
    }

    /** @return what to change */
    public String fix() {
        return fix;
    }
}
