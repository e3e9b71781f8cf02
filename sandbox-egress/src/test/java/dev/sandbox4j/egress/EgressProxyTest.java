package dev.sandbox4j.egress;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sandbox4j.policy.EgressPolicy;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.util.List;
import java.util.Map;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLException;
import javax.net.ssl.SSLSocket;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Enforcement (issue 31 item 2) on loopback only: every name is mapped by the test's resolver or a
 * route to a 127.0.0.1 canary, and every request that is to be refused is refused before the proxy
 * connects anywhere (the canaries count what reaches them).
 */
class EgressProxyTest {
    static Canaries canaries;
    static SSLContext trustTestCa;
    static final EgressResolver RESOLVER = EgressResolver.fixed(Map.of(
            "allowed.test", List.of(InetAddress.getLoopbackAddress()),
            "other.test", List.of(InetAddress.getLoopbackAddress()),
            "rebind.test", List.of(InetAddress.getLoopbackAddress()),
            "api.test", List.of(InetAddress.getLoopbackAddress())));

    EgressProxy proxy;

    @BeforeAll
    static void servers() throws Exception {
        canaries = new Canaries();
        trustTestCa = Canaries.trusting(canaries.testCa.certificatePem());
    }

    @AfterAll
    static void stopServers() throws IOException {
        canaries.close();
    }

    @AfterEach
    void closeProxy() {
        if (proxy != null) {
            proxy.close();
        }
    }

    /** A started proxy on loopback TCP: allowed.test:80 and :443 routed to the canaries. */
    EgressProxy start(EgressPolicy policy) {
        return start(EgressProxy.builder().policy(policy));
    }

