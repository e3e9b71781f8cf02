package dev.sandbox4j.policy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;
import java.util.function.Supplier;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** Validation of policy values, with the exact sentences a caller sees. */
class PolicyValidationTest {

    static Stream<Arguments> malformedCidrs() {
        return Stream.of(
                // host bits set: refused, with the network the caller probably meant
                Arguments.of("10.0.0.1/8", "CIDR '10.0.0.1/8' has host bits set beyond /8 (did you mean 10.0.0.0/8?)"),
                Arguments.of("192.168.1.1/24", "CIDR '192.168.1.1/24' has host bits set beyond /24 (did you mean 192.168.1.0/24?)"),
                Arguments.of("0.0.0.1/0", "CIDR '0.0.0.1/0' has host bits set beyond /0 (did you mean 0.0.0.0/0?)"),
                Arguments.of("2001:db8::1/32",
                        "CIDR '2001:db8::1/32' has host bits set beyond /32 (did you mean 2001:db8::/32?)"),
                // prefix out of range or not a number
                Arguments.of("10.0.0.0/33", "CIDR '10.0.0.0/33': prefix /33 is out of range 0..32"),
                Arguments.of("2001:db8::/129", "CIDR '2001:db8::/129': prefix /129 is out of range 0..128"),
                Arguments.of("10.0.0.0/999", "CIDR '10.0.0.0/999': prefix /999 is out of range 0..32"),
                Arguments.of("10.0.0.0/-1", "CIDR '10.0.0.0/-1': prefix '-1' is not a number"),
                Arguments.of("10.0.0.0/", "CIDR '10.0.0.0/': prefix '' is not a number"),
                Arguments.of("10.0.0.0/8/8", "CIDR '10.0.0.0/8/8': prefix '8/8' is not a number"),
                Arguments.of("10.0.0.0/1000", "CIDR '10.0.0.0/1000': prefix /1000 is out of range 0..32"),
                // not an address
                Arguments.of("256.0.0.0/8", "CIDR '256.0.0.0/8': '256.0.0.0' is not an IPv4 address"),
                Arguments.of("1.2.3/24", "CIDR '1.2.3/24': '1.2.3' is not an IPv4 or IPv6 address"),
                Arguments.of("example.com/24", "CIDR 'example.com/24': 'example.com' is not an IPv4 or IPv6 address"),
                Arguments.of("localhost", "CIDR 'localhost': 'localhost' is not an IPv4 or IPv6 address"),
                Arguments.of("1:2/64", "CIDR '1:2/64': '1:2' is not an IPv4 or IPv6 address"),
                Arguments.of("fe80::1%eth0/128", "CIDR 'fe80::1%eth0/128': 'fe80::1%eth0' is not an IPv4 or IPv6 address"),
                Arguments.of("[::1]/128", "CIDR '[::1]/128': '[::1]' is not an IPv4 or IPv6 address"),
                // an IPv4-mapped IPv6 literal is ambiguous between the two families: refused
                Arguments.of("::ffff:1.2.3.4/128", "CIDR '::ffff:1.2.3.4/128': '::ffff:1.2.3.4' is not an IPv4 or IPv6 address"),
                // would go to the resolver if passed to InetAddress: refused before that
                Arguments.of(".:1", "CIDR '.:1': '.:1' is not an IPv4 or IPv6 address"),
                Arguments.of("", "CIDR must not be empty"),
                Arguments.of("   ", "CIDR must not be empty"));
    }

    @ParameterizedTest(name = "[{index}] {0}")
    @MethodSource("malformedCidrs")
    void malformedCidrIsRefusedWithExactMessage(String text, String message) {
        InvalidPolicyException e = assertThrows(InvalidPolicyException.class, () -> Cidr.parse(text));
        assertEquals(message, e.getMessage());
        assertEquals(List.of(message), e.problems());
    }

