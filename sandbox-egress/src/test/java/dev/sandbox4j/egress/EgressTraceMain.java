package dev.sandbox4j.egress;

import dev.sandbox4j.policy.EgressPolicy;
import dev.sandbox4j.policy.HeaderRule;
import dev.sandbox4j.policy.SecretRef;
import dev.sandbox4j.testlogging.TraceJvm;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.Map;

/**
 * The child JVM of {@link EgressTraceSecretsTest}: a brokered request whose secret (TRACE_HEADER_SECRET)
 * must reach the loopback API and appear in no line, every logger at TRACE; a refusal, a secret that
 * cannot be resolved, and the proxy's toString and stats printed.
 */
public final class EgressTraceMain {
    private EgressTraceMain() {
    }

    public static void main(String[] args) throws Exception {
        TraceJvm.plantCanaries();
        String secret = System.getenv("TRACE_HEADER_SECRET");
        try (Canaries c = new Canaries()) {
            EgressPolicy policy = EgressPolicy.builder().allowDomain("api.test").allowDomain("unset.test")
                    .headerRule(HeaderRule.of("api.test", "Authorization", SecretRef.env("TRACE_HEADER_SECRET"), "Bearer "))
                    .headerRule(HeaderRule.of("unset.test", "X-Api-Key", SecretRef.env("TRACE_UNSET_SECRET")))
                    .build();
            try (EgressProxy p = EgressProxy.builder().policy(policy).name("trace")
                    .resolver(EgressResolver.fixed(Map.of("other.test", List.of(InetAddress.getLoopbackAddress()))))
                    .listen(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0))
                    .route("api.test", 443, c.httpsAddress()).route("unset.test", 443, c.httpsAddress())
                    .upstreamTrustStore(c.testTrust()).start()) {
                System.out.println(p);
                InetSocketAddress proxy = (InetSocketAddress) p.address();
                javax.net.ssl.SSLContext trustProxy = Canaries.trusting(p.caCertificatePem().orElseThrow());
                try (java.net.Socket s = ProxyClient.open(proxy)) {
                    System.out.println("connect: " + ProxyClient.connect(s, "api.test:443").statusLine);
                    java.net.Socket tls = ProxyClient.tls(s, "api.test", "api.test", trustProxy);
                    ProxyClient.Response r = ProxyClient.request(tls, "GET", "/v1/models", "api.test", "Authorization: Bearer forged");
                    System.out.println("brokered: " + r.status() + " " + r.body.strip());
                }
                Canaries.Seen seen = c.seen.get(c.seen.size() - 1);
                System.out.println("secret arrived: " + seen.header("Authorization").equals(List.of("Bearer " + secret)));
                try (java.net.Socket s = ProxyClient.open(proxy)) {
                    ProxyClient.connect(s, "unset.test:443");
                    java.net.Socket tls = ProxyClient.tls(s, "unset.test", "unset.test", trustProxy);
                    ProxyClient.Response r = ProxyClient.request(tls, "GET", "/v1/", "unset.test");
                    System.out.println("unresolvable secret: " + r.status() + " " + r.body.strip());
                }
                System.out.println("refused: " + ProxyClient.connect(proxy, "other.test:443").body.strip());
                System.out.println(p.stats());
            }
        }
        System.out.println("trace main done");
    }
}
