package dev.sandbox4j.egress;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sandbox4j.policy.EgressPolicy;
import dev.sandbox4j.policy.HeaderRule;
import dev.sandbox4j.policy.SecretRef;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ProxySelector;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLHandshakeException;
import javax.net.ssl.SSLSocket;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Brokered credentials (issue 31 item 3): a loopback HTTPS server with its own test CA stands for
 * the API; the proxy verifies it with that CA, the client trusts the proxy's CA, and the secret
 * arrives at the server while the client never sent it.
 */
class BrokeredHeaderTest {
    static final String SECRET = "sk-brokered-" + "5d2c9a71e0b84f36";
    static Canaries canaries;
    EgressProxy proxy;
    final AtomicInteger resolutions = new AtomicInteger();

    @BeforeAll
    static void servers() throws Exception {
        canaries = new Canaries();
    }

    @AfterAll
    static void stop() throws IOException {
        canaries.close();
    }

    @AfterEach
    void closeProxy() {
        if (proxy != null) {
            proxy.close();
        }
    }

    SecretRef secret() {
        return SecretRef.of("api-key", () -> {
            resolutions.incrementAndGet();
            return SECRET;
        });
    }

    EgressProxy start(EgressPolicy policy) throws Exception {
        proxy = EgressProxy.builder().policy(policy)
                .resolver(EgressResolver.fixed(Map.of()))
                .listen(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0))
                .route("api.test", 443, canaries.httpsAddress())
                .route("api.test", 80, canaries.httpAddress())
                .route("allowed.test", 443, canaries.httpsAddress())
                .upstreamTrustStore(canaries.testTrust())
                .start();
        return proxy;
    }

    HttpClient client() throws Exception {
        SSLContext trustProxy = Canaries.trusting(proxy.caCertificatePem().orElseThrow());
        return HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).proxy(ProxySelector.of((InetSocketAddress) proxy.address()))
                .sslContext(trustProxy).build();
    }

    Canaries.Seen last() {
        return canaries.seen.get(canaries.seen.size() - 1);
    }

    @Test
    void theSecretArrivesAtTheServerAndTheClientNeverSentIt() throws Exception {
        start(EgressPolicy.builder().allowDomain("api.test")
                .headerRule(HeaderRule.of("api.test", "Authorization", secret(), "Bearer ")).build());
        HttpClient client = client();
        // the client sends a forged value of the header: it is replaced, not added to
        HttpResponse<String> r = client.send(HttpRequest.newBuilder(URI.create("https://api.test/v1/models"))
                .header("Authorization", "Bearer forged-by-the-sandbox").build(), HttpResponse.BodyHandlers.ofString());
        assertEquals(200, r.statusCode());
        assertEquals("canary GET /v1/models body=0", r.body().strip());
        assertEquals(List.of("Bearer " + SECRET), last().header("Authorization"));
        assertFalse(r.request().headers().firstValue("Authorization").orElse("").contains(SECRET));
        // keep-alive, a Content-Length body and a chunked one, on the same brokered connection or not
        byte[] body = new byte[100_000];
        r = client.send(HttpRequest.newBuilder(URI.create("https://api.test/v1/upload"))
                .POST(HttpRequest.BodyPublishers.ofByteArray(body)).build(), HttpResponse.BodyHandlers.ofString());
        assertEquals("canary POST /v1/upload body=100000", r.body().strip());
        assertEquals(List.of("Bearer " + SECRET), last().header("Authorization"));
        r = client.send(HttpRequest.newBuilder(URI.create("https://api.test/v1/chunked"))
                .POST(HttpRequest.BodyPublishers.ofInputStream(() -> new ByteArrayInputStream(body))).build(),
                HttpResponse.BodyHandlers.ofString());
        assertEquals("canary POST /v1/chunked body=100000", r.body().strip());
        assertEquals(List.of("Bearer " + SECRET), last().header("Authorization"));
        // a big response
        HttpResponse<byte[]> big = client.send(HttpRequest.newBuilder(URI.create("https://api.test/bytes/1000000")).build(),
                HttpResponse.BodyHandlers.ofByteArray());
        assertEquals(1_000_000, big.body().length);
        assertEquals(4, resolutions.get(), "the secret is resolved at each request");
        // admitted: each CONNECT (one per connection HttpClient opened) and each request inside
        assertEquals(proxy.stats().connectionsAccepted() + 4, proxy.stats().admitted(), proxy.stats().toString());
        assertEquals(0, proxy.stats().refusalsTotal());
    }

    @Test
    void aScopedRuleAddsTheHeaderOnlyToItsMethodsAndPathsAndStripsItEverywhere() throws Exception {
        start(EgressPolicy.builder().allowDomain("api.test")
                .headerRule(HeaderRule.builder("api.test", "X-Api-Key", secret()).methods("get", "POST").pathPrefix("/v1/").build())
                .build());
        HttpClient client = client();
        client.send(HttpRequest.newBuilder(URI.create("https://api.test/v1/a?q=1")).header("X-Api-Key", "forged").build(),
                HttpResponse.BodyHandlers.ofString());
        assertEquals(List.of(SECRET), last().header("X-Api-Key"));
        client.send(HttpRequest.newBuilder(URI.create("https://api.test/v2/a")).header("X-Api-Key", "forged").build(),
                HttpResponse.BodyHandlers.ofString());
        assertEquals(List.of(), last().header("X-Api-Key"), "outside the path prefix: stripped, not added");
        client.send(HttpRequest.newBuilder(URI.create("https://api.test/v1/a")).DELETE().header("X-Api-Key", "forged").build(),
                HttpResponse.BodyHandlers.ofString());
        assertEquals("DELETE", last().method);
        assertEquals(List.of(), last().header("X-Api-Key"), "outside the methods: stripped, not added");
        client.send(HttpRequest.newBuilder(URI.create("https://api.test/v1")).build(), HttpResponse.BodyHandlers.ofString());
        assertEquals(List.of(), last().header("X-Api-Key"), "/v1 does not start with /v1/");
        assertEquals(1, resolutions.get());
    }

    @Test
    void anEchoingHostHandsTheSecretBackToTheCode() throws Exception {
        // documented, not prevented: what the server returns is the code's
        start(EgressPolicy.builder().allowDomain("api.test")
                .headerRule(HeaderRule.of("api.test", "Authorization", secret(), "Bearer ")).build());
        HttpResponse<String> r = client().send(HttpRequest.newBuilder(URI.create("https://api.test/headers")).build(),
                HttpResponse.BodyHandlers.ofString());
        assertTrue(r.body().contains(SECRET), r.body().length() + " bytes");
    }

    @Test
    void hostsWithoutARuleAreTunnelledAndPlainHttpToABrokeredHostIsRefused() throws Exception {
        start(EgressPolicy.builder().allowDomain("api.test").allowDomain("allowed.test")
                .headerRule(HeaderRule.of("api.test", "Authorization", secret(), "Bearer ")).build());
        assertTrue(proxy.caCertificatePem().isPresent());
        // allowed.test has no rule: a plain tunnel, the server's own certificate reaches the client
        try (Socket s = ProxyClient.open((InetSocketAddress) proxy.address())) {
            assertEquals(200, ProxyClient.connect(s, "allowed.test:443").status());
            SSLSocket tls = ProxyClient.tls(s, "allowed.test", "allowed.test", Canaries.trusting(canaries.testCa.certificatePem()));
            X509Certificate leaf = (X509Certificate) tls.getSession().getPeerCertificates()[0];
            assertEquals(canaries.testCa.certificate().getSubjectX500Principal(), leaf.getIssuerX500Principal());
            ProxyClient.Response r = ProxyClient.request(tls, "GET", "/plain", "allowed.test", "Authorization: Bearer own");
            assertEquals(200, r.status());
            assertEquals(List.of("Bearer own"), last().header("Authorization"));
        }
        ProxyClient.Response r = ProxyClient.get((InetSocketAddress) proxy.address(), "http://api.test/v1/");
        assertEquals(403, r.status(), r.toString());
        assertEquals(RefusalReason.BROKERED_NEEDS_TLS.code(), r.header("X-Sandbox4j-Egress-Refusal"));
        assertEquals(0, resolutions.get());
    }

    @Test
    void aRequestForAnotherHostInsideTheTunnelIsRefused() throws Exception {
        start(EgressPolicy.builder().allowDomain("api.test").allowDomain("allowed.test")
                .headerRule(HeaderRule.of("api.test", "Authorization", secret(), "Bearer ")).build());
        int before = canaries.seen.size();
        try (Socket s = ProxyClient.open((InetSocketAddress) proxy.address())) {
            assertEquals(200, ProxyClient.connect(s, "api.test:443").status());
            SSLSocket tls = ProxyClient.tls(s, "api.test", "api.test", Canaries.trusting(proxy.caCertificatePem().orElseThrow()));
            ProxyClient.Response r = ProxyClient.request(tls, "GET", "/v1/", "allowed.test");
            assertEquals(403, r.status(), r.toString());
            assertEquals(RefusalReason.HOST_MISMATCH.code(), r.header("X-Sandbox4j-Egress-Refusal"));
            assertEquals("sandbox4j-egress: refused: Host allowed.test inside the tunnel to api.test:443", r.body.strip());
        }
        assertEquals(before, canaries.seen.size());
        assertEquals(0, resolutions.get());
        assertEquals(1, proxy.stats().refusals(RefusalReason.HOST_MISMATCH));
    }

    @Test
    void aServerTheProxyCannotVerifyIsNotReached() throws Exception {
        // the proxy trusts the JVM's roots here, not the test CA: the canary's certificate fails
        proxy = EgressProxy.builder().policy(EgressPolicy.builder().allowDomain("api.test")
                        .headerRule(HeaderRule.of("api.test", "Authorization", secret())).build())
                .resolver(EgressResolver.fixed(Map.of()))
                .listen(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0))
                .route("api.test", 443, canaries.httpsAddress()).start();
        int before = canaries.seen.size();
        ProxyClient.Response r = ProxyClient.connect((InetSocketAddress) proxy.address(), "api.test:443");
        assertEquals(502, r.status(), r.toString());
        assertTrue(r.body.startsWith("sandbox4j-egress: upstream failed: TLS to api.test:443 failed"), r.body);
        assertEquals(1, proxy.stats().upstreamFailures());
        assertEquals(before, canaries.seen.size());
        assertEquals(0, resolutions.get());
    }

    @Test
    void theClientMustTrustTheProxyCa() throws Exception {
        start(EgressPolicy.builder().allowDomain("api.test")
                .headerRule(HeaderRule.of("api.test", "Authorization", secret())).build());
        try (Socket s = ProxyClient.open((InetSocketAddress) proxy.address())) {
            assertEquals(200, ProxyClient.connect(s, "api.test:443").status());
            // a client trusting only the server's real CA sees the proxy's leaf and refuses it
            assertThrows(SSLHandshakeException.class,
                    () -> ProxyClient.tls(s, "api.test", "api.test", Canaries.trusting(canaries.testCa.certificatePem())));
        }
        assertEquals(0, resolutions.get());
    }

    @Test
    void theCaCertificateIsAV3CaWithStrictExtensions() throws Exception {
        start(EgressPolicy.builder().allowDomain("api.test")
                .headerRule(HeaderRule.of("api.test", "Authorization", secret())).build());
        X509Certificate ca = (X509Certificate) CertificateFactory.getInstance("X.509").generateCertificate(
                new ByteArrayInputStream(proxy.caCertificatePem().orElseThrow().getBytes(StandardCharsets.US_ASCII)));
        assertEquals(3, ca.getVersion());
        assertEquals(0, ca.getBasicConstraints());
        assertTrue(ca.getCriticalExtensionOIDs().containsAll(List.of("2.5.29.19", "2.5.29.15")));
        assertTrue(ca.getKeyUsage()[5], "keyCertSign");
        assertEquals("SHA256withECDSA", ca.getSigAlgName());
        ca.verify(ca.getPublicKey());
        ca.checkValidity();
        assertFalse(proxy.toString().contains(SECRET));
    }
}
