package dev.sandbox4j.modal.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sandbox4j.modal.internal.proto.ModalApi;
import dev.sandbox4j.policy.Capabilities;
import dev.sandbox4j.policy.EgressPolicy;
import dev.sandbox4j.policy.HeaderRule;
import dev.sandbox4j.policy.Limits;
import dev.sandbox4j.policy.SecretRef;
import dev.sandbox4j.policy.UnsupportedPolicyException;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The translation of egress and limits into Modal's fields, as a table. */
class ModalPolicyTest {
    private final Capabilities caps = ModalPolicy.capabilities();

    @Test
    void denyAllIsBlockedAndAllowAllIsOpen() {
        ModalApi.NetworkAccess deny = ModalPolicy.networkAccess(EgressPolicy.denyAll());
        assertEquals(ModalApi.NetworkAccess.NetworkAccessType.BLOCKED, deny.getNetworkAccessType());
        assertEquals(0, deny.getAllowedCidrsCount() + deny.getAllowedDomainsCount());
        assertEquals(ModalApi.NetworkAccess.NetworkAccessType.OPEN,
                ModalPolicy.networkAccess(EgressPolicy.allowAll()).getNetworkAccessType());
    }

    @Test
    void allowRulesAreAnAllowlistOfCidrsAndExactDomains() {
        EgressPolicy p = EgressPolicy.builder(EgressPolicy.Default.DENY)
                .allowCidr("151.101.0.0/16").allowCidr("198.51.100.7").allowDomain("pypi.org").build();
        ModalApi.NetworkAccess n = ModalPolicy.networkAccess(p);
        assertEquals(ModalApi.NetworkAccess.NetworkAccessType.ALLOWLIST, n.getNetworkAccessType());
        assertEquals(List.of("151.101.0.0/16", "198.51.100.7/32"), n.getAllowedCidrsList());
        assertEquals(List.of("pypi.org"), n.getAllowedDomainsList());
        assertTrue(caps.violations(p, Limits.defaults()).isEmpty());
    }

    @Test
    void whatModalCannotExpressIsRefused() {
        List<EgressPolicy> refused = List.of(
                EgressPolicy.allowOnly("*.pythonhosted.org"), // apex semantics of Modal's wildcard undocumented
                EgressPolicy.builder(EgressPolicy.Default.ALLOW).denyCidr("203.0.113.0/24").build(),
                EgressPolicy.builder(EgressPolicy.Default.DENY).allowCidr("10.0.0.0/8").denyCidr("10.1.0.0/16").build(),
                EgressPolicy.builder(EgressPolicy.Default.DENY).allowCidr("2001:db8::/32").build(),
                EgressPolicy.builder(EgressPolicy.Default.DENY).allowDomain("api.stripe.com")
                        .headerRule(HeaderRule.of("api.stripe.com", "Authorization", SecretRef.of("k", () -> "v"), "Bearer ")).build());
        for (EgressPolicy p : refused) {
            assertFalse(caps.violations(p, Limits.defaults()).isEmpty(), p.toString());
            assertThrows(UnsupportedPolicyException.class, () -> ModalPolicy.networkAccess(p), p.toString());
        }
        assertTrue(caps.supports(Capabilities.Egress.LIVE_UPDATE), "TaskSetNetworkAccess on the router");
        for (EgressPolicy p : refused) {
            assertThrows(UnsupportedPolicyException.class, () -> ModalPolicy.liveNetworkAccess(p), p.toString());
        }
        assertFalse(caps.supports(Capabilities.Egress.HEADER_RULES), "Modal has no credential brokering");
    }

    @Test
    void theLiveUpdateSendsOnlyAllowlistsAsTheSdksDo() {
        ModalApi.NetworkAccess deny = ModalPolicy.liveNetworkAccess(EgressPolicy.denyAll());
        assertEquals(ModalApi.NetworkAccess.NetworkAccessType.ALLOWLIST, deny.getNetworkAccessType());
        assertEquals(0, deny.getAllowedCidrsCount() + deny.getAllowedDomainsCount(), "an empty allowlist blocks everything");
        ModalApi.NetworkAccess all = ModalPolicy.liveNetworkAccess(EgressPolicy.allowAll());
        assertEquals(ModalApi.NetworkAccess.NetworkAccessType.ALLOWLIST, all.getNetworkAccessType());
        assertEquals(List.of("0.0.0.0/0"), all.getAllowedCidrsList());
        assertEquals(0, all.getAllowedDomainsCount());
        EgressPolicy rules = EgressPolicy.builder(EgressPolicy.Default.DENY).allowDomain("pypi.org").allowCidr("10.0.0.0/8").build();
        assertEquals(ModalPolicy.networkAccess(rules), ModalPolicy.liveNetworkAccess(rules));
    }

    @Test
    void domainsAreDeclaredStricterOnPorts() {
        assertTrue(caps.implicitAllowances().stream().anyMatch(s -> s.contains("443") && s.contains("SNI")));
    }

    @Test
    void limitsAreReservationAndCapAndLifetimesRoundUp() {
        assertNull(ModalPolicy.resources(Limits.defaults()));
        ModalApi.Resources r = ModalPolicy.resources(Limits.builder().vcpus(2).memoryMib(512).build());
        assertEquals(2000, r.getMilliCpu());
        assertEquals(2000, r.getMilliCpuMax());
        assertEquals(512, r.getMemoryMb());
        assertEquals(512, r.getMemoryMbMax());
        assertEquals(2, ModalPolicy.seconds(Duration.ofMillis(1001)));
        assertEquals(2, ModalPolicy.seconds(Duration.ofSeconds(1).plusNanos(1)));
        assertEquals(1, ModalPolicy.seconds(Duration.ofMillis(1)));
        assertEquals(600, ModalPolicy.seconds(Duration.ofSeconds(600)));
        assertFalse(caps.violations(EgressPolicy.denyAll(), Limits.builder().lifetime(Duration.ofHours(25)).build()).isEmpty());
        assertFalse(caps.violations(EgressPolicy.denyAll(), Limits.builder().diskMib(1024).build()).isEmpty());
        assertTrue(caps.violations(EgressPolicy.denyAll(), Limits.builder().lifetime(Duration.ofHours(24)).build()).isEmpty());
    }
}
