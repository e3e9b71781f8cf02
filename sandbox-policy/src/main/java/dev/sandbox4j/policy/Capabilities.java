package dev.sandbox4j.policy;

import java.util.ArrayList;
import java.util.Collection;
import java.util.EnumSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;

/**
 * What a runner enforces exactly, what it adds on its own, and what it can do. A runner refuses, with
 * {@link #check}, every rule it cannot enforce exactly before it makes any call.
 *
 * @since 0.1.0
 */
public final class Capabilities {

    /**
     * The egress forms a runner can enforce exactly.
     *
     * @since 0.1.0
     */
    public enum Egress {
        /** Default deny with no rules: no network. */
        DENY_ALL,
        /** Default allow with no rules. */
        ALLOW_ALL,
        /** Default deny with allow rules. */
        DEFAULT_DENY_WITH_RULES,
        /** Default allow with deny CIDRs. */
        DEFAULT_ALLOW_WITH_DENIES,
        /** Exact host names. */
        ALLOW_DOMAINS,
        /** {@code *.example.com}, subdomains only. */
        ALLOW_WILDCARD_DOMAINS,
        /** Allowed IPv4 CIDRs ({@link EgressPolicy#allowedCidrs()}). */
        ALLOW_CIDRS_IPV4,
        /** Allowed IPv6 CIDRs. */
        ALLOW_CIDRS_IPV6,
        /** Denied IPv4 CIDRs ({@link EgressPolicy#deniedCidrs()}). */
        DENY_CIDRS_IPV4,
        /** Denied IPv6 CIDRs. */
        DENY_CIDRS_IPV6,
        /** A denied CIDR inside an allowed CIDR wins. */
        DENY_INSIDE_ALLOWED_CIDR,
        /** A denied CIDR wins over the addresses an allowed domain resolves to. */
        DENY_OVER_DOMAINS,
        /** Domains and CIDRs allowed in the same policy. */
        DOMAINS_WITH_CIDRS,
        /** Credential brokering at the provider's proxy. */
        HEADER_RULES,
        /**
         * A header rule's {@linkplain HeaderRule#isScoped scope} ({@linkplain HeaderRule#methods methods} and
         * {@linkplain HeaderRule#pathPrefix path prefix}) is applied: the brokered header goes only on requests
         * inside it. A runner without this refuses a scoped rule, since it would send the secret on every
         * request to the host.
         *
         * @since 0.1.0
         */
        HEADER_RULE_SCOPES,
        /** The policy can be changed on a live sandbox (after trusted setup commands). */
        LIVE_UPDATE
    }

    /**
     * Resource limits a runner applies.
     *
     * @since 0.1.0
     */
    public enum Limit {
        /** A wall-clock lifetime after which the provider ends the sandbox ({@link Limits#lifetime()}). */
        LIFETIME,
        /** A number of virtual CPUs ({@link Limits#vcpus()}). */
        VCPUS,
        /** A memory size ({@link Limits#memoryMib()}). */
        MEMORY,
        /** A disk size ({@link Limits#diskMib()}). */
        DISK,
        /**
         * A cap on the bytes the sandbox moves over the network, counted by the runner's egress proxy
         * ({@link Limits#networkMib()}); the runner refuses it with an egress that bypasses the proxy.
         */
        NETWORK
    }

    /**
     * Other things a runner can do, which the contract suite skips by.
     *
     * @since 0.1.0
     */
    public enum Feature {
        /** stdout and stderr come back separately. */
        SEPARATE_STDERR,
        /** Several exec calls in one sandbox. */
        SESSIONS,
        /** Trusted setup commands before the policy is locked down. */
        SETUP_COMMANDS,
        /** Input files written before the code runs. */
        INPUT_FILES,
        /** Non-secret environment variables from the spec. */
        ENV,
        /** A timed-out run returns the output printed before the kill. */
        OUTPUT_ON_TIMEOUT,
        /** Files read back from a sandbox ({@code Sandbox.readFile}, and collecting named files). */
        READ_FILES,
        /** Directories listed ({@code Sandbox.listFiles}, and collecting by glob). */
        LIST_FILES,
        /** Output handed to an execution's listener as it arrives, before the command ends. */
        STREAMING,
        /**
         * A sandbox created earlier (by this or another process) attached by its id after its labels,
         * state and recorded policy are checked ({@code SandboxRunner.attach}).
         */
        ATTACH
    }

