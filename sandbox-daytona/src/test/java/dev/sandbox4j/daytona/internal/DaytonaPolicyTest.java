package dev.sandbox4j.daytona.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.sandbox4j.http.HttpTransport;
import dev.sandbox4j.policy.Capabilities;
import dev.sandbox4j.policy.EgressPolicy;
import dev.sandbox4j.policy.HeaderRule;
import dev.sandbox4j.policy.Limits;
import dev.sandbox4j.policy.SecretRef;
import dev.sandbox4j.policy.UnsupportedPolicyException;
import java.util.List;
import java.util.function.Supplier;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/** The policy translation as a table: each policy, the one Daytona field it becomes, or why it is refused. */
class DaytonaPolicyTest {

    private record Row(String name, Supplier<EgressPolicy> policy, String field, String refusal) {
    }

    private static final List<Row> TABLE = List.of(
            new Row("deny-all", EgressPolicy::denyAll, "{\"networkBlockAll\":true}", null),
            new Row("allow-all", EgressPolicy::allowAll, "{}", null),
            new Row("IPv4 CIDRs", () -> EgressPolicy.builder().allowCidr("1.1.1.1").allowCidr("8.8.8.0/24").build(),
                    "{\"networkAllowList\":\"1.1.1.1/32,8.8.8.0/24\"}", null),
            new Row("ten CIDRs", () -> cidrs(10), "{\"networkAllowList\":\"" + cidrList(10) + "\"}", null),
            new Row("domains, exact and wildcard", () -> EgressPolicy.allowOnly("pypi.org", "*.pythonhosted.org"),
                    "{\"domainAllowList\":\"pypi.org,*.pythonhosted.org\"}", null),
            new Row("upper case domain", () -> EgressPolicy.allowOnly("PyPI.org."), "{\"domainAllowList\":\"pypi.org\"}", null),
            new Row("ten domains", () -> domains(10), "{\"domainAllowList\":\"" + domainList(10) + "\"}", null),
            new Row("eleven CIDRs", () -> cidrs(11), null, "11 allowed CIDRs (daytona takes at most 10)"),
            new Row("eleven domains", () -> domains(11), null, "11 allowed domains (daytona takes at most 10)"),
            new Row("domains with CIDRs", () -> EgressPolicy.builder().allowDomain("pypi.org").allowCidr("1.1.1.1/32").build(),
                    null, "allowed domains and allowed CIDRs in one policy (daytona cannot enforce DOMAINS_WITH_CIDRS)"),
            new Row("IPv6 CIDR", () -> EgressPolicy.builder().allowCidr("2001:db8::/32").build(),
                    null, "allowed CIDR 2001:db8::/32 (daytona cannot enforce ALLOW_CIDRS_IPV6)"),
            new Row("denied CIDR under allow", () -> EgressPolicy.builder(EgressPolicy.Default.ALLOW).denyCidr("10.0.0.0/8").build(),
                    null, "denied CIDR 10.0.0.0/8 (daytona cannot enforce DENY_CIDRS_IPV4)"),
            new Row("denied inside allowed", () -> EgressPolicy.builder().allowCidr("10.0.0.0/8").denyCidr("10.1.0.0/16").build(),
                    null, "denied CIDR 10.1.0.0/16 overlapping an allowed CIDR (deny must win) (daytona cannot enforce DENY_INSIDE_ALLOWED_CIDR)"),
            new Row("header rule", () -> EgressPolicy.builder().allowDomain("api.example.com")
                    .headerRule(HeaderRule.of("api.example.com", "Authorization", SecretRef.of("k", () -> "v"), "Bearer ")).build(),
                    null, "(daytona cannot enforce HEADER_RULES)"),
            new Row("numeric top-level label", () -> EgressPolicy.allowOnly("example.a1"),
                    null, "allowed domain 'example.a1' (Daytona accepts only domains whose last label is two or more letters)"),
            new Row("punycode top-level label", () -> EgressPolicy.allowOnly("xn--80ak6aa92e.xn--p1ai"),
                    null, "allowed domain 'xn--80ak6aa92e.xn--p1ai' (Daytona accepts only domains whose last label is two or more letters)"));

