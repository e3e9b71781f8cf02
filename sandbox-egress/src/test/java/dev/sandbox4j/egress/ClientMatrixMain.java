package dev.sandbox4j.egress;

import dev.sandbox4j.policy.EgressPolicy;
import dev.sandbox4j.policy.HeaderRule;
import dev.sandbox4j.policy.SecretRef;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

/**
 * By hand, for the README's client table: starts the canaries and a proxy on loopback (allowed.test
 * to the canaries, api.test brokered with the secret from BROKER_SECRET), writes the proxy's CA and
 * the test CA to the directory in args[0], prints the proxy URL and the canaries' ports, and runs
 * until stdin closes; then prints the proxy's stats.
 */
public final class ClientMatrixMain {
    private ClientMatrixMain() {
    }

    public static void main(String[] args) throws Exception {
        Path dir = Path.of(args[0]);
        try (Canaries c = new Canaries()) {
            EgressPolicy policy = EgressPolicy.builder().allowDomain("allowed.test").allowDomain("api.test").allowDomain("rebind.test")
                    .headerRule(HeaderRule.of("api.test", "Authorization", SecretRef.env("BROKER_SECRET"), "Bearer ")).build();
            try (EgressProxy p = EgressProxy.builder().policy(policy)
                    .resolver(EgressResolver.fixed(Map.of("rebind.test", java.util.List.of(InetAddress.getLoopbackAddress()))))
                    .listen(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0))
                    .route("allowed.test", 80, c.httpAddress()).route("allowed.test", 443, c.httpsAddress())
                    .route("api.test", 443, c.httpsAddress())
                    .upstreamTrustStore(c.testTrust()).start()) {
                String bundle = Files.readString(Path.of("/etc/ssl/certs/ca-certificates.crt")) + c.testCa.certificatePem()
                        + p.caCertificatePem().orElseThrow();
                Files.writeString(dir.resolve("bundle.pem"), bundle);
                Files.writeString(dir.resolve("proxy-ca.pem"), p.caCertificatePem().orElseThrow() + c.testCa.certificatePem());
                System.out.println("proxy http://127.0.0.1:" + ((InetSocketAddress) p.address()).getPort()
                        + " http " + c.httpAddress().getPort() + " https " + c.httpsAddress().getPort());
                System.out.flush();
                System.in.transferTo(java.io.OutputStream.nullOutputStream());
                System.out.println(p.stats());
            }
        }
    }
}