    /**
     * A provider-specific rule check: one sentence per rule that cannot be enforced.
     *
     * @since 0.1.0
     */
    @FunctionalInterface
    public interface PolicyCheck {
        /**
         * The rules of {@code egress} and {@code limits} this provider cannot enforce, one sentence each.
         *
         * @param egress the policy being checked
         * @param limits the limits being checked
         * @return one sentence per rule that cannot be enforced; empty when every rule can
         */
        List<String> violations(EgressPolicy egress, Limits limits);
    }

    private final String runner;
    private final Set<Egress> egress;
    private final Set<Limit> limits;
    private final Set<Feature> features;
    private final Set<Language> languages;
    private final int maxAllowedDomains;
    private final int maxAllowedCidrs;
    private final int maxDeniedCidrs;
    private final List<Cidr> alwaysBlocked;
    private final List<String> implicitAllowances;
    private final List<PolicyCheck> extraChecks;

    private Capabilities(Builder b) {
        this.runner = b.runner;
        this.egress = Set.copyOf(b.egress);
        this.limits = Set.copyOf(b.limits);
        this.features = Set.copyOf(b.features);
        this.languages = Set.copyOf(b.languages);
        this.maxAllowedDomains = b.maxAllowedDomains;
        this.maxAllowedCidrs = b.maxAllowedCidrs;
        this.maxDeniedCidrs = b.maxDeniedCidrs;
        this.alwaysBlocked = List.copyOf(b.alwaysBlocked);
        this.implicitAllowances = List.copyOf(b.implicitAllowances);
        this.extraChecks = List.copyOf(b.extraChecks);
    }

    private Capabilities(Capabilities c, Set<Language> languages) {
        this.runner = c.runner;
        this.egress = c.egress;
        this.limits = c.limits;
        this.features = c.features;
        this.languages = Set.copyOf(languages);
        this.maxAllowedDomains = c.maxAllowedDomains;
        this.maxAllowedCidrs = c.maxAllowedCidrs;
        this.maxDeniedCidrs = c.maxDeniedCidrs;
        this.alwaysBlocked = c.alwaysBlocked;
        this.implicitAllowances = c.implicitAllowances;
        this.extraChecks = c.extraChecks;
    }

    /**
     * A copy of these capabilities that declares exactly {@code languages} instead: for a runner whose
     * languages were configured for its image or found in it ({@code RunnerBuilder.languages},
     * {@code RunnerBuilder.probeLanguages}), with everything else unchanged.
     *
     * @param languages the languages the copy declares; not null, may be empty
     * @return the copy, or this when the languages are the same
     * @since 0.1.0
     */
    public Capabilities withLanguages(Set<Language> languages) {
        Objects.requireNonNull(languages, "languages");
        return this.languages.equals(languages) ? this : new Capabilities(this, languages);
    }

    /**
     * Starts the capabilities of the runner named {@code runner}: nothing supported, no count limits.
     *
     * @param runner the runner's name, used in every violation message; not null
     * @return a new builder
     */
    public static Builder builder(String runner) {
        return new Builder(runner);
    }

    /** {@return the runner's name, as given to {@link #builder(String)} and used in violation messages} */
    public String runner() {
        return runner;
    }

    /** {@return the egress forms this runner enforces exactly; unmodifiable} */
    public Set<Egress> egress() {
        return egress;
    }

    /** {@return the resource limits this runner applies; unmodifiable} */
    public Set<Limit> limits() {
        return limits;
    }