    static Stream<Arguments> validCidrs() {
        return Stream.of(
                Arguments.of("10.0.0.0/8", "10.0.0.0/8", 4, false),
                Arguments.of(" 10.0.0.0/8 ", "10.0.0.0/8", 4, false),
                Arguments.of("0.0.0.0/0", "0.0.0.0/0", 4, false),
                Arguments.of("1.2.3.4", "1.2.3.4/32", 4, true),
                Arguments.of("1.2.3.4/32", "1.2.3.4/32", 4, true),
                Arguments.of("2001:db8::/32", "2001:db8::/32", 6, false),
                Arguments.of("2001:DB8::/32", "2001:db8::/32", 6, false),
                Arguments.of("::/0", "::/0", 6, false),
                Arguments.of("::1", "::1/128", 6, true),
                Arguments.of("fd00::/8", "fd00::/8", 6, false),
                // RFC 5952: the longest run of zero groups is compressed, the first of equal runs, never a single group
                Arguments.of("2001:db8:0:0:1:0:0:1", "2001:db8::1:0:0:1/128", 6, true),
                Arguments.of("2001:0:0:1:0:0:0:1", "2001:0:0:1::1/128", 6, true),
                Arguments.of("2001:db8:0:1:1:1:1:1", "2001:db8:0:1:1:1:1:1/128", 6, true),
                Arguments.of("2001:DB8:0000:0000:0000:0000:0000:0001/128", "2001:db8::1/128", 6, true));
    }

    @ParameterizedTest(name = "[{index}] {0}")
    @MethodSource("validCidrs")
    void validCidrsParseToCanonicalForm(String text, String canonical, int version, boolean singleHost) {
        Cidr c = Cidr.parse(text);
        assertEquals(canonical, c.toString());
        assertEquals(version, c.version());
        assertEquals(version == 4, c.isIpv4());
        assertEquals(singleHost, c.isSingleHost());
        assertEquals(c, Cidr.parse(canonical));
    }

    @Test
    void cidrContainmentAndOverlapStayWithinOneFamily() {
        Cidr ten = Cidr.parse("10.0.0.0/8");
        Cidr sub = Cidr.parse("10.1.0.0/16");
        Cidr other = Cidr.parse("11.0.0.0/8");
        assertTrue(ten.contains(sub));
        assertFalse(sub.contains(ten));
        assertTrue(ten.overlaps(sub) && sub.overlaps(ten));
        assertFalse(ten.overlaps(other));
        assertTrue(Cidr.parse("0.0.0.0/0").contains(ten));
        assertFalse(Cidr.parse("::/0").overlaps(ten), "an IPv6 network never contains an IPv4 one");
    }

    static Stream<Arguments> malformedDomains() {
        return Stream.of(
                Arguments.of("*", "domain '*' is not allowed: use a default-allow egress policy to allow every host"),
                Arguments.of("*.", "domain '*' is not allowed: use a default-allow egress policy to allow every host"),
                Arguments.of("api.*.example.com",
                        "domain 'api.*.example.com': a wildcard is only allowed as the whole first label ('*.example.com')"),
                Arguments.of("example.*",
                        "domain 'example.*': a wildcard is only allowed as the whole first label ('*.example.com')"),
                Arguments.of("*example.com",
                        "domain '*example.com': a wildcard is only allowed as the whole first label ('*.example.com')"),
                Arguments.of("*.*.example.com",
                        "domain '*.*.example.com': a wildcard is only allowed as the whole first label ('*.example.com')"),
                Arguments.of("10.0.0.1", "domain '10.0.0.1' looks like an IP address: put addresses in a CIDR rule"),
                Arguments.of("*.10.0.0.1", "domain '*.10.0.0.1' looks like an IP address: put addresses in a CIDR rule"),
                Arguments.of("::1", "domain '::1': give a host name without scheme, port or path"),
                Arguments.of("[2001:db8::1]", "domain '[2001:db8::1]': give a host name without scheme, port or path"),
                Arguments.of("https://example.com", "domain 'https://example.com': give a host name without scheme, port or path"),
                Arguments.of("example.com:443", "domain 'example.com:443': give a host name without scheme, port or path"),
                Arguments.of("example.com/path", "domain 'example.com/path': give a host name without scheme, port or path"),
                Arguments.of("localhost", "domain 'localhost' needs at least two labels (a top-level domain alone is too broad): " + DomainPattern.WHAT),
                Arguments.of("*.com", "domain '*.com' needs at least two labels (a top-level domain alone is too broad): " + DomainPattern.WHAT),
                Arguments.of("exa_mple.com", "domain 'exa_mple.com' is not a host name: " + DomainPattern.WHAT),
                Arguments.of("-api.example.com", "domain '-api.example.com': label '-api' is not a valid host name label: " + DomainPattern.WHAT),
                Arguments.of("api-.example.com", "domain 'api-.example.com': label 'api-' is not a valid host name label: " + DomainPattern.WHAT),
                Arguments.of("a..example.com", "domain 'a..example.com': label '' is not a valid host name label: " + DomainPattern.WHAT),
                Arguments.of("bücher.de", "domain 'bücher.de' is not a host name: " + DomainPattern.WHAT + "; write an internationalised name in its ASCII form ('xn--...')"),
                Arguments.of("a b.com", "domain 'a b.com' is not a host name: " + DomainPattern.WHAT),
                Arguments.of("not a domain!", "domain 'not a domain!' is not a host name: " + DomainPattern.WHAT),
                Arguments.of("a".repeat(64) + ".com",
                        "domain '" + "a".repeat(64) + ".com': label '" + "a".repeat(64) + "' is not a valid host name label: " + DomainPattern.WHAT),
                Arguments.of("a.".repeat(127) + "com",
                        "domain '" + "a.".repeat(127) + "com' is longer than 253 characters"),
                Arguments.of("", "domain must not be empty"),
                Arguments.of(" ", "domain must not be empty"));
    }

