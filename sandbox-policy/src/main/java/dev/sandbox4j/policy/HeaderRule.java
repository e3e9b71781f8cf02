package dev.sandbox4j.policy;

import java.util.Objects;
import java.util.regex.Pattern;

/**
 * Credential brokering: on requests to {@code host}, the provider's egress proxy sets header
 * {@code header} to {@code valuePrefix + secret}. The sandbox never sees the secret.
 *
 * @since 0.1.0
 */
public final class HeaderRule {
    private static final Pattern TOKEN = Pattern.compile("[!#$%&'*+.^_`|~0-9A-Za-z-]+");

    private final DomainPattern host;
    private final String header;
    private final SecretRef secret;
    private final String valuePrefix;

    private HeaderRule(DomainPattern host, String header, SecretRef secret, String valuePrefix) {
        this.host = host;
        this.header = header;
        this.secret = secret;
        this.valuePrefix = valuePrefix;
    }

    /** A rule whose header value is the secret itself. */
    public static HeaderRule of(String host, String header, SecretRef secret) {
        return of(host, header, secret, "");
    }

    /** A rule whose header value is {@code valuePrefix} followed by the secret, e.g. {@code "Bearer "}. */
    public static HeaderRule of(String host, String header, SecretRef secret, String valuePrefix) {
        Objects.requireNonNull(secret, "secret");
        if (header == null || !TOKEN.matcher(header).matches()) {
            throw new InvalidPolicyException("header rule for '" + host + "': '" + header + "' is not a valid header name");
        }
        if (valuePrefix == null || valuePrefix.chars().anyMatch(c -> c < 0x20 || c == 0x7f)) {
            throw new InvalidPolicyException("header rule for '" + host + "': the value prefix has control characters");
        }
        return new HeaderRule(DomainPattern.parse(host), header, secret, valuePrefix);
    }

    public DomainPattern host() {
        return host;
    }

    public String header() {
        return header;
    }

    public SecretRef secret() {
        return secret;
    }

    public String valuePrefix() {
        return valuePrefix;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof HeaderRule r && r.host.equals(host) && r.header.equalsIgnoreCase(header)
                && r.secret.name().equals(secret.name()) && r.valuePrefix.equals(valuePrefix);
    }

    @Override
    public int hashCode() {
        return Objects.hash(host, header.toLowerCase(java.util.Locale.ROOT), secret.name(), valuePrefix);
    }

    @Override
    public String toString() {
        return "HeaderRule[" + host + " " + header + ": " + (valuePrefix.isEmpty() ? "" : valuePrefix) + secret + "]";
    }
}