    /** {@return the other features this runner has; unmodifiable} */
    public Set<Feature> features() {
        return features;
    }

    /** {@return the languages this runner can run; unmodifiable} */
    public Set<Language> languages() {
        return languages;
    }

    /**
     * {@return whether this runner enforces the egress form {@code e} exactly}
     *
     * @param e the egress form
     */
    public boolean supports(Egress e) {
        return egress.contains(e);
    }

    /**
     * {@return whether this runner has the feature {@code f}}
     *
     * @param f the feature
     */
    public boolean supports(Feature f) {
        return features.contains(f);
    }

    /**
     * {@return whether this runner can run code in the language {@code l}}
     *
     * @param l the language
     */
    public boolean supports(Language l) {
        return languages.contains(l);
    }

    /**
     * Networks the provider blocks whatever the policy says; allowing any part of them is refused.
     *
     * @return the always-blocked networks; empty when the provider blocks nothing on its own
     */
    public List<Cidr> alwaysBlocked() {
        return alwaysBlocked;
    }

    /**
     * Allowances the provider adds on its own (e.g. a public DNS resolver), in words.
     *
     * @return one description per allowance; empty when the provider adds none
     */
    public List<String> implicitAllowances() {
        return implicitAllowances;
    }

    /** {@return the most allowed domains one policy may list; {@link Integer#MAX_VALUE} when unbounded} */
    public int maxAllowedDomains() {
        return maxAllowedDomains;
    }

    /** {@return the most allowed CIDRs one policy may list; {@link Integer#MAX_VALUE} when unbounded} */
    public int maxAllowedCidrs() {
        return maxAllowedCidrs;
    }

    /** {@return the most denied CIDRs one policy may list; {@link Integer#MAX_VALUE} when unbounded} */
    public int maxDeniedCidrs() {
        return maxDeniedCidrs;
    }

