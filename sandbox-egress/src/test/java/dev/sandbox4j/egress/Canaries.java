package dev.sandbox4j.egress;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import com.sun.net.httpserver.HttpsConfigurator;
import com.sun.net.httpserver.HttpsServer;
import dev.sandbox4j.egress.internal.CertificateAuthority;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.security.KeyStore;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import javax.net.ssl.SSLContext;

/**
 * Loopback servers the proxy's tests reach: a plain HTTP canary, an HTTPS canary with its own test
 * CA (made by the module's own encoder) and a raw TCP echo server. Each records what arrived.
 */
final class Canaries implements AutoCloseable {
    static final InetAddress LOOPBACK = InetAddress.getLoopbackAddress();

    /** One request as the server saw it. */
    static final class Seen {
        final String method;
        final String path;
        final Map<String, List<String>> headers;
        final long bodyBytes;

        Seen(String method, String path, Map<String, List<String>> headers, long bodyBytes) {
            this.method = method;
            this.path = path;
            this.headers = headers;
            this.bodyBytes = bodyBytes;
        }

        List<String> header(String name) {
            for (Map.Entry<String, List<String>> e : headers.entrySet()) {
                if (e.getKey().equalsIgnoreCase(name)) {
                    return e.getValue();
                }
            }
            return List.of();
        }
    }

    final CertificateAuthority testCa = CertificateAuthority.create("sandbox4j test CA", java.time.Duration.ofDays(1));
    final HttpServer http;
    final HttpsServer https;
    final ServerSocket echo;
    final List<Seen> seen = new CopyOnWriteArrayList<>();
    final AtomicInteger echoConnections = new AtomicInteger();
    final Map<String, byte[]> bodies = new ConcurrentHashMap<>();
    private final ExecutorService threads = Executors.newCachedThreadPool(r -> {
        Thread t = new Thread(r, "canary");
        t.setDaemon(true);
        return t;
    });

    Canaries() throws Exception {
        http = HttpServer.create(new InetSocketAddress(LOOPBACK, 0), 50);
        http.createContext("/", this::serve);
        http.setExecutor(threads);
        http.start();
        https = HttpsServer.create(new InetSocketAddress(LOOPBACK, 0), 50);
        SSLContext ctx = CertificateAuthority.serverContext(testCa.leafKey(),
                List.of(testCa.issue("allowed.test", "api.test", "other.test", "unset.test"), testCa.certificate()));
        https.setHttpsConfigurator(new HttpsConfigurator(ctx));
        https.createContext("/", this::serve);
        https.setExecutor(threads);
        https.start();
        echo = new ServerSocket(0, 50, LOOPBACK);
        threads.execute(this::acceptEcho);
    }

    /** Answers {@code canary <method> <path>}; {@code /bytes/N} answers N bytes; {@code /headers} echoes the headers. */
    private void serve(HttpExchange ex) throws IOException {
        long body;
        try (InputStream in = ex.getRequestBody()) {
            body = in.transferTo(OutputStream.nullOutputStream());
        }
        String path = ex.getRequestURI().getRawPath();
        seen.add(new Seen(ex.getRequestMethod(), ex.getRequestURI().toString(), Map.copyOf(ex.getRequestHeaders()), body));
        byte[] preset = bodies.get(path);
        if (path.startsWith("/bytes/")) {
            long n = Long.parseLong(path.substring(7));
            ex.sendResponseHeaders(200, n);
            byte[] chunk = new byte[64 << 10];
            try (OutputStream out = ex.getResponseBody()) {
                for (long left = n; left > 0; left -= chunk.length) {
                    out.write(chunk, 0, (int) Math.min(chunk.length, left));
                }
            }
            return;
        }
        byte[] reply;
        if (preset != null) {
            reply = preset;
        } else if (path.equals("/headers")) {
            StringBuilder sb = new StringBuilder();
            ex.getRequestHeaders().forEach((k, v) -> sb.append(k).append(": ").append(v).append('\n'));
            reply = sb.toString().getBytes(StandardCharsets.UTF_8);
        } else {
            reply = ("canary " + ex.getRequestMethod() + " " + path + " body=" + body + "\n").getBytes(StandardCharsets.UTF_8);
        }
        ex.sendResponseHeaders(200, reply.length);
        try (OutputStream out = ex.getResponseBody()) {
            out.write(reply);
        }
    }

    private void acceptEcho() {
        while (!echo.isClosed()) {
            try {
                Socket s = echo.accept();
                echoConnections.incrementAndGet();
                threads.execute(() -> {
                    try (s) {
                        s.getInputStream().transferTo(s.getOutputStream());
                    } catch (IOException ignored) {
                        // the test closed it
                    }
                });
            } catch (IOException e) {
                return;
            }
        }
    }

    InetSocketAddress httpAddress() {
        return new InetSocketAddress(LOOPBACK, http.getAddress().getPort());
    }

    InetSocketAddress httpsAddress() {
        return new InetSocketAddress(LOOPBACK, https.getAddress().getPort());
    }

    InetSocketAddress echoAddress() {
        return new InetSocketAddress(LOOPBACK, echo.getLocalPort());
    }

    /** A trust store holding the test CA, for the proxy's upstream side and the tests' clients. */
    KeyStore testTrust() throws Exception {
        return trustStore(testCa.certificatePem());
    }

    static KeyStore trustStore(String pem) throws Exception {
        KeyStore ks = KeyStore.getInstance("PKCS12");
        ks.load(null, null);
        java.security.cert.CertificateFactory cf = java.security.cert.CertificateFactory.getInstance("X.509");
        ks.setCertificateEntry("ca", cf.generateCertificate(new java.io.ByteArrayInputStream(pem.getBytes(StandardCharsets.US_ASCII))));
        return ks;
    }

    static SSLContext trusting(String pem) throws Exception {
        javax.net.ssl.TrustManagerFactory tmf = javax.net.ssl.TrustManagerFactory.getInstance(javax.net.ssl.TrustManagerFactory.getDefaultAlgorithm());
        tmf.init(trustStore(pem));
        SSLContext ctx = SSLContext.getInstance("TLS");
        ctx.init(null, tmf.getTrustManagers(), null);
        return ctx;
    }

    @Override
    public void close() throws IOException {
        http.stop(0);
        https.stop(0);
        echo.close();
        threads.shutdownNow();
    }
}
