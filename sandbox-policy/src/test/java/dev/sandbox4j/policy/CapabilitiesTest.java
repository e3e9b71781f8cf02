package dev.sandbox4j.policy;

import static dev.sandbox4j.policy.Capabilities.Egress.ALLOW_ALL;
import static dev.sandbox4j.policy.Capabilities.Egress.ALLOW_CIDRS_IPV4;
import static dev.sandbox4j.policy.Capabilities.Egress.ALLOW_CIDRS_IPV6;
import static dev.sandbox4j.policy.Capabilities.Egress.ALLOW_DOMAINS;
import static dev.sandbox4j.policy.Capabilities.Egress.ALLOW_WILDCARD_DOMAINS;
import static dev.sandbox4j.policy.Capabilities.Egress.DEFAULT_ALLOW_WITH_DENIES;
import static dev.sandbox4j.policy.Capabilities.Egress.DEFAULT_DENY_WITH_RULES;
import static dev.sandbox4j.policy.Capabilities.Egress.DENY_ALL;
import static dev.sandbox4j.policy.Capabilities.Egress.DENY_CIDRS_IPV4;
import static dev.sandbox4j.policy.Capabilities.Egress.DENY_CIDRS_IPV6;
import static dev.sandbox4j.policy.Capabilities.Egress.DENY_INSIDE_ALLOWED_CIDR;
import static dev.sandbox4j.policy.Capabilities.Egress.DENY_OVER_DOMAINS;
import static dev.sandbox4j.policy.Capabilities.Egress.DOMAINS_WITH_CIDRS;
import static dev.sandbox4j.policy.Capabilities.Egress.HEADER_RULES;
import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.time.Duration;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** {@link Capabilities#violations} names exactly the refused rules, and nothing else. */
class CapabilitiesTest {

    /** Everything enforced exactly: no violations for any valid policy. */
    private static final Capabilities ALL = Capabilities.builder("all")
            .egress(Capabilities.Egress.values())
            .limits(Capabilities.Limit.values())
            .features(Capabilities.Feature.values())
            .languages(Language.values())
            .build();

    /** Domains only, no CIDRs, no wildcard, no header rules, lifetime only, at most 2 domains. */
    private static final Capabilities NARROW = Capabilities.builder("narrow")
            .egress(DENY_ALL, ALLOW_ALL, DEFAULT_DENY_WITH_RULES, ALLOW_DOMAINS)
            .limits(Capabilities.Limit.LIFETIME)
            .maxAllowedDomains(2)
            .build();

    static Stream<Arguments> cases() {
        SecretRef key = SecretRef.of("key", () -> "never-shown");
        return Stream.of(
                Arguments.of(NARROW, EgressPolicy.denyAll(), Limits.defaults(), List.of()),
                Arguments.of(NARROW, EgressPolicy.allowAll(), Limits.defaults(), List.of()),
                Arguments.of(NARROW, EgressPolicy.allowOnly("a.example.com", "b.example.com"),
                        Limits.builder().lifetime(Duration.ofMinutes(1)).build(), List.of()),
                Arguments.of(NARROW, EgressPolicy.allowOnly("a.example.com", "*.b.example.com"), Limits.defaults(),
                        List.of("allowed domain '*.b.example.com' (narrow cannot enforce ALLOW_WILDCARD_DOMAINS)")),
                Arguments.of(NARROW, EgressPolicy.allowOnly("a.example.com", "b.example.com", "c.example.com"), Limits.defaults(),
                        List.of("3 allowed domains (narrow takes at most 2)")),
                Arguments.of(NARROW, EgressPolicy.builder().allowDomain("a.example.com").allowCidr("10.0.0.0/8")
                                .allowCidr("2001:db8::/32").build(), Limits.defaults(),
                        List.of("allowed CIDR 10.0.0.0/8 (narrow cannot enforce ALLOW_CIDRS_IPV4)",
                                "allowed CIDR 2001:db8::/32 (narrow cannot enforce ALLOW_CIDRS_IPV6)",
                                "allowed domains and allowed CIDRs in one policy (narrow cannot enforce DOMAINS_WITH_CIDRS)")),
                Arguments.of(NARROW, EgressPolicy.builder(EgressPolicy.Default.ALLOW).denyCidr("169.254.0.0/16")
                                .denyCidr("fd00::/8").build(), Limits.defaults(),
                        List.of("default-allow egress with deny or header rules (narrow cannot enforce DEFAULT_ALLOW_WITH_DENIES)",
                                "denied CIDR 169.254.0.0/16 (narrow cannot enforce DENY_CIDRS_IPV4)",
                                "denied CIDR fd00::/8 (narrow cannot enforce DENY_CIDRS_IPV6)")),
                Arguments.of(NARROW, EgressPolicy.builder().allowDomain("api.example.com")
                                .headerRule("api.example.com", "Authorization", key).build(), Limits.defaults(),
                        List.of("header rule HeaderRule[api.example.com Authorization: SecretRef[key]] (narrow cannot enforce HEADER_RULES)")),
                Arguments.of(NARROW, EgressPolicy.denyAll(),
                        Limits.builder().lifetime(Duration.ofMinutes(1)).vcpus(2).memoryMib(512).diskMib(1024).build(),
                        List.of("a vCPU limit (narrow cannot set one)", "a memory limit (narrow cannot set one)",
                                "a disk limit (narrow cannot set one)")),
                Arguments.of(Capabilities.builder("none").build(), EgressPolicy.denyAll(),
                        Limits.builder().lifetime(Duration.ofMinutes(1)).build(),
                        List.of("deny-all egress (none cannot enforce DENY_ALL)", "a lifetime limit (none cannot set one)")),
                Arguments.of(Capabilities.builder("none").build(), EgressPolicy.allowAll(), Limits.defaults(),
                        List.of("allow-all egress (none cannot enforce ALLOW_ALL)")),
                Arguments.of(ALL, EgressPolicy.builder().allowDomain("*.example.com").allowCidr("10.0.0.0/8")
                                .denyCidr("10.1.0.0/16").headerRule("api.example.com", "X-Key", key).build(),
                        Limits.builder().vcpus(1).memoryMib(1).diskMib(1).lifetime(Duration.ofSeconds(1)).build(), List.of()));
    }

    @ParameterizedTest(name = "[{index}] {0} {1}")
    @MethodSource("cases")
    void violationsNameExactlyTheRefusedRules(Capabilities caps, EgressPolicy policy, Limits limits, List<String> expected) {
        assertEquals(expected, caps.violations(policy, limits));
        if (expected.isEmpty()) {
            assertDoesNotThrow(() -> caps.check(policy, limits));
        } else {
            UnsupportedPolicyException e = assertThrows(UnsupportedPolicyException.class, () -> caps.check(policy, limits));
            assertEquals(caps.runner(), e.runner());
            assertEquals(expected, e.violations());
            assertEquals(caps.runner() + " cannot enforce this policy exactly: " + String.join("; ", expected), e.getMessage());
        }
    }

    @Test
    void denyRulesThatMustWinAreRefusedWhereTheRunnerCannotMakeThemWin() {
        Capabilities caps = Capabilities.builder("cidrs")
                .egress(DEFAULT_DENY_WITH_RULES, ALLOW_DOMAINS, ALLOW_CIDRS_IPV4, DENY_CIDRS_IPV4, DOMAINS_WITH_CIDRS)
                .build();
        EgressPolicy p = EgressPolicy.builder().allowDomain("example.com").allowCidr("10.0.0.0/8")
                .denyCidr("10.1.0.0/16").denyCidr("192.0.2.0/24").build();
        assertEquals(List.of(
                "denied CIDR 10.1.0.0/16 overlapping an allowed CIDR (deny must win) (cidrs cannot enforce DENY_INSIDE_ALLOWED_CIDR)",
                "denied CIDR 10.1.0.0/16 alongside allowed domains (deny must win) (cidrs cannot enforce DENY_OVER_DOMAINS)",
                "denied CIDR 192.0.2.0/24 alongside allowed domains (deny must win) (cidrs cannot enforce DENY_OVER_DOMAINS)"),
                caps.violations(p, Limits.defaults()));
        Capabilities both = Capabilities.builder("both")
                .egress(DEFAULT_DENY_WITH_RULES, ALLOW_DOMAINS, ALLOW_CIDRS_IPV4, DENY_CIDRS_IPV4, DOMAINS_WITH_CIDRS,
                        DENY_INSIDE_ALLOWED_CIDR, DENY_OVER_DOMAINS)
                .build();
        assertEquals(List.of(), both.violations(p, Limits.defaults()));
    }

    @Test
    void allowingPartOfAnAlwaysBlockedNetworkIsRefusedBecauseItWouldNotTakeEffect() {
        Capabilities caps = Capabilities.builder("cloud")
                .egress(DEFAULT_DENY_WITH_RULES, ALLOW_CIDRS_IPV4)
                .alwaysBlocked(List.of("10.0.0.0/8", "169.254.0.0/16"))
                .build();
        EgressPolicy p = EgressPolicy.builder().allowCidr("10.1.0.0/16").allowCidr("0.0.0.0/0")
                .allowCidr("192.0.2.0/24").build();
        assertEquals(List.of(
                "allowed CIDR 10.1.0.0/16 overlaps 10.0.0.0/8, which cloud always blocks, so the rule would not take effect",
                "allowed CIDR 0.0.0.0/0 overlaps 10.0.0.0/8, which cloud always blocks, so the rule would not take effect",
                "allowed CIDR 0.0.0.0/0 overlaps 169.254.0.0/16, which cloud always blocks, so the rule would not take effect"),
                caps.violations(p, Limits.defaults()));
    }

    @Test
    void extraChecksAddTheirSentencesAndDuplicatesAreDropped() {
        Capabilities caps = Capabilities.builder("quirky")
                .egress(DEFAULT_DENY_WITH_RULES, ALLOW_DOMAINS, ALLOW_WILDCARD_DOMAINS)
                .check((egress, limits) -> egress.allowedDomains().stream()
                        .filter(DomainPattern::isWildcard)
                        .map(d -> "allowed domain '" + d + "' (quirky matches the base domain too)")
                        .toList())
                .check((egress, limits) -> List.of("a rule every policy breaks", "a rule every policy breaks"))
                .build();
        assertEquals(List.of("allowed domain '*.example.com' (quirky matches the base domain too)", "a rule every policy breaks"),
                caps.violations(EgressPolicy.allowOnly("*.example.com", "api.example.org"), Limits.defaults()));
    }

    @Test
    void aScopedHeaderRuleIsRefusedWhereTheScopeWouldBeDroppedNamingTheHostNotTheValue() {
        SecretRef key = SecretRef.of("key", () -> "never-shown");
        Capabilities unscopedOnly = Capabilities.builder("flat")
                .egress(DEFAULT_DENY_WITH_RULES, ALLOW_DOMAINS, HEADER_RULES)
                .build();
        EgressPolicy scoped = EgressPolicy.builder().allowDomain("api.example.com")
                .headerRule(HeaderRule.builder("api.example.com", "Authorization", key).valuePrefix("Bearer-prefix ")
                        .methods("get", "POST").pathPrefix("/v1/").build())
                .headerRule(HeaderRule.builder("api.example.com", "X-Path-Only", key).pathPrefix("/v2/").build())
                .headerRule(HeaderRule.builder("api.example.com", "X-Method-Only", key).methods("DELETE").build())
                .headerRule(HeaderRule.of("api.example.com", "X-Everywhere", key))
                .build();
        List<String> expected = List.of(
                "header rule for 'api.example.com' scoped to methods [GET, POST] and paths under '/v1/' (flat cannot"
                        + " enforce HEADER_RULE_SCOPES: the header would go on every request to the host)",
                "header rule for 'api.example.com' scoped to paths under '/v2/' (flat cannot enforce HEADER_RULE_SCOPES:"
                        + " the header would go on every request to the host)",
                "header rule for 'api.example.com' scoped to methods [DELETE] (flat cannot enforce HEADER_RULE_SCOPES:"
                        + " the header would go on every request to the host)");
        assertEquals(expected, unscopedOnly.violations(scoped, Limits.defaults()));
        UnsupportedPolicyException e = assertThrows(UnsupportedPolicyException.class,
                () -> unscopedOnly.check(scoped, Limits.defaults()));
        assertEquals(expected, e.violations());
        assertEquals(false, e.getMessage().contains("never-shown") || e.getMessage().contains("Bearer-prefix"), e.getMessage());
        // an unscoped rule needs no scope support; a runner with it takes the scoped ones
        assertEquals(List.of(), unscopedOnly.violations(EgressPolicy.builder().allowDomain("api.example.com")
                .headerRule(HeaderRule.of("api.example.com", "X-Everywhere", key)).build(), Limits.defaults()));
        assertEquals(List.of(), ALL.violations(scoped, Limits.defaults()));
        // without header rules at all, both sentences: the rule, and its scope
        assertEquals(List.of("header rule HeaderRule[api.example.com X-Method-Only: SecretRef[key] methods=[DELETE]]"
                        + " (narrow cannot enforce HEADER_RULES)",
                "header rule for 'api.example.com' scoped to methods [DELETE] (narrow cannot enforce HEADER_RULE_SCOPES:"
                        + " the header would go on every request to the host)"),
                NARROW.violations(EgressPolicy.builder().allowDomain("api.example.com")
                        .headerRule(HeaderRule.builder("api.example.com", "X-Method-Only", key).methods("DELETE").build())
                        .build(), Limits.defaults()));
    }

    @Test
    void capabilityQueries() {
        assertEquals(true, NARROW.supports(ALLOW_DOMAINS));
        assertEquals(false, NARROW.supports(HEADER_RULES));
        assertEquals(false, NARROW.supports(Capabilities.Feature.SESSIONS));
        assertEquals(true, ALL.supports(Language.BASH));
        assertEquals(2, NARROW.maxAllowedDomains());
        assertEquals(Integer.MAX_VALUE, NARROW.maxAllowedCidrs());
        assertEquals(false, NARROW.supports(ALLOW_WILDCARD_DOMAINS));
        assertEquals(false, NARROW.supports(ALLOW_CIDRS_IPV4) || NARROW.supports(ALLOW_CIDRS_IPV6)
                || NARROW.supports(DENY_CIDRS_IPV4) || NARROW.supports(DENY_CIDRS_IPV6)
                || NARROW.supports(DEFAULT_ALLOW_WITH_DENIES) || NARROW.supports(DENY_INSIDE_ALLOWED_CIDR)
                || NARROW.supports(DENY_OVER_DOMAINS) || NARROW.supports(DOMAINS_WITH_CIDRS));
    }
}
