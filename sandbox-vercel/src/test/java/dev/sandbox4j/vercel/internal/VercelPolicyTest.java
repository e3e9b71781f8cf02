package dev.sandbox4j.vercel.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.sandbox4j.http.HttpTransport;
import dev.sandbox4j.policy.Capabilities;
import dev.sandbox4j.policy.EgressPolicy;
import dev.sandbox4j.policy.HeaderRule;
import dev.sandbox4j.policy.Limits;
import dev.sandbox4j.policy.SecretRef;
import java.time.Duration;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** The translation of every accepted policy form, and every refusal, as a table. */
class VercelPolicyTest {
    private static final Capabilities CAPS = VercelPolicy.capabilities();
    private static final SecretRef KEY = SecretRef.of("openai", () -> "sk-live-123456");
    private static final SecretRef OTHER = SecretRef.of("other", () -> "tok-abcdef");

    static Stream<Arguments> accepted() {
        return Stream.of(
                row("deny-all", EgressPolicy.denyAll(), "{'mode':'deny-all'}"),
                row("allow-all", EgressPolicy.allowAll(), "{'mode':'allow-all'}"),
                row("deny CIDRs under default deny are moot: deny-all",
                        EgressPolicy.builder().denyCidr("10.0.0.0/8").build(), "{'mode':'deny-all'}"),
                row("exact and wildcard domains (list form)",
                        EgressPolicy.allowOnly("registry.npmjs.org", "*.github.com"),
                        "{'allow':['registry.npmjs.org','*.github.com']}"),
                row("domains with allowed and denied CIDRs (deny wins over both)",
                        EgressPolicy.builder().allowDomain("registry.npmjs.org").allowDomain("*.github.com")
                                .allowCidr("10.0.0.0/8").denyCidr("10.1.0.0/16").build(),
                        "{'allow':['registry.npmjs.org','*.github.com'],"
                                + "'subnets':{'allow':['10.0.0.0/8'],'deny':['10.1.0.0/16']}}"),
                row("CIDRs only, IPv4 and IPv6",
                        EgressPolicy.builder().allowCidr("10.0.0.0/8").allowCidr("2001:db8::/32").build(),
                        "{'subnets':{'allow':['10.0.0.0/8','2001:db8::/32']}}"),
                row("default allow with denied CIDRs: the '*' key and subnets.deny",
                        EgressPolicy.builder(EgressPolicy.Default.ALLOW).denyCidr("169.254.0.0/16")
                                .denyCidr("fd00::/8").build(),
                        "{'allow':{'*':[]},'subnets':{'deny':['169.254.0.0/16','fd00::/8']}}"),
                row("a header rule: record form, the secret in a transform",
                        EgressPolicy.builder().allowDomain("api.openai.com")
                                .headerRule(HeaderRule.of("api.openai.com", "Authorization", KEY, "Bearer ")).build(),
                        "{'allow':{'api.openai.com':[{'transform':[{'headers':{'Authorization':'Bearer sk-live-123456'}}]}]}}"),
                row("two headers on one host: one rule; other hosts stay plain",
                        EgressPolicy.builder().allowDomain("api.openai.com").allowDomain("pypi.org")
                                .headerRule(HeaderRule.of("api.openai.com", "Authorization", KEY, "Bearer "))
                                .headerRule(HeaderRule.of("api.openai.com", "OpenAI-Organization", OTHER)).build(),
                        "{'allow':{'api.openai.com':[{'transform':[{'headers':{'Authorization':'Bearer sk-live-123456',"
                                + "'OpenAI-Organization':'tok-abcdef'}}]}],'pypi.org':[]}}"),
                row("a header rule on a host a wildcard allows",
                        EgressPolicy.builder().allowDomain("*.example.com")
                                .headerRule(HeaderRule.of("api.example.com", "x-api-key", KEY)).build(),
                        "{'allow':{'*.example.com':[],'api.example.com':[{'transform':[{'headers':{'x-api-key':'sk-live-123456'}}]}]}}"),
                row("header rules with CIDRs",
                        EgressPolicy.builder().allowDomain("api.example.com").allowCidr("192.0.2.0/24")
                                .denyCidr("192.0.2.128/25")
                                .headerRule(HeaderRule.of("api.example.com", "x-api-key", KEY)).build(),
                        "{'allow':{'api.example.com':[{'transform':[{'headers':{'x-api-key':'sk-live-123456'}}]}]},"
                                + "'subnets':{'allow':['192.0.2.0/24'],'deny':['192.0.2.128/25']}}"),
                row("default allow with a header rule: '*' keeps the rest open",
                        EgressPolicy.builder(EgressPolicy.Default.ALLOW)
                                .headerRule(HeaderRule.of("api.example.com", "x-api-key", KEY)).build(),
                        "{'allow':{'*':[],'api.example.com':[{'transform':[{'headers':{'x-api-key':'sk-live-123456'}}]}]}}"),
                // scopes: the recording's shape (vercel.md 5.1, form 4), match {method, path.startsWith}
                row("a scoped rule: match with methods and a path prefix",
                        EgressPolicy.builder().allowDomain("api.example.com").allowDomain("registry.npmjs.org")
                                .headerRule(HeaderRule.builder("api.example.com", "Authorization", KEY).valuePrefix("Bearer ")
                                        .methods("get", "POST").pathPrefix("/v1/").build()).build(),
                        "{'allow':{'api.example.com':[{'match':{'method':['GET','POST'],'path':{'startsWith':'/v1/'}},"
                                + "'transform':[{'headers':{'Authorization':'Bearer sk-live-123456'}}]}],'registry.npmjs.org':[]}}"),
                row("a path-only scope and a method-only scope on two hosts",
                        EgressPolicy.builder().allowDomain("a.example.com").allowDomain("b.example.com")
                                .headerRule(HeaderRule.builder("a.example.com", "x-api-key", KEY).pathPrefix("/v2/").build())
                                .headerRule(HeaderRule.builder("b.example.com", "x-api-key", KEY).methods("GET").build()).build(),
                        "{'allow':{'a.example.com':[{'match':{'path':{'startsWith':'/v2/'}},'transform':[{'headers':"
                                + "{'x-api-key':'sk-live-123456'}}]}],'b.example.com':[{'match':{'method':['GET']},"
                                + "'transform':[{'headers':{'x-api-key':'sk-live-123456'}}]}]}}"),
                row("two rules with one scope: one transform",
                        EgressPolicy.builder().allowDomain("api.example.com")
                                .headerRule(HeaderRule.builder("api.example.com", "A", KEY).methods("POST").pathPrefix("/v1/").build())
                                .headerRule(HeaderRule.builder("api.example.com", "B", OTHER).methods("post").pathPrefix("/v1/").build())
                                .build(),
                        "{'allow':{'api.example.com':[{'match':{'method':['POST'],'path':{'startsWith':'/v1/'}},"
                                + "'transform':[{'headers':{'A':'sk-live-123456','B':'tok-abcdef'}}]}]}}"),
                row("an unscoped rule before a scoped one: the scoped rule goes first, with both headers, so nothing is shadowed",
                        EgressPolicy.builder().allowDomain("api.example.com")
                                .headerRule(HeaderRule.of("api.example.com", "A", KEY))
                                .headerRule(HeaderRule.builder("api.example.com", "B", OTHER).pathPrefix("/v1/").build()).build(),
                        "{'allow':{'api.example.com':[{'match':{'path':{'startsWith':'/v1/'}},"
                                + "'transform':[{'headers':{'A':'sk-live-123456','B':'tok-abcdef'}}]},"
                                + "{'transform':[{'headers':{'A':'sk-live-123456'}}]}]}}"),
                row("one header, two disjoint scopes (a read token, a write token): two rules",
                        EgressPolicy.builder().allowDomain("api.example.com")
                                .headerRule(HeaderRule.builder("api.example.com", "Authorization", KEY).methods("GET").build())
                                .headerRule(HeaderRule.builder("api.example.com", "Authorization", OTHER).methods("POST", "PUT").build())
                                .build(),
                        "{'allow':{'api.example.com':[{'match':{'method':['GET']},'transform':[{'headers':{'Authorization':'sk-live-123456'}}]},"
                                + "{'match':{'method':['POST','PUT']},'transform':[{'headers':{'Authorization':'tok-abcdef'}}]}]}}"),
                row("overlapping scopes: their intersection first, with the headers of both",
                        EgressPolicy.builder().allowDomain("api.example.com")
                                .headerRule(HeaderRule.builder("api.example.com", "A", KEY).methods("GET").build())
                                .headerRule(HeaderRule.builder("api.example.com", "B", OTHER).pathPrefix("/v1/").build()).build(),
                        "{'allow':{'api.example.com':["
                                + "{'match':{'method':['GET'],'path':{'startsWith':'/v1/'}},'transform':[{'headers':{'A':'sk-live-123456','B':'tok-abcdef'}}]},"
                                + "{'match':{'path':{'startsWith':'/v1/'}},'transform':[{'headers':{'B':'tok-abcdef'}}]},"
                                + "{'match':{'method':['GET']},'transform':[{'headers':{'A':'sk-live-123456'}}]}]}}"),
                row("nested path prefixes: the longer first",
                        EgressPolicy.builder().allowDomain("api.example.com")
                                .headerRule(HeaderRule.builder("api.example.com", "A", KEY).pathPrefix("/v1/").build())
                                .headerRule(HeaderRule.builder("api.example.com", "B", OTHER).pathPrefix("/v1/admin/").build()).build(),
                        "{'allow':{'api.example.com':["
                                + "{'match':{'path':{'startsWith':'/v1/admin/'}},'transform':[{'headers':{'A':'sk-live-123456','B':'tok-abcdef'}}]},"
                                + "{'match':{'path':{'startsWith':'/v1/'}},'transform':[{'headers':{'A':'sk-live-123456'}}]}]}}"));
    }

