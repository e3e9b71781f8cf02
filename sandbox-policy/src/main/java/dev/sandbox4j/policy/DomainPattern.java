package dev.sandbox4j.policy;

import java.util.Locale;
import java.util.regex.Pattern;

/**
 * A host name, exact ({@code api.example.com}) or a subdomain wildcard ({@code *.example.com}, which
 * matches {@code a.example.com} and {@code a.b.example.com} but not {@code example.com} itself).
 * A bare {@code *}, a wildcard anywhere but the first label, IP literals and ports are rejected.
 *
 * @since 0.1.0
 */
public final class DomainPattern {
    private static final Pattern LABEL = Pattern.compile("[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?");
    private static final Pattern HOST_CHARS = Pattern.compile("[a-z0-9.-]*");
    /** Appended where the input is not shaped like a pattern at all. */
    static final String WHAT = "a domain pattern is a host name such as 'api.example.com', or '*.example.com' for"
            + " every subdomain of example.com (letters, digits, '-' and '.')";

    private final String text;
    private final boolean wildcard;
    private final String suffix;

    private DomainPattern(String text, boolean wildcard, String suffix) {
        this.text = text;
        this.wildcard = wildcard;
        this.suffix = suffix;
    }

    /**
     * Parses a host name or a {@code *.} subdomain wildcard, case-insensitively; a trailing dot is dropped.
     *
     * @param raw such as {@code api.example.com} or {@code *.example.com}; surrounding blanks are ignored
     * @return the pattern, in lower case
     * @throws InvalidPolicyException with a sentence naming what is wrong (empty, a bare {@code *}, a
     *     misplaced wildcard, a port or path, an IP literal, a single label, over 253 characters)
     */
    public static DomainPattern parse(String raw) {
        if (raw == null || raw.isBlank()) {
            throw new InvalidPolicyException("domain must not be empty");
        }
        String s = raw.trim().toLowerCase(Locale.ROOT);
        if (s.endsWith(".")) {
            s = s.substring(0, s.length() - 1);
        }
        if (s.equals("*")) {
            throw new InvalidPolicyException(
                    "domain '*' is not allowed: use a default-allow egress policy to allow every host");
        }
        boolean wildcard = s.startsWith("*.");
        String host = wildcard ? s.substring(2) : s;
        if (host.contains("*")) {
            throw new InvalidPolicyException("domain '" + raw + "': a wildcard is only allowed as the whole first label ('*.example.com')");
        }
        if (host.contains(":") || host.contains("/")) {
            throw new InvalidPolicyException("domain '" + raw + "': give a host name without scheme, port or path");
        }
        if (!HOST_CHARS.matcher(host).matches()) {
            boolean ascii = host.chars().allMatch(c -> c < 0x80);
            throw new InvalidPolicyException("domain '" + raw + "' is not a host name: " + WHAT
                    + (ascii ? "" : "; write an internationalised name in its ASCII form ('xn--...')"));
        }
        if (host.length() > 253) {
            throw new InvalidPolicyException("domain '" + raw + "' is longer than 253 characters");
        }
        String[] labels = host.split("\\.", -1);
        if (labels.length < 2) {
            throw new InvalidPolicyException("domain '" + raw + "' needs at least two labels (a top-level domain alone is too broad): " + WHAT);
        }
        for (String label : labels) {
            if (!LABEL.matcher(label).matches()) {
                throw new InvalidPolicyException("domain '" + raw + "': label '" + label + "' is not a valid host name label: " + WHAT);
            }
        }
        if (labels[labels.length - 1].matches("\\d+")) {
            throw new InvalidPolicyException("domain '" + raw + "' looks like an IP address: put addresses in a CIDR rule");
        }
        return new DomainPattern(s, wildcard, host);
    }

    /** {@return whether this is a subdomain wildcard ({@code *.example.com})} */
    public boolean isWildcard() {
        return wildcard;
    }

    /**
     * {@return the host without the wildcard: {@code example.com} for {@code *.example.com}, the host itself
     * otherwise}
     */
    public String baseDomain() {
        return suffix;
    }

    /**
     * {@return true when a connection to {@code host} would be allowed by this pattern}
     *
     * @param host a host name, matched case-insensitively and without a trailing dot
     */
    public boolean matches(String host) {
        String h = host.toLowerCase(Locale.ROOT);
        if (h.endsWith(".")) {
            h = h.substring(0, h.length() - 1);
        }
        return wildcard ? h.endsWith("." + suffix) : h.equals(suffix);
    }

    /**
     * {@return true when every host matched by {@code other} is matched by this pattern}
     *
     * @param other the pattern tested
     */
    public boolean covers(DomainPattern other) {
        if (!wildcard) {
            return !other.wildcard && other.suffix.equals(suffix);
        }
        // *.x covers itself too: both match exactly the subdomains of x
        return other.suffix.endsWith("." + suffix) || (other.wildcard && other.suffix.equals(suffix));
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof DomainPattern d && d.text.equals(text);
    }

    @Override
    public int hashCode() {
        return text.hashCode();
    }

    /** The pattern as written in canonical form: lower case, no trailing dot. */
    @Override
    public String toString() {
        return text;
    }
}
