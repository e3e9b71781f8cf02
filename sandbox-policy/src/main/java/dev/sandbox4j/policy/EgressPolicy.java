package dev.sandbox4j.policy;

import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;

/**
 * What a sandbox may reach on the network, as one immutable value.
 *
 * <p>Semantics, the same for every runner:
 * <ul>
 *   <li>The default is deny or allow.</li>
 *   <li>Under default deny, {@linkplain Builder#allowDomain allowed domains} and
 *       {@linkplain Builder#allowCidr allowed CIDRs} open holes. A domain means TCP ports 80 and 443
 *       matched by HTTP Host or TLS SNI, with DNS left open; {@code *.x} means subdomains of x only.</li>
 *   <li>{@linkplain Builder#denyCidr Denied CIDRs} always win, over allowed CIDRs and over the
 *       addresses an allowed domain resolves to.</li>
 *   <li>{@linkplain Builder#headerRule Header rules} broker credentials at the provider's egress
 *       proxy for hosts that are allowed.</li>
 * </ul>
 * A policy that is malformed or contradictory fails in {@link Builder#build()} with an
 * {@link InvalidPolicyException} listing every problem. Whether a given runner can enforce it is a
 * separate question, answered by {@link Capabilities#check}.
 *
 * @since 0.1.0
 */
public final class EgressPolicy {
    /**
     * What happens to traffic no rule mentions.
     *
     * @since 0.1.0
     */
    public enum Default {
        /** Traffic no rule allows is dropped. */
        DENY,
        /** Traffic no rule denies goes through. */
        ALLOW
    }

    private static final EgressPolicy DENY_ALL = builder(Default.DENY).build();
    private static final EgressPolicy ALLOW_ALL = builder(Default.ALLOW).build();

    private final Default defaultAction;
    private final List<DomainPattern> allowedDomains;
    private final List<Cidr> allowedCidrs;
    private final List<Cidr> deniedCidrs;
    private final List<HeaderRule> headerRules;

    private EgressPolicy(Builder b) {
        this.defaultAction = b.defaultAction;
        this.allowedDomains = List.copyOf(b.allowedDomains);
        this.allowedCidrs = List.copyOf(b.allowedCidrs);
        this.deniedCidrs = List.copyOf(b.deniedCidrs);
        this.headerRules = List.copyOf(b.headerRules);
    }

    /**
     * No network at all: the safe default.
     *
     * @return the shared deny-all policy (default deny, no rules)
     */
    public static EgressPolicy denyAll() {
        return DENY_ALL;
    }

    /**
     * Unrestricted network. Meant for trusted setup commands, not for untrusted code.
     *
     * @return the shared allow-all policy (default allow, no rules)
     */
    public static EgressPolicy allowAll() {
        return ALLOW_ALL;
    }

    /**
     * Default deny, with exactly these hosts allowed.
     *
     * @param domains host names or {@code *.} wildcards, as {@link DomainPattern#parse(String)} reads them
     * @return the policy
     * @throws InvalidPolicyException listing every domain that does not parse
     */
    public static EgressPolicy allowOnly(String... domains) {
        Builder b = builder(Default.DENY);
        for (String d : domains) {
            b.allowDomain(d);
        }
        return b.build();
    }

    /**
     * Starts a policy with the given default and no rules.
     *
     * @param defaultAction what happens to traffic no rule mentions; not null
     * @return a new builder
     */
    public static Builder builder(Default defaultAction) {
        return new Builder(defaultAction);
    }

    /**
     * A builder starting from default deny.
     *
     * @return a new builder with default deny and no rules
     */
    public static Builder builder() {
        return new Builder(Default.DENY);
    }

    /** {@return a builder holding this policy's default and rules, to derive a changed policy from} */
    public Builder toBuilder() {
        Builder b = new Builder(defaultAction);
        b.allowedDomains.addAll(allowedDomains);
        b.allowedCidrs.addAll(allowedCidrs);
        b.deniedCidrs.addAll(deniedCidrs);
        b.headerRules.addAll(headerRules);
        return b;
    }

    /** {@return what happens to traffic no rule mentions} */
    public Default defaultAction() {
        return defaultAction;
    }

    /**
     * {@return the allowed host patterns, in the order added, without duplicates; empty under default allow}
     */
    public List<DomainPattern> allowedDomains() {
        return allowedDomains;
    }

    /** {@return the allowed networks, in the order added, without duplicates; empty under default allow} */
    public List<Cidr> allowedCidrs() {
        return allowedCidrs;
    }

    /** {@return the denied networks, which win over every allow; in the order added, without duplicates} */
    public List<Cidr> deniedCidrs() {
        return deniedCidrs;
    }

    /** {@return the credential-brokering rules, in the order added, without duplicates} */
    public List<HeaderRule> headerRules() {
        return headerRules;
    }

    /** {@return true for default deny without a single rule} */
    public boolean isDenyAll() {
        return defaultAction == Default.DENY && allowedDomains.isEmpty() && allowedCidrs.isEmpty()
                && headerRules.isEmpty();
    }

    /** {@return true for default allow without a single deny or header rule} */
    public boolean isAllowAll() {
        return defaultAction == Default.ALLOW && deniedCidrs.isEmpty() && headerRules.isEmpty();
    }

    /**
     * {@return true when this policy would let a connection to {@code host} on port 443 through (ignoring DNS
     * results and denied CIDRs)}
     *
     * @param host a host name
     */
    public boolean allowsHost(String host) {
        if (defaultAction == Default.ALLOW) {
            return true;
        }
        return allowedDomains.stream().anyMatch(d -> d.matches(host));
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof EgressPolicy p && p.defaultAction == defaultAction
                && p.allowedDomains.equals(allowedDomains) && p.allowedCidrs.equals(allowedCidrs)
                && p.deniedCidrs.equals(deniedCidrs) && p.headerRules.equals(headerRules);
    }