    EgressProxy start(EgressProxy.Builder b) {
        proxy = b.resolver(RESOLVER)
                .listen(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0))
                .route("allowed.test", 80, canaries.httpAddress())
                .route("allowed.test", 443, canaries.httpsAddress())
                .start();
        return proxy;
    }

    InetSocketAddress proxyAddress() {
        return (InetSocketAddress) proxy.address();
    }

    static void assertRefused(ProxyClient.Response r, RefusalReason reason, String text) {
        assertEquals(403, r.status(), r.toString());
        assertEquals(reason.code(), r.header("X-Sandbox4j-Egress-Refusal"), r.toString());
        assertTrue(r.statusLine.contains("sandbox4j-egress: refused: " + text), r.statusLine);
        assertEquals("sandbox4j-egress: refused: " + text, r.body.strip().substring(0, ("sandbox4j-egress: refused: " + text).length()), r.body);
    }

    @Test
    void plainHttpToAnAllowedNameReachesTheCanary() throws Exception {
        start(EgressPolicy.allowOnly("allowed.test"));
        int before = canaries.seen.size();
        ProxyClient.Response r = ProxyClient.get(proxyAddress(), "http://allowed.test/hello?x=1",
                "Proxy-Authorization: Basic Zm9vOmJhcg==");
        assertEquals(200, r.status(), r.toString());
        assertEquals("canary GET /hello body=0", r.body.strip());
        assertEquals("close", r.header("Connection"));
        Canaries.Seen seen = canaries.seen.get(before);
        assertEquals("/hello?x=1", seen.path);
        assertEquals(List.of("allowed.test"), seen.header("Host"));
        assertTrue(seen.header("Proxy-Authorization").isEmpty(), "a hop-by-hop header was passed on");
        EgressStats s = proxy.stats();
        assertEquals(1, s.admitted());
        assertEquals(0, s.refusalsTotal());
        assertTrue(s.bytesUp() > 0 && s.bytesDown() > 0, s.toString());
    }

    @Test
    void connectWithTheRightServerNameReachesTheHttpsCanary() throws Exception {
        start(EgressPolicy.allowOnly("allowed.test"));
        int before = canaries.seen.size();
        try (Socket s = ProxyClient.open(proxyAddress())) {
            assertEquals(200, ProxyClient.connect(s, "allowed.test:443").status());
            SSLSocket tls = ProxyClient.tls(s, "allowed.test", "allowed.test", trustTestCa);
            ProxyClient.Response r = ProxyClient.request(tls, "GET", "/tunnel", "allowed.test");
            assertEquals("canary GET /tunnel body=0", r.body.strip());
            // keep-alive through the tunnel
            assertEquals("canary GET /again body=0", ProxyClient.request(tls, "GET", "/again", "allowed.test").body.strip());
        }
        assertEquals(before + 2, canaries.seen.size());
        assertEquals(1, proxy.stats().admitted());
        assertEquals(0, proxy.stats().refusalsTotal());
    }

    @Test
    void aNameNotOnTheListIsRefusedWithAReason() throws Exception {
        start(EgressPolicy.allowOnly("allowed.test", "*.allowed.test"));
        int before = canaries.seen.size();
        assertRefused(ProxyClient.connect(proxyAddress(), "other.test:443"), RefusalReason.HOST_NOT_ALLOWED, "host not allowed: other.test");
        assertRefused(ProxyClient.get(proxyAddress(), "http://other.test/"), RefusalReason.HOST_NOT_ALLOWED, "host not allowed: other.test");
        // DomainPattern semantics: *.allowed.test is subdomains only; a suffix that is not a label boundary is no match
        assertRefused(ProxyClient.connect(proxyAddress(), "evilallowed.test:443"), RefusalReason.HOST_NOT_ALLOWED,
                "host not allowed: evilallowed.test");
        assertEquals(3, proxy.stats().refusals(RefusalReason.HOST_NOT_ALLOWED));
        assertEquals(0, proxy.stats().admitted());
        assertEquals(before, canaries.seen.size());
    }

    @Test
    void denyAllRefusesEverything() throws Exception {
        start(EgressPolicy.denyAll());
        assertRefused(ProxyClient.connect(proxyAddress(), "allowed.test:443"), RefusalReason.HOST_NOT_ALLOWED, "host not allowed: allowed.test");
        assertRefused(ProxyClient.connect(proxyAddress(), "127.0.0.1:" + canaries.echoAddress().getPort()), RefusalReason.IP_NOT_ALLOWED,
                "IP address not allowed: 127.0.0.1");
        assertEquals(2, proxy.stats().refusalsTotal());
    }

    @Test
    void aRawIpIsRefusedUnlessAnAllowedCidrHoldsIt() throws Exception {
        int echoes = canaries.echoConnections.get();
        start(EgressPolicy.allowOnly("allowed.test"));
        String echo = "127.0.0.1:" + canaries.echoAddress().getPort();
        assertRefused(ProxyClient.connect(proxyAddress(), echo), RefusalReason.IP_NOT_ALLOWED, "IP address not allowed: 127.0.0.1");
        assertRefused(ProxyClient.connect(proxyAddress(), "[::1]:" + canaries.echoAddress().getPort()), RefusalReason.IP_NOT_ALLOWED,
                "IP address not allowed: 0:0:0:0:0:0:0:1");
        assertRefused(ProxyClient.get(proxyAddress(), "http://" + "127.0.0.1:" + canaries.httpAddress().getPort() + "/"),
                RefusalReason.IP_NOT_ALLOWED, "IP address not allowed: 127.0.0.1");
        assertEquals(3, proxy.stats().refusals(RefusalReason.IP_NOT_ALLOWED));
        assertEquals(echoes, canaries.echoConnections.get());
        proxy.close();

        start(EgressPolicy.builder().allowCidr("127.0.0.0/8").build());
        try (Socket s = ProxyClient.open(proxyAddress())) {
            assertEquals(200, ProxyClient.connect(s, echo).status());
            s.getOutputStream().write("ping\n".getBytes(StandardCharsets.US_ASCII)); // not TLS: a literal has no name to check
            assertEquals("ping", ProxyClient.line(s.getInputStream()));
        }
        assertEquals(1, proxy.stats().admitted());
    }

    @Test
    void aNameResolvingToLoopbackIsRefusedUnlessThePolicyAllowsTheRange() throws Exception {
        int before = canaries.seen.size();
        start(EgressPolicy.allowOnly("rebind.test"));
        String url = "http://rebind.test:" + canaries.httpAddress().getPort() + "/rebind";
        ProxyClient.Response r = ProxyClient.get(proxyAddress(), "http://rebind.test/rebind");
        assertRefused(r, RefusalReason.ADDRESS_NOT_ALLOWED, "rebind.test resolves to 127.0.0.1, a non-public address no allowed CIDR contains");
        assertRefused(ProxyClient.connect(proxyAddress(), "rebind.test:443"), RefusalReason.ADDRESS_NOT_ALLOWED, "rebind.test resolves to 127.0.0.1");
        assertEquals(2, proxy.stats().refusals(RefusalReason.ADDRESS_NOT_ALLOWED));
        assertEquals(before, canaries.seen.size());
        proxy.close();

        start(EgressPolicy.builder().allowDomain("rebind.test").allowCidr("127.0.0.0/8").build());
        r = ProxyClient.get(proxyAddress(), url);
        assertEquals(200, r.status(), r.toString());
        assertEquals("canary GET /rebind body=0", r.body.strip());
        proxy.close();

        // deny wins, over an allowed CIDR and under default allow
        start(EgressPolicy.builder(EgressPolicy.Default.ALLOW).denyCidr("127.0.0.0/8").build());
        assertRefused(ProxyClient.get(proxyAddress(), url), RefusalReason.DENIED_CIDR, "rebind.test resolves to 127.0.0.1, in a denied CIDR");
        assertRefused(ProxyClient.connect(proxyAddress(), "127.0.0.1:443"), RefusalReason.DENIED_CIDR, "address in a denied CIDR: 127.0.0.1");
        assertEquals(2, proxy.stats().refusals(RefusalReason.DENIED_CIDR));
        proxy.close();

        // allow-all: private addresses too (the host network an allow-all sandbox had), any port
        start(EgressPolicy.allowAll());
        assertEquals(200, ProxyClient.get(proxyAddress(), url).status());
        assertEquals(before + 2, canaries.seen.size());
    }

    @Test
    void aDomainOpensPorts80And443Only() throws Exception {
        start(EgressPolicy.allowOnly("allowed.test"));
        assertRefused(ProxyClient.connect(proxyAddress(), "allowed.test:8443"), RefusalReason.PORT_NOT_ALLOWED,
                "port not allowed: allowed.test:8443");
        assertEquals(1, proxy.stats().refusals(RefusalReason.PORT_NOT_ALLOWED));
    }

    @Test
    void anUnknownNameIsRefused() throws Exception {
        start(EgressPolicy.allowOnly("nowhere.invalid"));
        assertRefused(ProxyClient.connect(proxyAddress(), "nowhere.invalid:443"), RefusalReason.UNRESOLVABLE, "host has no address: nowhere.invalid");
    }

    @Test
    void aServerNameOtherThanTheConnectHostIsRefused() throws Exception {
        start(EgressPolicy.allowOnly("allowed.test", "other.test"));
        int before = canaries.seen.size();
        try (Socket s = ProxyClient.open(proxyAddress())) {
            assertEquals(200, ProxyClient.connect(s, "allowed.test:443").status());
            SSLException e = assertThrows(SSLException.class, () -> ProxyClient.tls(s, "allowed.test", "other.test", trustTestCa));
            assertTrue(e.getMessage().contains("access_denied"), e.toString());
        }
        assertEquals(1, proxy.stats().refusals(RefusalReason.SNI_MISMATCH));
        try (Socket s = ProxyClient.open(proxyAddress())) {
            assertEquals(200, ProxyClient.connect(s, "allowed.test:443").status());
            assertThrows(SSLException.class, () -> ProxyClient.tls(s, "allowed.test", null, trustTestCa));
        }
        assertEquals(1, proxy.stats().refusals(RefusalReason.SNI_MISSING));
        try (Socket s = ProxyClient.open(proxyAddress())) {
            assertEquals(200, ProxyClient.connect(s, "allowed.test:443").status());
            s.getOutputStream().write("GET / HTTP/1.1\r\nHost: allowed.test\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
            assertEquals("sandbox4j-egress: refused: not TLS: a tunnel to allowed.test must start with a TLS ClientHello naming it",
                    ProxyClient.line(s.getInputStream()));
        }
        assertEquals(2, proxy.stats().refusals(RefusalReason.SNI_MISSING));
        assertEquals(0, proxy.stats().admitted());
        assertEquals(before, canaries.seen.size());
    }

    @Test
    void whatIsNotAProxyRequestIsRefused() throws Exception {
        start(EgressPolicy.allowOnly("allowed.test"));
        try (Socket s = ProxyClient.open(proxyAddress())) {
            s.getOutputStream().write("GET / HTTP/1.1\r\nHost: allowed.test\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
            assertRefused(ProxyClient.read(s.getInputStream(), true), RefusalReason.BAD_REQUEST,
                    "bad request: a proxy request needs an absolute http:// URL or CONNECT");
        }
        assertRefused(ProxyClient.get(proxyAddress(), "https://allowed.test/"), RefusalReason.BAD_REQUEST, "bad request: use CONNECT for https URLs");
        try (Socket s = ProxyClient.open(proxyAddress())) {
            s.getOutputStream().write(("POST http://allowed.test/ HTTP/1.1\r\nHost: allowed.test\r\nContent-Length: 3\r\n"
                    + "Transfer-Encoding: chunked\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
            assertRefused(ProxyClient.read(s.getInputStream(), true), RefusalReason.BAD_REQUEST,
                    "bad request: both Transfer-Encoding and Content-Length");
        }
        assertEquals(3, proxy.stats().refusals(RefusalReason.BAD_REQUEST));
    }

    @Test
    void aUnixSocketListenerServesTheSame() throws Exception {
        Path dir = Files.createTempDirectory("sandbox4j-egress-");
        Path sock = dir.resolve("proxy.sock");
        try {
            proxy = EgressProxy.builder().policy(EgressPolicy.allowOnly("allowed.test")).resolver(RESOLVER)
                    .listen(UnixDomainSocketAddress.of(sock)).route("allowed.test", 80, canaries.httpAddress()).start();
            assertEquals(UnixDomainSocketAddress.of(sock), proxy.address());
            assertEquals("HTTP/1.1 200 OK", unixGet(sock, "http://allowed.test/unix").lines().findFirst().orElseThrow());
            assertTrue(unixGet(sock, "http://other.test/").startsWith("HTTP/1.1 403 sandbox4j-egress: refused: host not allowed: other.test"));
            assertEquals(1, proxy.stats().admitted());
            assertEquals(1, proxy.stats().refusals(RefusalReason.HOST_NOT_ALLOWED));
            proxy.close();
            assertFalse(Files.exists(sock), "close() leaves the socket file");
        } finally {
            Files.deleteIfExists(sock);
            Files.delete(dir);
        }
    }

    private static String unixGet(Path sock, String url) throws IOException {
        try (SocketChannel ch = SocketChannel.open(StandardProtocolFamily.UNIX)) {
            ch.connect(UnixDomainSocketAddress.of(sock));
            String host = url.replaceFirst("^http://", "").replaceFirst("/.*$", "");
            ch.write(ByteBuffer.wrap(("GET " + url + " HTTP/1.1\r\nHost: " + host + "\r\n\r\n").getBytes(StandardCharsets.US_ASCII)));
            InputStream in = java.nio.channels.Channels.newInputStream(ch);
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
    }

    @Test
    void caCertificateOnlyWithHeaderRules() {
        start(EgressPolicy.allowOnly("allowed.test"));
        assertTrue(proxy.caCertificatePem().isEmpty());
        assertNotNull(proxy.toString());
    }
}