    @Test
    void table() {
        Capabilities caps = DaytonaPolicy.capabilities(false);
        for (Row row : TABLE) {
            EgressPolicy p = row.policy.get();
            List<String> v = caps.violations(p, Limits.defaults());
            ObjectNode body = HttpTransport.JSON.createObjectNode();
            if (row.field != null) {
                assertEquals(List.of(), v, row.name);
                DaytonaPolicy.putEgress(body, p);
                assertEquals(row.field, body.toString(), row.name);
            } else {
                assertTrue(v.stream().anyMatch(s -> s.contains(row.refusal)), row.name + ": " + v);
                // even called directly, translation never sends part of a policy
                assertThrows(UnsupportedPolicyException.class, () -> DaytonaPolicy.putEgress(body, p), row.name);
                assertEquals("{}", body.toString(), row.name);
            }
        }
    }

    @Test
    void resourcesOnlyFromAnImageAndInWholeGib() {
        Limits sized = Limits.builder().vcpus(2).memoryMib(4096).diskMib(10240).build();
        List<String> fromSnapshot = DaytonaPolicy.capabilities(false).violations(EgressPolicy.denyAll(), sized);
        assertTrue(fromSnapshot.stream().anyMatch(s -> s.contains("a vCPU limit (daytona cannot set one)")), fromSnapshot.toString());
        assertTrue(fromSnapshot.stream().anyMatch(s -> s.contains("only for sandboxes created from an image")), fromSnapshot.toString());
        assertEquals(List.of(), DaytonaPolicy.capabilities(true).violations(EgressPolicy.denyAll(), sized));
        List<String> odd = DaytonaPolicy.capabilities(true).violations(EgressPolicy.denyAll(),
                Limits.builder().memoryMib(1500).diskMib(3000).build());
        assertEquals(List.of("a memory limit of 1500 MiB (Daytona allocates whole GiB: use a multiple of 1024)",
                "a disk limit of 3000 MiB (Daytona allocates whole GiB: use a multiple of 1024)"), odd);
        assertEquals(List.of(), DaytonaPolicy.capabilities(false).violations(EgressPolicy.denyAll(),
                Limits.builder().lifetime(java.time.Duration.ofMinutes(3)).build()));
    }

    @Test
    void capabilitiesSayWhatDaytonaDoesNot() {
        Capabilities caps = DaytonaPolicy.capabilities(false);
        // the lock-down after setup is confirmed on the sandbox record (DaytonaWireTest); every exec is a
        // session command whose labelled log is followed as it is written (stderr apart, kept on a timeout)
        assertTrue(caps.supports(Capabilities.Egress.LIVE_UPDATE));
        assertTrue(caps.supports(Capabilities.Feature.STREAMING));
        assertTrue(caps.supports(Capabilities.Feature.SEPARATE_STDERR));
        assertTrue(caps.supports(Capabilities.Feature.OUTPUT_ON_TIMEOUT));
        assertTrue(DaytonaPolicy.capabilities(true).supports(Capabilities.Feature.SEPARATE_STDERR));
        assertTrue(DaytonaPolicy.capabilities(true).supports(Capabilities.Feature.OUTPUT_ON_TIMEOUT));
        assertTrue(caps.implicitAllowances().get(2).contains("network-settings"), caps.implicitAllowances().get(2));
        assertFalse(caps.supports(Capabilities.Egress.HEADER_RULES));
        assertTrue(caps.supports(Capabilities.Feature.SESSIONS));
        assertEquals(3, caps.implicitAllowances().size());
        assertTrue(caps.implicitAllowances().get(0).contains("essential services"));
    }

    private static EgressPolicy cidrs(int n) {
        EgressPolicy.Builder b = EgressPolicy.builder();
        IntStream.range(0, n).forEach(i -> b.allowCidr("10.0." + i + ".0/24"));
        return b.build();
    }

    private static String cidrList(int n) {
        return IntStream.range(0, n).mapToObj(i -> "10.0." + i + ".0/24").collect(Collectors.joining(","));
    }

    private static EgressPolicy domains(int n) {
        EgressPolicy.Builder b = EgressPolicy.builder();
        IntStream.range(0, n).forEach(i -> b.allowDomain("h" + i + ".example.com"));
        return b.build();
    }

    private static String domainList(int n) {
        return IntStream.range(0, n).mapToObj(i -> "h" + i + ".example.com").collect(Collectors.joining(","));
    }
}
