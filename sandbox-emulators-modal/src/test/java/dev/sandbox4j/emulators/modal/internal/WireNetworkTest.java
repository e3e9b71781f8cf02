package dev.sandbox4j.emulators.modal.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.sandbox4j.emulators.modal.internal.proto.ModalApi;
import dev.sandbox4j.emulators.modal.internal.proto.ModalApi.NetworkAccess.NetworkAccessType;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The egress the emulator hands its local sandbox for a {@code network_access}, at create and after
 * {@code TaskSetNetworkAccess}: a list as a list under default deny, the canary's CIDR as the host
 * network, an empty allowlist and what sandbox4j's model refuses as no network.
 */
class WireNetworkTest {
    private static final List<String> CANARY = List.of("127.0.0.1");

    /** {@code type;cidr,cidr;domain,domain}, an empty part for an empty list. */
    private static ModalApi.NetworkAccess access(String type, String cidrs, String domains) {
        ModalApi.NetworkAccess.Builder b = ModalApi.NetworkAccess.newBuilder()
                .setNetworkAccessType(NetworkAccessType.valueOf(type));
        b.addAllAllowedCidrs(split(cidrs));
        b.addAllAllowedDomains(split(domains));
        return b.build();
    }

    private static List<String> split(String list) {
        return list == null || list.isBlank() ? List.of() : Arrays.asList(list.trim().split(","));
    }

    @ParameterizedTest(name = "{0} cidrs={1} domains={2} => {3}")
    @CsvSource(delimiter = '|', value = {
        "OPEN      |                              |                              | EgressPolicy[allow-all]",
        "BLOCKED   |                              |                              | EgressPolicy[deny-all]",
        // Modal: an empty ALLOWLIST blocks all outbound traffic
        "ALLOWLIST |                              |                              | EgressPolicy[deny-all]",
        // a CIDR holding the canary target: the host network, as before
        "ALLOWLIST | 127.0.0.0/8                  |                              | EgressPolicy[allow-all]",
        "ALLOWLIST | 0.0.0.0/0                    | pypi.org                     | EgressPolicy[allow-all]",
        "ALLOWLIST | 151.101.0.0/16               |                              | EgressPolicy[default=deny, allowCidrs=[151.101.0.0/16]]",
        "ALLOWLIST | 2001:db8::/32                |                              | EgressPolicy[default=deny, allowCidrs=[2001:db8::/32]]",
        "ALLOWLIST |                              | allowed.test,rebind.test     | EgressPolicy[default=deny, allowDomains=[allowed.test, rebind.test]]",
        "ALLOWLIST |                              | PyPI.org,*.pythonhosted.org  | EgressPolicy[default=deny, allowDomains=[pypi.org, *.pythonhosted.org]]",
        // Modal combines the two lists additively; so does the proxy (the recorded allowlist variant)
        "ALLOWLIST | 151.101.0.0/16               | pypi.org,*.pythonhosted.org  | EgressPolicy[default=deny, allowDomains=[pypi.org, *.pythonhosted.org], allowCidrs=[151.101.0.0/16]]",
        "ALLOWLIST | 10.0.0.0/8                   | pypi.org                     | EgressPolicy[default=deny, allowDomains=[pypi.org], allowCidrs=[10.0.0.0/8]]",
    })
    void atCreate(String type, String cidrs, String domains, String local) {
        WireNetwork n = WireNetwork.parse(ModalApi.Sandbox.newBuilder().setNetworkAccess(access(type, cidrs, domains)).build());
        assertEquals(local, n.localPolicy(CANARY).toString());
        assertEquals(local.equals("EgressPolicy[allow-all]"), n.hostNetwork(CANARY));
    }

    /** The same mapping on a live update, where the adapter sends deny-all and allow-all as allowlists. */
    @ParameterizedTest(name = "{0} cidrs={1} domains={2} => {3}")
    @CsvSource(delimiter = '|', value = {
        "ALLOWLIST |                              |                              | EgressPolicy[deny-all]",
        "ALLOWLIST | 0.0.0.0/0                    |                              | EgressPolicy[allow-all]",
        "OPEN      |                              |                              | EgressPolicy[allow-all]",
        "ALLOWLIST |                              | allowed.test,rebind.test     | EgressPolicy[default=deny, allowDomains=[allowed.test, rebind.test]]",
        "ALLOWLIST | 192.0.2.0/24                 | example.com                  | EgressPolicy[default=deny, allowDomains=[example.com], allowCidrs=[192.0.2.0/24]]",
    })
    void live(String type, String cidrs, String domains, String local) {
        assertEquals(local, WireNetwork.parseLive(access(type, cidrs, domains)).localPolicy(CANARY).toString());
    }

    @Test
    void noNetworkAccessFollowsTheDeprecatedBlockNetwork() {
        assertEquals("EgressPolicy[allow-all]", WireNetwork.parse(ModalApi.Sandbox.getDefaultInstance()).localPolicy(CANARY).toString());
        assertEquals("EgressPolicy[deny-all]", WireNetwork.parse(ModalApi.Sandbox.newBuilder().setBlockNetwork(true).build())
                .localPolicy(CANARY).toString());
    }

    /** Without a canary target the test rig's shortcut is gone: a loopback CIDR is a list like any other. */
    @Test
    void withoutCanaryTargetsALoopbackCidrIsAList() {
        WireNetwork n = WireNetwork.parseLive(access("ALLOWLIST", "127.0.0.0/8", ""));
        assertEquals("EgressPolicy[default=deny, allowCidrs=[127.0.0.0/8]]", n.localPolicy(List.of()).toString());
    }

    /** A domain the wire's check takes but sandbox4j's model refuses (longer than 253 characters): no network. */
    @Test
    void aDomainTheModelRefusesIsNoNetwork() {
        String label = "a".repeat(60);
        String longName = String.join(".", label, label, label, label, label) + ".com";
        WireNetwork n = WireNetwork.parseLive(access("ALLOWLIST", "192.0.2.0/24", "example.com," + longName));
        assertEquals("EgressPolicy[deny-all]", n.localPolicy(CANARY).toString());
    }
}
