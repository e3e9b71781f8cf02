package dev.sandbox4j.policy;

import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * Credential brokering: on requests to {@code host}, the egress proxy sets header {@code header} to
 * {@code valuePrefix + secret}. The sandbox never sees the secret.
 *
 * <p>A rule may be scoped, as Vercel's header transform {@code match} is: to a set of
 * {@linkplain Builder#methods methods} (any of them; none named means every method) and to a
 * {@linkplain Builder#pathPrefix path prefix} (compared case-sensitively with the request's path,
 * without the query; {@code "/"}, the default, means every path). A request outside the scope gets no
 * header from this rule; the rule's header is still removed from what the sandbox sent.
 *
 * <p>A host that echoes request headers (httpbin's {@code /headers}, a debugging endpoint, an error
 * page quoting the request) hands the secret back to the code in the sandbox: scope the rule to the
 * paths that need it.
 *
 * @since 0.1.0
 */
public final class HeaderRule {
    private static final Pattern TOKEN = Pattern.compile("[!#$%&'*+.^_`|~0-9A-Za-z-]+");

    private final DomainPattern host;
    private final String header;
    private final SecretRef secret;
    private final String valuePrefix;
    private final Set<String> methods;
    private final String pathPrefix;

    private HeaderRule(DomainPattern host, String header, SecretRef secret, String valuePrefix, Set<String> methods,
            String pathPrefix) {
        this.host = host;
        this.header = header;
        this.secret = secret;
        this.valuePrefix = valuePrefix;
        this.methods = methods;
        this.pathPrefix = pathPrefix;
    }

    /**
     * A rule whose header value is the secret itself, on every method and path.
     *
     * @param host the host, or {@code *.} subdomain wildcard, whose requests get the header
     * @param header the header name, an HTTP token
     * @param secret the reference the header's value is resolved from on the host side; not null
     * @return the rule
     * @throws InvalidPolicyException when the host or header name is malformed
     */
    public static HeaderRule of(String host, String header, SecretRef secret) {
        return of(host, header, secret, "");
    }

    /**
     * A rule whose header value is {@code valuePrefix} followed by the secret, on every method and path.
     *
     * @param host the host, or {@code *.} subdomain wildcard, whose requests get the header
     * @param header the header name, an HTTP token
     * @param secret the reference the header's value is resolved from on the host side; not null
     * @param valuePrefix text before the secret, e.g. {@code "Bearer "}; no control characters
     * @return the rule
     * @throws InvalidPolicyException when the host, header name or prefix is malformed
     */
    public static HeaderRule of(String host, String header, SecretRef secret, String valuePrefix) {
        return builder(host, header, secret).valuePrefix(valuePrefix).build();
    }

    /**
     * A builder for a rule, to scope it by method and path prefix.
     *
     * @param host the host, or {@code *.} subdomain wildcard, whose requests get the header
     * @param header the header name, an HTTP token
     * @param secret the reference the header's value is resolved from on the host side
     * @return a new builder, checked by {@link Builder#build()}
     * @since 0.1.0
     */
    public static Builder builder(String host, String header, SecretRef secret) {
        return new Builder(host, header, secret);
    }

    /** {@return the host pattern whose requests get the header} */
    public DomainPattern host() {
        return host;
    }

    /** {@return the header name as given (matched case-insensitively)} */
    public String header() {
        return header;
    }

    /** {@return the reference to the secret that becomes the header's value; never the value itself} */
    public SecretRef secret() {
        return secret;
    }

    /** {@return the text before the secret in the header's value, e.g. {@code "Bearer "}; empty for none} */
    public String valuePrefix() {
        return valuePrefix;
    }

    /** {@return the methods (upper case) the rule applies to; empty means every method} */
    public Set<String> methods() {
        return methods;
    }

    /** {@return the path prefix the rule applies to; {@code "/"} means every path} */
    public String pathPrefix() {
        return pathPrefix;
    }

    /**
     * {@return true when the rule is scoped by method or path, i.e. does not apply to every request to its
     * host}
     */
    public boolean isScoped() {
        return !methods.isEmpty() || !pathPrefix.equals("/");
    }

    /**
     * {@return true when a request with {@code method} and {@code path} to a host this rule's {@link #host()}
     * matches gets the header}
     *
     * @param method the request's method, compared exactly with the upper-case {@link #methods()}
     * @param path the request target's path, without the query; compared case-sensitively with {@link
     *     #pathPrefix()}
     */
    public boolean appliesTo(String method, String path) {
        if (!methods.isEmpty() && !methods.contains(method)) {
            return false;
        }
        return path.startsWith(pathPrefix);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof HeaderRule r && r.host.equals(host) && r.header.equalsIgnoreCase(header)
                && r.secret.name().equals(secret.name()) && r.valuePrefix.equals(valuePrefix)
                && r.methods.equals(methods) && r.pathPrefix.equals(pathPrefix);
    }

    @Override
    public int hashCode() {
        return Objects.hash(host, header.toLowerCase(Locale.ROOT), secret.name(), valuePrefix, methods, pathPrefix);
    }

    @Override
    public String toString() {
        String scope = (methods.isEmpty() ? "" : " methods=" + methods) + (pathPrefix.equals("/") ? "" : " path=" + pathPrefix + "*");
        return "HeaderRule[" + host + " " + header + ": " + (valuePrefix.isEmpty() ? "" : valuePrefix) + secret + scope + "]";
    }

    /**
     * Collects a rule; {@link #build()} validates it.
     *
     * @since 0.1.0
     */
    public static final class Builder {
        private final String host;
        private final String header;
        private final SecretRef secret;
        private String valuePrefix = "";
        private final List<String> methods = new ArrayList<>();
        private String pathPrefix = "/";

        private Builder(String host, String header, SecretRef secret) {
            this.host = host;
            this.header = header;
            this.secret = secret;
        }

        /**
         * Sets the text before the secret in the header's value. Default none.
         *
         * @param valuePrefix e.g. {@code "Bearer "}; no control characters
         * @return this builder
         */
        public Builder valuePrefix(String valuePrefix) {
            this.valuePrefix = valuePrefix;
            return this;
        }

        /**
         * Limits the rule to these methods (any of them, compared case-insensitively). Adds to earlier calls.
         *
         * @param methods HTTP method names, each an HTTP token
         * @return this builder
         */
        public Builder methods(String... methods) {
            return methods(List.of(methods));
        }

        /**
         * Limits the rule to these methods (any of them, compared case-insensitively). Adds to earlier calls.
         *
         * @param methods HTTP method names, each an HTTP token
         * @return this builder
         */
        public Builder methods(Collection<String> methods) {
            this.methods.addAll(methods);
            return this;
        }

        /**
         * Limits the rule to request paths starting with {@code prefix}. Default {@code "/"}, every path.
         *
         * @param prefix starts with {@code /}; no query, fragment, space or control character
         * @return this builder
         */
        public Builder pathPrefix(String prefix) {
            this.pathPrefix = prefix;
            return this;
        }

        /**
         * Validates the rule and builds it.
         *
         * @return the rule
         * @throws InvalidPolicyException naming what is wrong: the host, header name, value prefix, a method
         *     or the path prefix
         * @throws NullPointerException when the secret is null
         */
        public HeaderRule build() {
            Objects.requireNonNull(secret, "secret");
            if (header == null || !TOKEN.matcher(header).matches()) {
                throw new InvalidPolicyException("header rule for '" + host + "': '" + header + "' is not a valid header name");
            }
            if (valuePrefix == null || valuePrefix.chars().anyMatch(c -> c < 0x20 || c == 0x7f)) {
                throw new InvalidPolicyException("header rule for '" + host + "': the value prefix has control characters");
            }
            Set<String> m = new LinkedHashSet<>();
            for (String method : methods) {
                if (method == null || !TOKEN.matcher(method).matches()) {
                    throw new InvalidPolicyException("header rule for '" + host + "': '" + method + "' is not a valid HTTP method");
                }
                m.add(method.toUpperCase(Locale.ROOT));
            }
            if (pathPrefix == null || !pathPrefix.startsWith("/") || pathPrefix.contains("?") || pathPrefix.contains("#")
                    || pathPrefix.chars().anyMatch(c -> c <= 0x20 || c >= 0x7f)) {
                throw new InvalidPolicyException("header rule for '" + host + "': the path prefix '" + pathPrefix
                        + "' must start with '/' and hold no query, fragment, space or control character");
            }
            return new HeaderRule(DomainPattern.parse(host), header, secret, valuePrefix, Set.copyOf(m).isEmpty() ? Set.of()
                    : java.util.Collections.unmodifiableSet(m), pathPrefix);
        }
    }
}