    /**
     * Every rule of {@code policy} and {@code limits} this runner cannot enforce exactly; empty when all can.
     *
     * @param policy the egress policy to check
     * @param limits the resource limits to check
     * @return one sentence per rule that cannot be enforced, without duplicates; empty when all can
     */
    public List<String> violations(EgressPolicy policy, Limits limits) {
        List<String> v = new ArrayList<>();
        boolean deny = policy.defaultAction() == EgressPolicy.Default.DENY;
        if (policy.isDenyAll()) {
            need(v, Egress.DENY_ALL, "deny-all egress");
        } else if (policy.isAllowAll()) {
            need(v, Egress.ALLOW_ALL, "allow-all egress");
        } else if (deny) {
            need(v, Egress.DEFAULT_DENY_WITH_RULES, "default-deny egress with allow rules");
        } else {
            need(v, Egress.DEFAULT_ALLOW_WITH_DENIES, "default-allow egress with deny or header rules");
        }
        for (DomainPattern d : policy.allowedDomains()) {
            need(v, d.isWildcard() ? Egress.ALLOW_WILDCARD_DOMAINS : Egress.ALLOW_DOMAINS, "allowed domain '" + d + "'");
        }
        for (Cidr c : policy.allowedCidrs()) {
            need(v, c.isIpv4() ? Egress.ALLOW_CIDRS_IPV4 : Egress.ALLOW_CIDRS_IPV6, "allowed CIDR " + c);
            for (Cidr blocked : alwaysBlocked) {
                if (blocked.overlaps(c)) {
                    v.add("allowed CIDR " + c + " overlaps " + blocked + ", which " + runner
                            + " always blocks, so the rule would not take effect");
                }
            }
        }
        for (Cidr c : policy.deniedCidrs()) {
            need(v, c.isIpv4() ? Egress.DENY_CIDRS_IPV4 : Egress.DENY_CIDRS_IPV6, "denied CIDR " + c);
            if (policy.allowedCidrs().stream().anyMatch(a -> a.overlaps(c))) {
                need(v, Egress.DENY_INSIDE_ALLOWED_CIDR, "denied CIDR " + c + " overlapping an allowed CIDR (deny must win)");
            }
            if (!policy.allowedDomains().isEmpty()) {
                need(v, Egress.DENY_OVER_DOMAINS, "denied CIDR " + c + " alongside allowed domains (deny must win)");
            }
        }
        if (!policy.allowedDomains().isEmpty() && !policy.allowedCidrs().isEmpty()) {
            need(v, Egress.DOMAINS_WITH_CIDRS, "allowed domains and allowed CIDRs in one policy");
        }
        for (HeaderRule r : policy.headerRules()) {
            need(v, Egress.HEADER_RULES, "header rule " + r);
            if (r.isScoped() && !egress.contains(Egress.HEADER_RULE_SCOPES)) {
                // the host only, not the rule itself: its value prefix is part of the header's value
                v.add("header rule for '" + r.host() + "' scoped to " + scope(r) + " (" + runner
                        + " cannot enforce HEADER_RULE_SCOPES: the header would go on every request to the host)");
            }
        }
        count(v, policy.allowedDomains().size(), maxAllowedDomains, "allowed domains");
        count(v, policy.allowedCidrs().size(), maxAllowedCidrs, "allowed CIDRs");
        count(v, policy.deniedCidrs().size(), maxDeniedCidrs, "denied CIDRs");
        if (limits.lifetime().isPresent() && !this.limits.contains(Limit.LIFETIME)) {
            v.add("a lifetime limit (" + runner + " cannot set one)");
        }
        if (limits.vcpus().isPresent() && !this.limits.contains(Limit.VCPUS)) {
            v.add("a vCPU limit (" + runner + " cannot set one)");
        }
        if (limits.memoryMib().isPresent() && !this.limits.contains(Limit.MEMORY)) {
            v.add("a memory limit (" + runner + " cannot set one)");
        }
        if (limits.diskMib().isPresent() && !this.limits.contains(Limit.DISK)) {
            v.add("a disk limit (" + runner + " cannot set one)");
        }
        if (limits.networkMib().isPresent() && !this.limits.contains(Limit.NETWORK)) {
            v.add("a network limit (" + runner + " cannot count the sandbox's bytes)");
        }
        for (PolicyCheck check : extraChecks) {
            v.addAll(check.violations(policy, limits));
        }
        return v.stream().distinct().toList();
    }

    /**
     * Throws when any rule cannot be enforced exactly.
     *
     * @param policy the egress policy to check
     * @param limits the resource limits to check
     * @throws UnsupportedPolicyException naming each such rule
     */
    public void check(EgressPolicy policy, Limits limits) {
        List<String> v = violations(policy, limits);
        if (!v.isEmpty()) {
            throw new UnsupportedPolicyException(runner, v);
        }
    }

    private void need(List<String> v, Egress e, String what) {
        if (!egress.contains(e)) {
            v.add(what + " (" + runner + " cannot enforce " + e + ")");
        }
    }

    /** A rule's scope in words: {@code methods [GET, POST] and paths under '/v1/'}. */
    private static String scope(HeaderRule r) {
        String paths = r.pathPrefix().equals("/") ? "" : "paths under '" + r.pathPrefix() + "'";
        String methods = r.methods().isEmpty() ? "" : "methods " + r.methods();
        return methods.isEmpty() ? paths : paths.isEmpty() ? methods : methods + " and " + paths;
    }

    private void count(List<String> v, int n, int max, String what) {
        if (n > max) {
            v.add(n + " " + what + " (" + runner + " takes at most " + max + ")");
        }
    }

    @Override
    public String toString() {
        return "Capabilities[" + runner + ", egress=" + egress + ", limits=" + limits + ", features=" + features
                + ", languages=" + languages
                + (alwaysBlocked.isEmpty() ? "" : ", alwaysBlocked=" + alwaysBlocked)
                + (implicitAllowances.isEmpty() ? "" : ", implicitAllowances=" + implicitAllowances) + "]";
    }