    @Override
    public int hashCode() {
        return Objects.hash(defaultAction, allowedDomains, allowedCidrs, deniedCidrs, headerRules);
    }

    @Override
    public String toString() {
        if (isDenyAll()) {
            return "EgressPolicy[deny-all]";
        }
        if (isAllowAll()) {
            return "EgressPolicy[allow-all]";
        }
        StringBuilder sb = new StringBuilder("EgressPolicy[default=").append(defaultAction.name().toLowerCase());
        if (!allowedDomains.isEmpty()) {
            sb.append(", allowDomains=").append(allowedDomains);
        }
        if (!allowedCidrs.isEmpty()) {
            sb.append(", allowCidrs=").append(allowedCidrs);
        }
        if (!deniedCidrs.isEmpty()) {
            sb.append(", denyCidrs=").append(deniedCidrs);
        }
        if (!headerRules.isEmpty()) {
            sb.append(", headerRules=").append(headerRules);
        }
        return sb.append(']').toString();
    }

    /**
     * Collects rules; {@link #build()} validates them all at once.
     *
     * @since 0.1.0
     */
    public static final class Builder {
        private final Default defaultAction;
        private final Set<DomainPattern> allowedDomains = new LinkedHashSet<>();
        private final Set<Cidr> allowedCidrs = new LinkedHashSet<>();
        private final Set<Cidr> deniedCidrs = new LinkedHashSet<>();
        private final Set<HeaderRule> headerRules = new LinkedHashSet<>();
        private final List<String> problems = new ArrayList<>();

        private Builder(Default defaultAction) {
            this.defaultAction = Objects.requireNonNull(defaultAction, "defaultAction");
        }

        /**
         * Allows {@code example.com} exactly, or subdomains with {@code *.example.com}. A malformed domain is
         * kept as a problem that {@link #build()} reports.
         *
         * @param domain a host name or {@code *.} wildcard
         * @return this builder
         */
        public Builder allowDomain(String domain) {
            try {
                allowedDomains.add(DomainPattern.parse(domain));
            } catch (InvalidPolicyException e) {
                problems.addAll(e.problems());
            }
            return this;
        }

        /**
         * Allows each domain, as {@link #allowDomain(String)} does.
         *
         * @param domains host names or {@code *.} wildcards
         * @return this builder
         */
        public Builder allowDomains(Collection<String> domains) {
            domains.forEach(this::allowDomain);
            return this;
        }

        /**
         * Allows a network, under default deny. A malformed CIDR is kept as a problem that {@link #build()}
         * reports.
         *
         * @param cidr CIDR notation or a bare address, as {@link Cidr#parse(String)} reads it
         * @return this builder
         */
        public Builder allowCidr(String cidr) {
            try {
                allowedCidrs.add(Cidr.parse(cidr));
            } catch (InvalidPolicyException e) {
                problems.addAll(e.problems());
            }
            return this;
        }

        /**
         * Denies a network; a denied CIDR wins over allowed CIDRs and allowed domains. A malformed CIDR is
         * kept as a problem that {@link #build()} reports.
         *
         * @param cidr CIDR notation or a bare address, as {@link Cidr#parse(String)} reads it
         * @return this builder
         */
        public Builder denyCidr(String cidr) {
            try {
                deniedCidrs.add(Cidr.parse(cidr));
            } catch (InvalidPolicyException e) {
                problems.addAll(e.problems());
            }
            return this;
        }

        /**
         * Adds a credential-brokering rule; under default deny its host must be covered by an allowed domain.
         *
         * @param rule the rule; not null
         * @return this builder
         */
        public Builder headerRule(HeaderRule rule) {
            headerRules.add(Objects.requireNonNull(rule, "rule"));
            return this;
        }

        /**
         * Shorthand for {@code headerRule(HeaderRule.of(host, header, secret))}; a malformed rule is kept as
         * a problem that {@link #build()} reports.
         *
         * @param host the exact host the header is added for
         * @param header the header name
         * @param secret the reference the header's value is resolved from
         * @return this builder
         */
        public Builder headerRule(String host, String header, SecretRef secret) {
            try {
                headerRules.add(HeaderRule.of(host, header, secret));
            } catch (InvalidPolicyException e) {
                problems.addAll(e.problems());
            }
            return this;
        }

        /**
         * Validates every rule at once and builds the policy.
         *
         * @return the policy
         * @throws InvalidPolicyException listing every malformed or contradictory rule
         */
        public EgressPolicy build() {
            List<String> all = new ArrayList<>(problems);
            if (defaultAction == Default.ALLOW) {
                for (DomainPattern d : allowedDomains) {
                    all.add("allowed domain '" + d + "' has no effect under default allow; use default deny with an allow list");
                }
                for (Cidr c : allowedCidrs) {
                    all.add("allowed CIDR " + c + " has no effect under default allow; use default deny with an allow list");
                }
            }
            for (Cidr allowed : allowedCidrs) {
                for (Cidr denied : deniedCidrs) {
                    if (denied.contains(allowed)) {
                        all.add("allowed CIDR " + allowed + " lies entirely inside denied CIDR " + denied
                                + " and would have no effect (deny wins)");
                    }
                }
            }
            if (defaultAction == Default.DENY) {
                for (HeaderRule r : headerRules) {
                    boolean covered = allowedDomains.stream().anyMatch(d -> d.covers(r.host()));
                    if (!covered) {
                        all.add("header rule for '" + r.host() + "' names a host that no allowed domain covers");
                    }
                }
            }
            if (!all.isEmpty()) {
                throw new InvalidPolicyException(all);
            }
            return new EgressPolicy(this);
        }
    }
}
