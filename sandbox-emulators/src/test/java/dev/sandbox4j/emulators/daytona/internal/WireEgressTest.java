package dev.sandbox4j.emulators.daytona.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** The egress fields as Daytona's v0.190 API validates them, and the network the local machine gets. */
class WireEgressTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final List<String> CANARY = List.of("127.0.0.1");

    @ParameterizedTest(name = "{0} => host network {1}")
    @CsvSource(delimiter = '|', value = {
        "{}                                                               | true",
        "{\"networkBlockAll\":false}                                      | true",
        "{\"networkBlockAll\":true}                                       | false",
        "{\"networkAllowList\":\"127.0.0.1/32\"}                          | true",
        "{\"networkAllowList\":\"127.0.0.0/8\"}                           | true",
        "{\"networkAllowList\":\"0.0.0.0/0\"}                             | true",
        "{\"networkAllowList\":\"10.0.0.0/8,127.0.0.1/32\"}               | true",
        "{\"networkAllowList\":\"10.0.0.0/8\"}                            | false",
        "{\"networkAllowList\":\"1.1.1.1/32,8.8.8.0/24\"}                 | false",
        "{\"networkAllowList\":\"127.0.0.2/32\"}                          | false",
        "{\"networkAllowList\":\"127.0.0.1/abc\"}                         | false",
        "{\"domainAllowList\":\"pypi.org,*.pythonhosted.org\"}            | false",
        "{\"networkAllowList\":\"\"}                                      | true",
        "{\"networkAllowList\":null,\"domainAllowList\":null}             | true",
        // Daytona's documented quirk: block-all silently wins over the lists
        "{\"networkBlockAll\":true,\"networkAllowList\":\"127.0.0.1/32\"} | false",
        "{\"networkBlockAll\":true,\"networkAllowList\":\"0.0.0.0/0\",\"domainAllowList\":\"example.com\"} | false",
        "{\"networkAllowList\":\"127.0.0.1/32\",\"domainAllowList\":\"example.com\"} | true",
    })
    void hostNetworkOnlyWhenThePolicyReachesTheCanary(String body, boolean host) throws Exception {
        assertEquals(host, WireEgress.parse(JSON.readTree(body)).hostNetwork(CANARY));
    }

    /** The egress the emulator hands its local machine: a list as a list, what it cannot enforce as none. */
    @ParameterizedTest(name = "{0} => {1}")
    @CsvSource(delimiter = '|', value = {
        "{}                                                               | EgressPolicy[allow-all]",
        "{\"networkBlockAll\":true}                                       | EgressPolicy[deny-all]",
        "{\"networkAllowList\":\"127.0.0.1/32\"}                          | EgressPolicy[allow-all]",
        "{\"networkAllowList\":\"1.1.1.1/32,8.8.8.0/24\"}                 | EgressPolicy[default=deny, allowCidrs=[1.1.1.1/32, 8.8.8.0/24]]",
        // host bits are accepted by Daytona and masked off, as a firewall rule reads them
        "{\"networkAllowList\":\"10.1.2.3/16\"}                           | EgressPolicy[default=deny, allowCidrs=[10.1.0.0/16]]",
        "{\"networkAllowList\":\"10.0.0.0/abc\"}                          | EgressPolicy[deny-all]",
        "{\"domainAllowList\":\"allowed.test,rebind.test\"}               | EgressPolicy[default=deny, allowDomains=[allowed.test, rebind.test]]",
        "{\"domainAllowList\":\"PyPI.org, *.pythonhosted.org,\"}          | EgressPolicy[default=deny, allowDomains=[pypi.org, *.pythonhosted.org]]",
        // block-all wins over the lists, as on Daytona
        "{\"networkBlockAll\":true,\"domainAllowList\":\"example.com\"}   | EgressPolicy[deny-all]",
        // how Daytona combines the two lists is not known: neither guess
        "{\"networkAllowList\":\"1.1.1.1/32\",\"domainAllowList\":\"example.com\"} | EgressPolicy[deny-all]",
    })
    void localPolicy(String body, String local) throws Exception {
        assertEquals(local, WireEgress.parse(JSON.readTree(body)).localPolicy(CANARY).toString());
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', value = {
        "{\"networkAllowList\":\"10.0.0.0/24,10.0.1.0/24,10.0.2.0/24,10.0.3.0/24,10.0.4.0/24,10.0.5.0/24,10.0.6.0/24,10.0.7.0/24,10.0.8.0/24,10.0.9.0/24,10.0.10.0/24\"}"
                + " | Network allow list cannot contain more than 10 networks",
        "{\"networkAllowList\":\"1.1.1.1/32,,,,,,,,,,\"} | Network allow list cannot contain more than 10 networks",
        "{\"networkAllowList\":\"1.1.1.1\"} | Invalid network format: \"1.1.1.1\". Missing CIDR prefix length (e.g., /24)",
        "{\"networkAllowList\":\"example.com/32\"} | Invalid IP address: \"example.com\" in network \"example.com/32\". Must be a valid IPv4 address",
        "{\"networkAllowList\":\"01.1.1.1/32\"} | Invalid IP address: \"01.1.1.1\" in network \"01.1.1.1/32\". Must be a valid IPv4 address",
        "{\"networkAllowList\":\"::1/128\"} | Invalid IP address: \"::1\" in network \"::1/128\". Must be a valid IPv4 address",
        "{\"networkAllowList\":\"1.1.1.1/33\"} | Invalid CIDR prefix length: 1.1.1.1/33. Prefix must be between 0 and 32",
        "{\"domainAllowList\":\"localhost\"} | Invalid domain: \"localhost\". Must be a valid domain name",
        "{\"domainAllowList\":\"**.example.com\"} | Invalid domain: \"**.example.com\". Must be a valid domain name",
        "{\"domainAllowList\":\"a.com,b.com,c.com,d.com,e.com,f.com,g.com,h.com,i.com,j.com,k.com\"} | Domain allow list cannot contain more than 10 domains",
        "{\"networkBlockAll\":\"yes\"} | networkBlockAll must be a boolean value",
        "{\"networkAllowList\":[\"1.1.1.1/32\"]} | networkAllowList must be a string",
    })
    void refusesWhatTheServerRefusesWithItsMessage(String body, String message) throws Exception {
        WireException e = assertThrows(WireException.class, () -> WireEgress.parse(JSON.readTree(body)));
        assertEquals(400, e.status());
        assertEquals(message, e.getMessage());
    }

    /** A network-settings body merged into the stored settings as v0.190's updateNetworkSettings does. */
    @ParameterizedTest(name = "{0} + {1} => {2}")
    @CsvSource(delimiter = '|', value = {
        "{}                                         | {\"networkBlockAll\":true}                                    | true,null,null,false",
        "{\"networkBlockAll\":true}                 | {\"networkAllowList\":\"127.0.0.1/32\"}                     | false,127.0.0.1/32,null,true",
        "{\"networkAllowList\":\"127.0.0.1/32\"}     | {\"networkBlockAll\":true}                                    | true,null,null,false",
        "{\"networkAllowList\":\"127.0.0.1/32\"}     | {\"networkBlockAll\":false}                                   | false,null,null,true",
        "{\"networkAllowList\":\"127.0.0.1/32\"}     | {\"domainAllowList\":\"example.com\"}                         | false,127.0.0.1/32,example.com,true",
        "{\"domainAllowList\":\"example.com\"}       | {\"domainAllowList\":\"\"}                                      | false,null,null,true",
        "{}                                         | {\"networkBlockAll\":true,\"networkAllowList\":\"\",\"domainAllowList\":\"\"} | true,null,null,false",
        "{}                                         | {\"networkBlockAll\":false,\"networkAllowList\":\"127.0.0.1/32\",\"domainAllowList\":\"\"} | false,127.0.0.1/32,null,true",
    })
    void anUpdateMergesAsTheServiceDoes(String stored, String body, String expected) throws Exception {
        WireEgress after = WireEgress.parse(JSON.readTree(stored)).update(JSON.readTree(body));
        assertEquals(expected, after.blockAll() + "," + after.networkAllowList() + "," + after.domainAllowList() + ","
                + after.hostNetwork(CANARY));
    }

    @org.junit.jupiter.api.Test
    void anUpdateWithNoFieldOrABadListIsA400() throws Exception {
        WireEgress open = WireEgress.parse(JSON.readTree("{}"));
        WireException none = assertThrows(WireException.class, () -> open.update(JSON.readTree("{}")));
        assertEquals(400, none.status());
        assertEquals("At least one of networkBlockAll, networkAllowList or domainAllowList must be provided", none.getMessage());
        assertThrows(WireException.class, () -> open.update(JSON.readTree("{\"networkAllowList\":\"10.0.0.1\"}")));
    }
}