    private static Arguments row(String name, EgressPolicy policy, String json) {
        return Arguments.of(name, policy, json.replace('\'', '"'));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("accepted")
    void acceptedFormsTranslateExactly(String name, EgressPolicy policy, String expected) throws Exception {
        assertEquals(List.of(), CAPS.violations(policy, Limits.defaults()), name);
        JsonNode actual = VercelPolicy.toJson(policy, SecretRef::resolve);
        assertEquals(HttpTransport.JSON.readTree(expected), actual, name);
    }

    static Stream<Arguments> refused() {
        return Stream.of(
                Arguments.of("3 vCPUs", EgressPolicy.denyAll(), Limits.builder().vcpus(3).build(),
                        "3 vCPUs (vercel takes 1 or an even number)"),
                Arguments.of("64 vCPUs", EgressPolicy.denyAll(), Limits.builder().vcpus(64).build(),
                        "64 vCPUs (vercel takes at most 32)"),
                Arguments.of("a 25 h lifetime", EgressPolicy.denyAll(), Limits.builder().lifetime(Duration.ofHours(25)).build(),
                        "a lifetime of PT25H (vercel sessions last at most 24 hours)"),
                Arguments.of("a memory limit (fixed at 2 GB per vCPU)", EgressPolicy.denyAll(),
                        Limits.builder().memoryMib(4096).build(), "a memory limit (vercel cannot set one)"),
                Arguments.of("a disk limit", EgressPolicy.denyAll(), Limits.builder().diskMib(1000).build(),
                        "a disk limit (vercel cannot set one)"),
                Arguments.of("a Host header rule",
                        EgressPolicy.builder().allowDomain("api.example.com")
                                .headerRule(HeaderRule.of("api.example.com", "Host", KEY)).build(), Limits.defaults(),
                        "header rule HeaderRule[api.example.com Host: SecretRef[openai]] (vercel's proxy cannot set the "
                                + "connection-level header 'Host' exactly)"),
                Arguments.of("a Transfer-Encoding header rule",
                        EgressPolicy.builder().allowDomain("api.example.com")
                                .headerRule(HeaderRule.of("api.example.com", "transfer-encoding", KEY)).build(),
                        Limits.defaults(), "header rule HeaderRule[api.example.com transfer-encoding: SecretRef[openai]] "
                                + "(vercel's proxy cannot set the connection-level header 'transfer-encoding' exactly)"),
                Arguments.of("two values for one header on one host",
                        EgressPolicy.builder().allowDomain("api.example.com")
                                .headerRule(HeaderRule.of("api.example.com", "Authorization", KEY))
                                .headerRule(HeaderRule.of("api.example.com", "authorization", OTHER)).build(),
                        Limits.defaults(), "two header rules set 'authorization' for 'api.example.com' on requests both"
                                + " apply to (which value vercel sends would depend on rule order; scope them apart)"),
                Arguments.of("two values for one header where the scopes overlap",
                        EgressPolicy.builder().allowDomain("api.example.com")
                                .headerRule(HeaderRule.builder("api.example.com", "Authorization", KEY).methods("GET", "POST").build())
                                .headerRule(HeaderRule.builder("api.example.com", "Authorization", OTHER).pathPrefix("/v1/").build())
                                .build(),
                        Limits.defaults(), "two header rules set 'Authorization' for 'api.example.com' on requests both"
                                + " apply to (which value vercel sends would depend on rule order; scope them apart)"),
                Arguments.of("more scopes on one host than sandbox4j sends", manyScopes(VercelPolicy.MAX_RULES_PER_HOST + 1),
                        Limits.defaults(), "header rules for 'api.example.com' whose scopes and their overlaps need more"
                                + " than 32 vercel rules (sandbox4j sends at most 32 per host)"),
                Arguments.of("overlaps past the bound", overlapping(6), Limits.defaults(), "header rules for 'api.example.com'"
                        + " whose scopes and their overlaps need more than 32 vercel rules (sandbox4j sends at most 32 per host)"));
    }

    private static EgressPolicy manyScopes(int n) {
        EgressPolicy.Builder b = EgressPolicy.builder().allowDomain("api.example.com");
        for (int i = 0; i < n; i++) {
            b.headerRule(HeaderRule.builder("api.example.com", "X-Key", KEY).pathPrefix("/p" + i + "/").build());
        }
        return b.build();
    }

    /** {@code n} rules whose method sets all overlap differently: their intersections multiply. */
    private static EgressPolicy overlapping(int n) {
        EgressPolicy.Builder b = EgressPolicy.builder().allowDomain("api.example.com");
        String[] methods = {"GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS", "TRACE"};
        for (int i = 0; i < n; i++) {
            List<String> m = new java.util.ArrayList<>(List.of(methods));
            m.remove(i);
            b.headerRule(HeaderRule.builder("api.example.com", "X-Key-" + i, KEY).methods(m).build());
        }
        return b.build();
    }

    @Test
    void overlappingScopesUnderTheBoundTranslateToEveryIntersection() throws Exception {
        // 3 method sets, each missing one method: 3 scopes, 3 pairwise and 1 triple intersection
        EgressPolicy p = overlapping(3);
        assertEquals(List.of(), CAPS.violations(p, Limits.defaults()));
        JsonNode rules = VercelPolicy.toJson(p, SecretRef::resolve).path("allow").path("api.example.com");
        assertEquals(7, rules.size(), rules.toString());
        // the first is the triple: all three headers, on the methods none of them lacks
        assertEquals(HttpTransport.JSON.readTree("{\"method\":[\"PATCH\",\"DELETE\",\"HEAD\",\"OPTIONS\",\"TRACE\"]}"),
                rules.get(0).path("match"));
        assertEquals(3, rules.get(0).path("transform").get(0).path("headers").size());
        assertEquals(1, rules.get(6).path("transform").get(0).path("headers").size());
    }

    @Test
    void asManyScopesAsTheBoundAreSent() {
        EgressPolicy p = manyScopes(VercelPolicy.MAX_RULES_PER_HOST);
        assertEquals(List.of(), CAPS.violations(p, Limits.defaults()));
        assertEquals(VercelPolicy.MAX_RULES_PER_HOST, VercelPolicy.toJson(p, SecretRef::resolve).path("allow").path("api.example.com").size());
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("refused")
    void refusedBeforeAnyCall(String name, EgressPolicy policy, Limits limits, String violation) {
        assertEquals(List.of(violation), CAPS.violations(policy, limits), name);
    }

    @Test
    void ipv6IsWrittenInRfc5952Form() {
        String[][] cases = {
                {"2001:db8::/32", "2001:db8::/32"}, {"::/0", "::/0"}, {"fd00::/8", "fd00::/8"},
                {"2001:db8:0:1:0:0:0:0/64", "2001:db8:0:1::/64"}, {"2001:0:0:1:0:0:0:1/128", "2001:0:0:1::1/128"},
                {"1:0:2:3:4:5:6:7/128", "1:0:2:3:4:5:6:7/128"}, {"::1/128", "::1/128"}, {"fe80::/10", "fe80::/10"},
                {"10.0.0.0/8", "10.0.0.0/8"}};
        for (String[] c : cases) {
            assertEquals(c[1], VercelPolicy.cidr(dev.sandbox4j.policy.Cidr.parse(c[0])), c[0]);
        }
    }

    @Test
    void acceptedLimits() {
        for (int n : new int[] {1, 2, 4, 8, 32}) {
            assertEquals(List.of(), CAPS.violations(EgressPolicy.denyAll(), Limits.builder().vcpus(n).build()), n + " vCPUs");
        }
        assertEquals(List.of(), CAPS.violations(EgressPolicy.denyAll(),
                Limits.builder().lifetime(Duration.ofHours(24)).build()));
    }

    @Test
    void capabilitiesSayWhatVercelAddsOnItsOwn() {
        assertTrue(CAPS.supports(Capabilities.Egress.LIVE_UPDATE));
        assertTrue(CAPS.supports(Capabilities.Egress.HEADER_RULES));
        assertTrue(CAPS.supports(Capabilities.Egress.HEADER_RULE_SCOPES));
        assertTrue(CAPS.implicitAllowances().get(0).contains("any port"), CAPS.implicitAllowances().toString());
        assertFalse(CAPS.limits().contains(Capabilities.Limit.MEMORY));
    }

    @Test
    void secretsAreResolvedThroughTheCallerOnly() {
        EgressPolicy p = EgressPolicy.builder().allowDomain("api.example.com")
                .headerRule(HeaderRule.of("api.example.com", "x-api-key", KEY)).build();
        JsonNode json = VercelPolicy.toJson(p, ref -> "resolved:" + ref.name());
        assertEquals("resolved:openai",
                json.path("allow").path("api.example.com").get(0).path("transform").get(0).path("headers")
                        .path("x-api-key").asText());
    }

    @Test
    void aReportedPolicyWeakerThanTheRequestIsNamed() throws Exception {
        JsonNode allowAll = HttpTransport.JSON.readTree("{\"mode\":\"allow-all\"}");
        JsonNode star = HttpTransport.JSON.readTree("{\"mode\":\"custom\",\"allowedDomains\":[\"*\",\"pypi.org\"]}");
        JsonNode same = HttpTransport.JSON.readTree("{\"mode\":\"custom\",\"allowedDomains\":[\"pypi.org\"]}");
        EgressPolicy denies = EgressPolicy.builder(EgressPolicy.Default.ALLOW).denyCidr("203.0.113.0/24").build();
        EgressPolicy pypi = EgressPolicy.allowOnly("pypi.org");
        // allow-all reported for a default-allow request with denies: the denies were dropped
        assertTrue(VercelPolicy.weakerThanRequested(denies, allowAll) != null, "denies dropped");
        assertTrue(VercelPolicy.weakerThanRequested(pypi, allowAll) != null, "allow-all for an allow list");
        // '*' reported in the allowed domains of a default-deny request opens everything
        assertTrue(VercelPolicy.weakerThanRequested(pypi, star) != null, "'*' for an allow list");
        assertEquals(null, VercelPolicy.weakerThanRequested(pypi, same));
        assertEquals(null, VercelPolicy.weakerThanRequested(EgressPolicy.allowAll(), allowAll));
        assertEquals(null, VercelPolicy.weakerThanRequested(denies, star), "'*' is what default allow sends");
    }
}
