package dev.sandbox4j.e2b.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.sandbox4j.policy.Capabilities;
import dev.sandbox4j.policy.EgressPolicy;
import dev.sandbox4j.policy.HeaderRule;
import dev.sandbox4j.policy.Limits;
import dev.sandbox4j.policy.SecretRef;
import dev.sandbox4j.policy.UnsupportedPolicyException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** The policy translation as a table: accepted forms with their exact wire fields, and refusals. */
class E2bPolicyTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String SECRET = "sk-live-7d1e0f9a2b";
    private static final SecretRef KEY = SecretRef.of("stripe", () -> SECRET);
    private static final Capabilities CAPS = E2bPolicy.capabilities();

    static Stream<Arguments> accepted() {
        return Stream.of(
                Arguments.of("deny-all", EgressPolicy.denyAll(),
                        "{'allow_internet_access':false}",
                        "{'denyOut':['0.0.0.0/0'],'allow_internet_access':false}"),
                Arguments.of("allow-all", EgressPolicy.allowAll(),
                        "{'allow_internet_access':true}",
                        "{'allow_internet_access':true}"),
                Arguments.of("deny with a denied CIDR only is still deny-all",
                        EgressPolicy.builder().denyCidr("203.0.113.0/24").build(),
                        "{'allow_internet_access':false}",
                        "{'denyOut':['0.0.0.0/0'],'allow_internet_access':false}"),
                Arguments.of("recording b: IPs, a CIDR and a domain under deny-all",
                        EgressPolicy.builder().allowCidr("1.1.1.1").allowCidr("8.8.8.0/24").allowDomain("example.com").build(),
                        "{'allow_internet_access':false,'network':{'allowOut':['1.1.1.1','8.8.8.0/24','example.com'],"
                                + "'denyOut':['0.0.0.0/0']}}",
                        "{'allowOut':['1.1.1.1','8.8.8.0/24','example.com'],'denyOut':['0.0.0.0/0'],"
                                + "'allow_internet_access':false}"),
                Arguments.of("wildcard domain (subdomains only, as E2B matches it)",
                        EgressPolicy.allowOnly("*.pypi.org", "files.pythonhosted.org"),
                        "{'allow_internet_access':false,'network':{'allowOut':['*.pypi.org','files.pythonhosted.org'],"
                                + "'denyOut':['0.0.0.0/0']}}",
                        null),
                Arguments.of("default allow with denied IPv4 CIDRs",
                        EgressPolicy.builder(EgressPolicy.Default.ALLOW).denyCidr("203.0.113.0/24").denyCidr("198.51.100.7").build(),
                        "{'allow_internet_access':true,'network':{'denyOut':['203.0.113.0/24','198.51.100.7']}}",
                        "{'denyOut':['203.0.113.0/24','198.51.100.7'],'allow_internet_access':true}"),
                Arguments.of("default deny with a denied CIDR beside an allowed one (no overlap)",
                        EgressPolicy.builder().allowCidr("1.1.1.0/24").denyCidr("9.9.9.0/24").build(),
                        "{'allow_internet_access':false,'network':{'allowOut':['1.1.1.0/24'],"
                                + "'denyOut':['0.0.0.0/0','9.9.9.0/24']}}",
                        null),
                Arguments.of("header rule for an exact host",
                        EgressPolicy.builder().allowDomain("api.stripe.com")
                                .headerRule(HeaderRule.of("api.stripe.com", "Authorization", KEY, "Bearer ")).build(),
                        "{'allow_internet_access':false,'network':{'allowOut':['api.stripe.com'],'denyOut':['0.0.0.0/0'],"
                                + "'rules':{'api.stripe.com':[{'transform':{'headers':{'Authorization':'Bearer " + SECRET + "'}}}]}}}",
                        "{'allowOut':['api.stripe.com'],'denyOut':['0.0.0.0/0'],"
                                + "'rules':{'api.stripe.com':[{'transform':{'headers':{'Authorization':'Bearer " + SECRET + "'}}}]},"
                                + "'allow_internet_access':false}"),
                Arguments.of("header rule for a host a wildcard allows: the host is listed too",
                        EgressPolicy.builder().allowDomain("*.example.com")
                                .headerRule("api.example.com", "X-Key", KEY)
                                .headerRule("api.example.com", "X-Other", KEY).build(),
                        "{'allow_internet_access':false,'network':{'allowOut':['*.example.com','api.example.com'],"
                                + "'denyOut':['0.0.0.0/0'],'rules':{'api.example.com':[{'transform':{'headers':"
                                + "{'X-Key':'" + SECRET + "','X-Other':'" + SECRET + "'}}}]}}}",
                        null));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("accepted")
    void accepted(String name, EgressPolicy policy, String create, String update) throws Exception {
        assertEquals(List.of(), CAPS.violations(policy, Limits.defaults()), name);
        List<String> secrets = new ArrayList<>();
        assertEquals(tree(create), E2bPolicy.createFields(policy, secrets), name);
        if (update != null) {
            assertEquals(tree(update), E2bPolicy.updateBody(policy, new ArrayList<>()), name);
        }
        assertEquals(!policy.headerRules().isEmpty(), secrets.contains(SECRET), "resolved secrets are reported for redaction");
    }

    static Stream<Arguments> refused() {
        return Stream.of(
                Arguments.of("allowed IPv6 CIDR", EgressPolicy.builder().allowCidr("2001:db8::/32").build(), "IPV6"),
                Arguments.of("denied IPv6 CIDR", EgressPolicy.builder(EgressPolicy.Default.ALLOW).denyCidr("2001:db8::/32").build(), "IPV6"),
                Arguments.of("deny inside an allowed CIDR (E2B lets allow win)",
                        EgressPolicy.builder().allowCidr("8.8.0.0/16").denyCidr("8.8.8.0/24").build(), "deny must win"),
                Arguments.of("deny next to allowed domains (domain matches win)",
                        EgressPolicy.builder().allowDomain("example.com").denyCidr("93.184.216.0/24").build(), "deny must win"),
                Arguments.of("allowed private range (always blocked)",
                        EgressPolicy.builder().allowCidr("10.1.0.0/16").build(), "always blocks"),
                Arguments.of("allowed metadata address (always blocked)",
                        EgressPolicy.builder().allowCidr("169.254.169.254").build(), "always blocks"),
                Arguments.of("the whole IPv4 space allowed under deny overlaps the private ranges",
                        EgressPolicy.builder().allowCidr("0.0.0.0/0").build(), "always blocks"),
                Arguments.of("denied CIDR with the unspecified address",
                        EgressPolicy.builder(EgressPolicy.Default.ALLOW).denyCidr("0.0.0.0/8").build(), "unspecified"),
                Arguments.of("header rule for a wildcard host",
                        EgressPolicy.builder().allowDomain("*.example.com").headerRule("*.api.example.com", "X-Key", KEY).build(),
                        "exact host"),
                Arguments.of("header rule under default allow",
                        EgressPolicy.builder(EgressPolicy.Default.ALLOW).headerRule("api.example.com", "X-Key", KEY).build(),
                        "default-allow"),
                Arguments.of("two values for one header of one host",
                        EgressPolicy.builder().allowDomain("api.example.com")
                                .headerRule(HeaderRule.of("api.example.com", "X-Key", KEY))
                                .headerRule(HeaderRule.of("api.example.com", "x-key", SecretRef.of("other", () -> "v2v2v2"))).build(),
                        "one value per header"),
                Arguments.of("header rules for 11 hosts", elevenRuleHosts(), "at most 10"),
                Arguments.of("header name over 64 characters",
                        EgressPolicy.builder().allowDomain("api.example.com")
                                .headerRule("api.example.com", "X-" + "a".repeat(63), KEY).build(), "at most 64"));
    }

    private static EgressPolicy elevenRuleHosts() {
        EgressPolicy.Builder b = EgressPolicy.builder();
        for (int i = 0; i < 11; i++) {
            b.allowDomain("h" + i + ".example.com").headerRule("h" + i + ".example.com", "X-Key", KEY);
        }
        return b.build();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("refused")
    void refused(String name, EgressPolicy policy, String expected) {
        List<String> v = CAPS.violations(policy, Limits.defaults());
        assertFalse(v.isEmpty(), name + " must be refused");
        assertTrue(v.stream().anyMatch(s -> s.contains(expected)), name + ": " + v);
        UnsupportedPolicyException e = assertThrows(UnsupportedPolicyException.class,
                () -> CAPS.check(policy, Limits.defaults()));
        assertFalse(e.getMessage().contains(SECRET), e.getMessage());
    }

    @Test
    void limitsOtherThanALifetimeUpTo24HoursAreRefused() {
        assertEquals(List.of(), CAPS.violations(EgressPolicy.denyAll(), Limits.builder().lifetime(Duration.ofHours(24)).build()));
        assertTrue(CAPS.violations(EgressPolicy.denyAll(), Limits.builder().lifetime(Duration.ofHours(25)).build())
                .stream().anyMatch(s -> s.contains("24 hours")));
        assertFalse(CAPS.violations(EgressPolicy.denyAll(), Limits.builder().vcpus(2).build()).isEmpty());
        assertFalse(CAPS.violations(EgressPolicy.denyAll(), Limits.builder().memoryMib(512).build()).isEmpty());
        assertFalse(CAPS.violations(EgressPolicy.denyAll(), Limits.builder().diskMib(512).build()).isEmpty());
    }

    @Test
    void declaresWhatE2bAddsAndBlocksOnItsOwn() {
        assertTrue(CAPS.implicitAllowances().stream().anyMatch(s -> s.contains("8.8.8.8")));
        assertEquals(9, CAPS.alwaysBlocked().size());
        assertTrue(CAPS.supports(Capabilities.Egress.LIVE_UPDATE));
        assertFalse(CAPS.supports(Capabilities.Egress.DENY_OVER_DOMAINS));
        assertFalse(CAPS.supports(Capabilities.Egress.DENY_INSIDE_ALLOWED_CIDR));
        assertFalse(CAPS.supports(Capabilities.Egress.ALLOW_CIDRS_IPV6));
    }

    @Test
    void resolvedHeaderValuesThatCannotGoOnTheWireExactlyAreRefusedWithoutEchoingThem() {
        for (String bad : List.of("line\nbreak-" + SECRET, "${e2b.secrets.x}" + SECRET, "x".repeat(2049))) {
            EgressPolicy p = EgressPolicy.builder().allowDomain("api.example.com")
                    .headerRule("api.example.com", "X-Key", SecretRef.of("bad", () -> bad)).build();
            UnsupportedPolicyException e = assertThrows(UnsupportedPolicyException.class,
                    () -> E2bPolicy.createFields(p, new ArrayList<>()));
            assertFalse(e.getMessage().contains(SECRET), e.getMessage());
            assertFalse(e.getMessage().contains("xxxx"), e.getMessage());
        }
        EgressPolicy failing = EgressPolicy.builder().allowDomain("api.example.com")
                .headerRule("api.example.com", "X-Key", SecretRef.of("vault", () -> {
                    throw new IllegalStateException("vault said " + SECRET);
                })).build();
        UnsupportedPolicyException e = assertThrows(UnsupportedPolicyException.class,
                () -> E2bPolicy.createFields(failing, new ArrayList<>()));
        assertFalse(e.getMessage().contains(SECRET), e.getMessage());
        assertTrue(e.getMessage().contains("vault"), e.getMessage());
    }

    private static JsonNode tree(String singleQuoted) throws Exception {
        return JSON.readTree(singleQuoted.replace('\'', '"'));
    }
}