    /**
     * Builds {@link Capabilities}; every setter adds to what was set before, except the {@code max*} counts,
     * which replace it.
     *
     * @since 0.1.0
     */
    public static final class Builder {
        private final String runner;
        private final Set<Egress> egress = EnumSet.noneOf(Egress.class);
        private final Set<Limit> limits = EnumSet.noneOf(Limit.class);
        private final Set<Feature> features = EnumSet.noneOf(Feature.class);
        private final Set<Language> languages = EnumSet.noneOf(Language.class);
        private int maxAllowedDomains = Integer.MAX_VALUE;
        private int maxAllowedCidrs = Integer.MAX_VALUE;
        private int maxDeniedCidrs = Integer.MAX_VALUE;
        private final List<Cidr> alwaysBlocked = new ArrayList<>();
        private final List<String> implicitAllowances = new ArrayList<>();
        private final List<PolicyCheck> extraChecks = new ArrayList<>();

        private Builder(String runner) {
            this.runner = Objects.requireNonNull(runner, "runner");
        }

        /**
         * Adds egress forms this runner enforces exactly.
         *
         * @param e the forms to add
         * @return this builder
         */
        public Builder egress(Egress... e) {
            egress.addAll(List.of(e));
            return this;
        }

        /**
         * Adds resource limits this runner applies.
         *
         * @param l the limits to add
         * @return this builder
         */
        public Builder limits(Limit... l) {
            limits.addAll(List.of(l));
            return this;
        }

        /**
         * Adds features this runner has.
         *
         * @param f the features to add
         * @return this builder
         */
        public Builder features(Feature... f) {
            features.addAll(List.of(f));
            return this;
        }

        /**
         * Adds languages this runner can run.
         *
         * @param l the languages to add
         * @return this builder
         */
        public Builder languages(Language... l) {
            languages.addAll(List.of(l));
            return this;
        }

        /**
         * Sets the most allowed domains one policy may list; more is a violation. Default unbounded.
         *
         * @param n the largest count accepted
         * @return this builder
         */
        public Builder maxAllowedDomains(int n) {
            maxAllowedDomains = n;
            return this;
        }

        /**
         * Sets the most allowed CIDRs one policy may list; more is a violation. Default unbounded.
         *
         * @param n the largest count accepted
         * @return this builder
         */
        public Builder maxAllowedCidrs(int n) {
            maxAllowedCidrs = n;
            return this;
        }

        /**
         * Sets the most denied CIDRs one policy may list; more is a violation. Default unbounded.
         *
         * @param n the largest count accepted
         * @return this builder
         */
        public Builder maxDeniedCidrs(int n) {
            maxDeniedCidrs = n;
            return this;
        }

        /**
         * Adds networks the provider blocks whatever the policy says; an allowed CIDR overlapping one is a
         * violation.
         *
         * @param cidrs CIDRs in the form {@link Cidr#parse(String)} reads
         * @return this builder
         * @throws InvalidPolicyException when a CIDR does not parse
         */
        public Builder alwaysBlocked(Collection<String> cidrs) {
            cidrs.forEach(c -> alwaysBlocked.add(Cidr.parse(c)));
            return this;
        }

        /**
         * Adds an allowance the provider makes on its own, described in words (shown, never enforced).
         *
         * @param description for example "a public DNS resolver"
         * @return this builder
         */
        public Builder implicitAllowance(String description) {
            implicitAllowances.add(description);
            return this;
        }

        /**
         * Adds a provider-specific check, run after the generic ones by {@link Capabilities#violations}.
         *
         * @param check the check; not null
         * @return this builder
         */
        public Builder check(PolicyCheck check) {
            extraChecks.add(Objects.requireNonNull(check, "check"));
            return this;
        }

        /** {@return the capabilities set so far; later changes to this builder do not affect it} */
        public Capabilities build() {
            return new Capabilities(this);
        }
    }
}
