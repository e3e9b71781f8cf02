package dev.sandbox4j.redis;

import static dev.sandbox4j.redis.RedisTests.spec;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sandbox4j.compose.ConcurrencyLimiter;
import dev.sandbox4j.compose.PermitStoreException;
import dev.sandbox4j.api.SandboxRunner;
import dev.sandbox4j.spi.lifecycle.ManagedSandboxRunner;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.time.Duration;
import java.util.List;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLHandshakeException;
import javax.net.ssl.SSLSocketFactory;
import javax.net.ssl.TrustManagerFactory;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * rediss:// against a real redis-server with TLS: the host name is verified by default, and a store
 * carries its own trust store and client certificate. Certificates are made by openssl for the test.
 */
class TlsTest {
    @TempDir
    Path dir;
    private final SandboxRunner runner = ManagedSandboxRunner.builder(new CountingDriver()).maxCreateAttempts(1).build();

    @Test
    void theHostNameIsVerifiedAndAClientCertificateCanBeGiven() throws Exception {
        Assumptions.assumeTrue(Files.isExecutable(Path.of("/usr/bin/openssl")), "no /usr/bin/openssl to make test certificates");
        selfSigned("wrong", "DNS:wrong.example");
        selfSigned("right", "IP:127.0.0.1");
        selfSigned("client", "DNS:client.test");
        exec("openssl", "pkcs12", "-export", "-in", "client.crt", "-inkey", "client.key", "-out", "client.p12",
                "-passout", "pass:test", "-name", "client");

        // a certificate for wrong.example, trusted by this store, offered for 127.0.0.1: refused
        int port = freePort();
        try (RedisServer wrong = RedisTests.startServer("--port", "0", "--tls-port", Integer.toString(port),
                "--tls-cert-file", dir.resolve("wrong.crt").toString(), "--tls-key-file", dir.resolve("wrong.key").toString(),
                "--tls-ca-cert-file", dir.resolve("client.crt").toString(), "--tls-auth-clients", "no")) {
            RedisPermitStore store = tlsStore(port, factory("wrong.crt", false));
            try {
                ConcurrencyLimiter limiter = ConcurrencyLimiter.builder().perKey(1).maxWait(Duration.ZERO).store(store).build();
                PermitStoreException e = assertThrows(PermitStoreException.class, () -> limiter.forKey(runner, "a").open(spec("a")));
                assertTrue(causedBy(e, SSLHandshakeException.class), "refused for the host name: " + e);
            } finally {
                store.close();
            }
        }

        // the right name, a client certificate required: works with it, refused without
        port = freePort();
        try (RedisServer right = RedisTests.startServer("--port", "0", "--tls-port", Integer.toString(port),
                "--tls-cert-file", dir.resolve("right.crt").toString(), "--tls-key-file", dir.resolve("right.key").toString(),
                "--tls-ca-cert-file", dir.resolve("client.crt").toString(), "--tls-auth-clients", "yes")) {
            RedisPermitStore store = tlsStore(port, factory("right.crt", true));
            try {
                ConcurrencyLimiter limiter = ConcurrencyLimiter.builder().perKey(1).maxWait(Duration.ofSeconds(30)).store(store).build();
                RedisTests.settled(store);
                limiter.forKey(runner, "a").open(spec("a")).close();
            } finally {
                store.close();
            }
            RedisPermitStore noCert = tlsStore(port, factory("right.crt", false));
            try {
                ConcurrencyLimiter limiter = ConcurrencyLimiter.builder().perKey(1).maxWait(Duration.ZERO).store(noCert).build();
                assertThrows(PermitStoreException.class, () -> limiter.forKey(runner, "a").open(spec("a")));
            } finally {
                noCert.close();
            }
        }
    }

    private RedisPermitStore tlsStore(int port, SSLSocketFactory factory) {
        return RedisPermitStore.builder().uri("rediss://127.0.0.1:" + port).namespace(RedisTests.namespace("tls"))
                .leaseTime(Duration.ofMillis(600)).timeout(Duration.ofSeconds(5)).sslSocketFactory(factory).build();
    }

    private SSLSocketFactory factory(String trusted, boolean withClientCert) throws Exception {
        KeyStore trust = KeyStore.getInstance("PKCS12");
        trust.load(null, null);
        try (InputStream in = Files.newInputStream(dir.resolve(trusted))) {
            Certificate cert = CertificateFactory.getInstance("X.509").generateCertificate(in);
            trust.setCertificateEntry("server", cert);
        }
        TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        tmf.init(trust);
        KeyManagerFactory kmf = null;
        if (withClientCert) {
            KeyStore keys = KeyStore.getInstance("PKCS12");
            try (InputStream in = Files.newInputStream(dir.resolve("client.p12"))) {
                keys.load(in, "test".toCharArray());
            }
            kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
            kmf.init(keys, "test".toCharArray());
        }
        SSLContext context = SSLContext.getInstance("TLS");
        context.init(kmf == null ? null : kmf.getKeyManagers(), tmf.getTrustManagers(), null);
        return context.getSocketFactory();
    }

    private void selfSigned(String name, String san) throws Exception {
        exec("openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=" + name,
                "-addext", "subjectAltName=" + san, "-keyout", name + ".key", "-out", name + ".crt");
    }

    private void exec(String... command) throws Exception {
        Process p = new ProcessBuilder(List.of(command)).directory(dir.toFile()).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes());
        if (p.waitFor() != 0) {
            throw new IllegalStateException(String.join(" ", command) + " failed: " + out);
        }
    }

    private static boolean causedBy(Throwable t, Class<? extends Throwable> type) {
        for (Throwable c = t; c != null; c = c.getCause()) {
            if (type.isInstance(c)) {
                return true;
            }
        }
        return false;
    }

    private static int freePort() throws Exception {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }
}