    @ParameterizedTest(name = "[{index}] {0}")
    @MethodSource("malformedDomains")
    void malformedDomainIsRefusedWithExactMessage(String text, String message) {
        InvalidPolicyException e = assertThrows(InvalidPolicyException.class, () -> DomainPattern.parse(text));
        assertEquals(message, e.getMessage());
    }

    @Test
    void aMalformedDomainIsExplainedNotJustRefused() {
        String m = assertThrows(InvalidPolicyException.class, () -> DomainPattern.parse("not a domain!")).getMessage();
        assertTrue(m.contains("a domain pattern is a host name such as 'api.example.com'") && m.contains("'*.example.com'"), m);
    }

    @Test
    void domainsAreCanonicalAndWildcardsMatchSubdomainsOnly() {
        DomainPattern exact = DomainPattern.parse("API.Example.COM.");
        assertEquals("api.example.com", exact.toString());
        assertFalse(exact.isWildcard());
        assertTrue(exact.matches("api.example.com."));
        assertFalse(exact.matches("x.api.example.com"));

        DomainPattern wild = DomainPattern.parse("*.example.com");
        assertTrue(wild.isWildcard());
        assertEquals("example.com", wild.baseDomain());
        assertTrue(wild.matches("a.example.com"));
        assertTrue(wild.matches("a.b.example.com"));
        assertFalse(wild.matches("example.com"), "*.x means subdomains only");
        assertFalse(wild.matches("badexample.com"));
    }

    @Test
    void coversIsTrueExactlyWhenEveryMatchedHostIsMatched() {
        DomainPattern wild = DomainPattern.parse("*.example.com");
        assertTrue(wild.covers(DomainPattern.parse("api.example.com")));
        assertTrue(wild.covers(DomainPattern.parse("*.api.example.com")));
        assertTrue(wild.covers(DomainPattern.parse("*.example.com")), "a pattern covers itself");
        assertFalse(wild.covers(DomainPattern.parse("example.com")));
        assertFalse(wild.covers(DomainPattern.parse("*.badexample.com")));
        DomainPattern exact = DomainPattern.parse("example.com");
        assertTrue(exact.covers(DomainPattern.parse("example.com")));
        assertFalse(exact.covers(DomainPattern.parse("api.example.com")));
        assertFalse(exact.covers(DomainPattern.parse("*.example.com")));
    }

