package dev.sandbox4j.egress;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sandbox4j.policy.EgressPolicy;
import dev.sandbox4j.policy.Limits;
import dev.sandbox4j.policy.UnsupportedPolicyException;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * One sandbox's allowance across the proxies a runner starts for it one after another (issue 31 item 4),
 * on loopback: what the first relayed is counted when it is retired, and the next one is capped at what is left.
 */
class NetworkAllowanceTest {
    static Canaries canaries;

    @BeforeAll
    static void servers() throws Exception {
        canaries = new Canaries();
    }

    @AfterAll
    static void stop() throws IOException {
        canaries.close();
    }

    static EgressProxy proxy(NetworkAllowance allowance) {
        EgressProxy.Builder b = EgressProxy.builder().policy(EgressPolicy.allowOnly("allowed.test"))
                .resolver(EgressResolver.fixed(Map.of()))
                .listen(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0))
                .route("allowed.test", 80, canaries.httpAddress());
        if (allowance.limited()) {
            b.maxBytesAtMost(allowance.left());
        }
        return b.start();
    }

    @Test
    void theSecondProxyGetsWhatTheFirstLeftAndTogetherTheyStayWithinTheAllowance() throws Exception {
        NetworkAllowance a = NetworkAllowance.ofBytes(300 << 10);
        EgressProxy first = proxy(a);
        ProxyClient.Response r1 = ProxyClient.get((InetSocketAddress) first.address(), "http://allowed.test/bytes/204800");
        assertEquals(200, r1.status(), "the control: 200 KiB of a 300 KiB allowance passes the first proxy");
        long relayed = a.retire(first);
        assertTrue(relayed > 200 << 10, "what the first proxy relayed: " + relayed);
        assertEquals(relayed, a.used());
        assertEquals((300 << 10) - relayed, a.left());
        EgressProxy second = proxy(a);
        try {
            ProxyClient.Response r2;
            try {
                r2 = ProxyClient.get((InetSocketAddress) second.address(), "http://allowed.test/bytes/204800");
            } catch (IOException e) {
                r2 = null; // the connection cut at the cap
            }
            assertFalse(r2 != null && r2.status() == 200 && r2.body.length() >= 204800,
                    "another 200 KiB passed with " + (300 << 10) + " - " + relayed + " bytes left");
            EgressStats st = second.stats();
            assertTrue(st.bytesUp() + st.bytesDown() <= (300 << 10) - relayed, st.toString());
            assertEquals(1, st.refusals(RefusalReason.BYTE_LIMIT), st.toString());
        } finally {
            a.retire(second);
        }
        assertTrue(a.used() <= 300 << 10, a.toString());
    }

    @Test
    void spentMeansNothingLeftAndNoAllowanceIsNeverSpent() {
        NetworkAllowance a = NetworkAllowance.of(Limits.builder().networkMib(1).build());
        assertEquals(1L << 20, a.bytes());
        assertTrue(a.limited());
        a.count(1 << 19);
        assertEquals(1 << 19, a.left());
        assertFalse(a.spent());
        a.count(1 << 20);
        assertEquals(0, a.left());
        assertTrue(a.spent());
        NetworkAllowance none = NetworkAllowance.of(Limits.defaults());
        assertFalse(none.limited());
        none.count(Long.MAX_VALUE);
        none.count(Long.MAX_VALUE);
        assertEquals(NetworkAllowance.NONE, none.left());
        assertFalse(none.spent());
        assertEquals(NetworkAllowance.NONE, NetworkAllowance.bytes(Limits.defaults()));
        assertThrows(IllegalArgumentException.class, () -> a.count(-1));
        assertThrows(IllegalArgumentException.class, () -> NetworkAllowance.ofBytes(0));
    }

    @Test
    void allowAllIsRefusedAndEveryOtherEgressIsCountable() {
        UnsupportedPolicyException e = assertThrows(UnsupportedPolicyException.class,
                () -> NetworkAllowance.requireCountable(EgressPolicy.allowAll(), "docker", "puts the container on the 'bridge' network"));
        assertEquals(List.of("a network limit with allow-all egress (the docker runner counts a sandbox's bytes in its egress"
                + " proxy, and allow-all puts the container on the 'bridge' network past it: give a domain or CIDR list instead)"),
                e.violations());
        NetworkAllowance.requireCountable(EgressPolicy.denyAll(), "docker", "x");
        NetworkAllowance.requireCountable(EgressPolicy.allowOnly("allowed.test"), "docker", "x");
    }
}
