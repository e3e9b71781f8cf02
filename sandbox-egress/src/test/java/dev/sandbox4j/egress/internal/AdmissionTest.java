package dev.sandbox4j.egress.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sandbox4j.egress.EgressResolver;
import dev.sandbox4j.egress.RefusalReason;
import dev.sandbox4j.policy.EgressPolicy;
import java.net.InetAddress;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The address checks as a table, without sockets: nothing here connects anywhere. */
class AdmissionTest {
    static InetAddress ip(String literal) throws Exception {
        return InetAddress.getByName(literal); // literals only: no lookup
    }

    @Test
    void nonPublicRanges() throws Exception {
        for (String a : List.of("10.1.2.3", "172.16.0.1", "172.31.255.255", "192.168.1.1", "127.0.0.1", "127.255.0.1", "169.254.169.254",
                "100.64.0.1", "0.0.0.0", "224.0.0.1", "255.255.255.255", "198.18.0.1", "::1", "::", "fe80::1", "fc00::1", "fd12:3456::1",
                "ff02::1", "64:ff9b::a00:1", "2001:db8::1", "::ffff:127.0.0.1", "2002:7f00:1::1")) {
            assertTrue(Admission.nonPublic(Admission.cidrOf(ip(a))), a);
        }
        for (String a : List.of("8.8.8.8", "1.1.1.1", "172.32.0.1", "192.169.0.1", "2606:4700::1111", "2a00:1450::1")) {
            assertFalse(Admission.nonPublic(Admission.cidrOf(ip(a))), a);
        }
    }

    @Test
    void everyResolvedAddressIsCheckedAndOnlyCheckedOnesAreKept() throws Exception {
        // a resolver answering a public address and a private one: the private one is dropped; the
        // public one is only listed, never connected to (no socket in this test)
        EgressResolver r = EgressResolver.fixed(Map.of("mixed.test", List.of(ip("10.0.0.5"), ip("8.8.8.8")),
                "private.test", List.of(ip("10.0.0.5"), ip("fd00::5"))));
        Admission a = new Admission(EgressPolicy.allowOnly("mixed.test", "private.test"), r, Set.of(80, 443), Map.of());
        Admission.Target t = a.admit("MIXED.test.", 443);
        assertEquals("mixed.test", t.host);
        assertEquals(List.of(ip("8.8.8.8")), t.addresses.stream().map(x -> x.getAddress()).toList());
        Refusal e = assertThrows(Refusal.class, () -> a.admit("private.test", 443));
        assertEquals(RefusalReason.ADDRESS_NOT_ALLOWED, e.reason);
        Admission withCidr = new Admission(EgressPolicy.builder().allowDomain("private.test").allowCidr("10.0.0.0/8").build(), r,
                Set.of(80, 443), Map.of());
        assertEquals(List.of(ip("10.0.0.5")), withCidr.admit("private.test", 5432).addresses.stream().map(x -> x.getAddress()).toList());
    }

    @Test
    void literalsAndTheirForms() throws Exception {
        Admission a = new Admission(EgressPolicy.builder().allowCidr("10.0.0.0/8").denyCidr("10.9.0.0/16").build(),
                EgressResolver.fixed(Map.of()), Set.of(80, 443), Map.of());
        assertTrue(a.admit("10.1.1.1", 22).literal);
        assertEquals(RefusalReason.DENIED_CIDR, assertThrows(Refusal.class, () -> a.admit("10.9.1.1", 22)).reason);
        assertEquals(RefusalReason.IP_NOT_ALLOWED, assertThrows(Refusal.class, () -> a.admit("11.1.1.1", 22)).reason);
        assertEquals(RefusalReason.BAD_REQUEST, assertThrows(Refusal.class, () -> a.admit("fe80::1%eth0", 22)).reason);
        // an IPv4-mapped IPv6 literal is the IPv4 address
        assertTrue(a.admit("::ffff:10.1.1.1", 22).literal);
        assertEquals(RefusalReason.BAD_REQUEST, assertThrows(Refusal.class, () -> a.admit("evil.test/x", 80)).reason);
        assertEquals(RefusalReason.BAD_REQUEST, assertThrows(Refusal.class, () -> a.admit("a.test", 0)).reason);
    }
}