    static Stream<Arguments> invalidPolicies() {
        SecretRef token = SecretRef.of("token", () -> "s3cr3t-value");
        return Stream.of(
                Arguments.of((Supplier<EgressPolicy>) () -> EgressPolicy.builder()
                                .allowDomain("example.com").headerRule("api.other.com", "Authorization", token).build(),
                        List.of("header rule for 'api.other.com' names a host that no allowed domain covers")),
                Arguments.of((Supplier<EgressPolicy>) () -> EgressPolicy.builder()
                                .allowDomain("*.example.com").headerRule("example.com", "Authorization", token).build(),
                        List.of("header rule for 'example.com' names a host that no allowed domain covers")),
                Arguments.of((Supplier<EgressPolicy>) () -> EgressPolicy.builder()
                                .headerRule("api.example.com", "X-Key", token).build(),
                        List.of("header rule for 'api.example.com' names a host that no allowed domain covers")),
                Arguments.of((Supplier<EgressPolicy>) () -> EgressPolicy.builder()
                                .allowDomain("api.example.com").headerRule("api.example.com", "Bad Header", token).build(),
                        List.of("header rule for 'api.example.com': 'Bad Header' is not a valid header name")),
                Arguments.of((Supplier<EgressPolicy>) () -> EgressPolicy.builder()
                                .allowDomain("api.example.com")
                                .headerRule(HeaderRule.of("api.example.com", "Authorization", token, "Bearer\r\nX: "))
                                .build(),
                        List.of("header rule for 'api.example.com': the value prefix has control characters")),
                Arguments.of((Supplier<EgressPolicy>) () -> EgressPolicy.builder(EgressPolicy.Default.ALLOW)
                                .allowDomain("example.com").allowCidr("10.0.0.0/8").build(),
                        List.of("allowed domain 'example.com' has no effect under default allow; use default deny with an allow list",
                                "allowed CIDR 10.0.0.0/8 has no effect under default allow; use default deny with an allow list")),
                Arguments.of((Supplier<EgressPolicy>) () -> EgressPolicy.builder()
                                .allowCidr("10.1.0.0/16").denyCidr("10.0.0.0/8").build(),
                        List.of("allowed CIDR 10.1.0.0/16 lies entirely inside denied CIDR 10.0.0.0/8 and would have no effect (deny wins)")),
                // every problem is reported at once, in the order the rules were given
                Arguments.of((Supplier<EgressPolicy>) () -> EgressPolicy.builder()
                                .allowDomain("*").allowDomain("api.*.example.com").allowDomain("10.0.0.1")
                                .allowCidr("10.0.0.1/8").denyCidr("2001:db8::/129").build(),
                        List.of("domain '*' is not allowed: use a default-allow egress policy to allow every host",
                                "domain 'api.*.example.com': a wildcard is only allowed as the whole first label ('*.example.com')",
                                "domain '10.0.0.1' looks like an IP address: put addresses in a CIDR rule",
                                "CIDR '10.0.0.1/8' has host bits set beyond /8 (did you mean 10.0.0.0/8?)",
                                "CIDR '2001:db8::/129': prefix /129 is out of range 0..128")));
    }

    @ParameterizedTest(name = "[{index}] {1}")
    @MethodSource("invalidPolicies")
    void invalidPolicyListsEveryProblem(Supplier<EgressPolicy> build, List<String> problems) {
        InvalidPolicyException e = assertThrows(InvalidPolicyException.class, build::get);
        assertEquals(problems, e.problems());
        String expected = problems.size() == 1 ? problems.get(0) : "invalid policy: " + String.join("; ", problems);
        assertEquals(expected, e.getMessage());
        assertFalse(e.getMessage().contains("s3cr3t-value"));
    }

    @Test
    void validPoliciesBuild() {
        SecretRef token = SecretRef.of("token", () -> "s3cr3t-value");
        EgressPolicy p = EgressPolicy.builder()
                .allowDomain("*.example.com")
                .headerRule("api.example.com", "Authorization", token)
                .headerRule("*.example.com", "X-Key", token)
                .allowCidr("192.0.2.0/24")
                .denyCidr("192.0.2.128/25")
                .build();
        assertEquals(1, p.allowedDomains().size());
        assertEquals(2, p.headerRules().size());
        assertTrue(p.allowsHost("api.example.com"));
        assertFalse(p.allowsHost("example.com"));
        assertFalse(p.isDenyAll());
        assertFalse(p.isAllowAll());
        // header rules are not checked for coverage under default allow: every host is allowed
        EgressPolicy allow = EgressPolicy.builder(EgressPolicy.Default.ALLOW)
                .headerRule("api.example.com", "Authorization", token).denyCidr("10.0.0.0/8").build();
        assertTrue(allow.allowsHost("anything.example.org"));
        assertTrue(EgressPolicy.denyAll().isDenyAll());
        assertTrue(EgressPolicy.allowAll().isAllowAll());
        assertEquals(EgressPolicy.allowOnly("example.com"), EgressPolicy.builder().allowDomain("EXAMPLE.com.").build());
    }

    @Test
    void secretValuesNeverAppearInToStringOrMessages() {
        SecretRef token = SecretRef.of("openai-key", () -> "sk-very-secret");
        HeaderRule rule = HeaderRule.of("api.openai.com", "Authorization", token, "Bearer ");
        EgressPolicy p = EgressPolicy.builder().allowDomain("api.openai.com").headerRule(rule).build();
        assertEquals("HeaderRule[api.openai.com Authorization: Bearer SecretRef[openai-key]]", rule.toString());
        assertFalse(p.toString().contains("sk-very-secret"));
        assertEquals("sk-very-secret", token.resolve());
        Capabilities caps = Capabilities.builder("x").egress(Capabilities.Egress.DEFAULT_DENY_WITH_RULES,
                Capabilities.Egress.ALLOW_DOMAINS).build();
        UnsupportedPolicyException e = assertThrows(UnsupportedPolicyException.class,
                () -> caps.check(p, Limits.defaults()));
        assertFalse(e.getMessage().contains("sk-very-secret"));
    }

    static Stream<Arguments> invalidLimits() {
        return Stream.of(
                Arguments.of((Supplier<Limits>) () -> Limits.builder().lifetime(Duration.ZERO).build(),
                        List.of("lifetime must be positive, was PT0S")),
                Arguments.of((Supplier<Limits>) () -> Limits.builder().lifetime(Duration.ofSeconds(-5)).build(),
                        List.of("lifetime must be positive, was PT-5S")),
                Arguments.of((Supplier<Limits>) () -> Limits.builder().vcpus(0).build(),
                        List.of("vcpus must be positive, was 0")),
                Arguments.of((Supplier<Limits>) () -> Limits.builder().memoryMib(-1).build(),
                        List.of("memoryMib must be positive, was -1")),
                Arguments.of((Supplier<Limits>) () -> Limits.builder().diskMib(0).build(),
                        List.of("diskMib must be positive, was 0")),
                Arguments.of((Supplier<Limits>) () -> Limits.builder().lifetime(Duration.ofNanos(-1)).vcpus(-2)
                                .memoryMib(0).diskMib(-3).build(),
                        List.of("lifetime must be positive, was PT-0.000000001S", "vcpus must be positive, was -2",
                                "memoryMib must be positive, was 0", "diskMib must be positive, was -3")));
    }

    @ParameterizedTest(name = "[{index}] {1}")
    @MethodSource("invalidLimits")
    void invalidLimitsListEveryProblem(Supplier<Limits> build, List<String> problems) {
        InvalidPolicyException e = assertThrows(InvalidPolicyException.class, build::get);
        assertEquals(problems, e.problems());
    }

    @Test
    void validLimitsKeepTheirValues() {
        Limits l = Limits.builder().lifetime(Duration.ofNanos(1)).vcpus(1).memoryMib(512).diskMib(1).build();
        assertEquals(Duration.ofNanos(1), l.lifetime().orElseThrow());
        assertEquals(512, l.memoryMib().getAsInt());
        assertEquals(l, l.toBuilder().build());
        assertTrue(Limits.defaults().lifetime().isEmpty());
        assertTrue(Limits.defaults().vcpus().isEmpty());
    }
}
