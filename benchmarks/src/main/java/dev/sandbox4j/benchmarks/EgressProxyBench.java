package dev.sandbox4j.benchmarks;

import dev.sandbox4j.egress.EgressProxy;
import dev.sandbox4j.egress.EgressResolver;
import dev.sandbox4j.egress.internal.CertificateAuthority;
import dev.sandbox4j.policy.EgressPolicy;
import dev.sandbox4j.policy.HeaderRule;
import dev.sandbox4j.policy.SecretRef;
import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.security.KeyStore;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import javax.net.ssl.SNIHostName;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLServerSocket;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.TrustManagerFactory;

/**
 * What the egress proxy (sandbox-egress) adds to HTTPS, on loopback: a small HTTPS server of its own
 * (TLS 1.3, a test CA made with the module's own encoder), reached directly, through a tunnel
 * ({@code CONNECT}, SNI checked, bytes relayed) and brokered (the proxy terminates TLS with its CA,
 * adds a header, opens TLS to the server).
 * <ul>
 *   <li>latency of one HTTPS request on a new connection (TCP connect, CONNECT, TLS handshake, GET, a
 *       100-byte answer) and on a kept-alive connection (GET and answer only); median of N per case,
 *       cases interleaved;</li>
 *   <li>throughput of one 100 MiB download per case (the same connection types), R rounds, interleaved.</li>
 * </ul>
 * Usage: {@code EgressProxyBench [requests] [MiB] [rounds]} (default 200, 100, 5).
 */
public final class EgressProxyBench {
    private static final String HOST = "api.test";

    private EgressProxyBench() {
    }

    public static void main(String[] args) throws Exception {
        int requests = args.length > 0 ? Integer.parseInt(args[0]) : 200;
        long mib = args.length > 1 ? Long.parseLong(args[1]) : 100;
        int rounds = args.length > 2 ? Integer.parseInt(args[2]) : 5;
        CertificateAuthority serverCa = CertificateAuthority.create("bench server CA", Duration.ofDays(1));
        SSLContext serverTls = CertificateAuthority.serverContext(serverCa.leafKey(), List.of(serverCa.issue(HOST), serverCa.certificate()));
        try (Server server = new Server(serverTls)) {
            InetSocketAddress target = server.address();
            KeyStore serverTrust = trustStore(serverCa.certificatePem());
            EgressProxy.Builder common = EgressProxy.builder().resolver(EgressResolver.fixed(Map.of()))
                    .listen(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0))
                    .route(HOST, 443, target).upstreamTrustStore(serverTrust);
            try (EgressProxy tunnel = common.policy(EgressPolicy.allowOnly(HOST)).name("bench-tunnel").start();
                 EgressProxy brokered = EgressProxy.builder().resolver(EgressResolver.fixed(Map.of()))
                         .listen(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0))
                         .route(HOST, 443, target).upstreamTrustStore(serverTrust).name("bench-brokered")
                         .policy(EgressPolicy.builder().allowDomain(HOST)
                                 .headerRule(HeaderRule.of(HOST, "Authorization", SecretRef.of("bench", () -> "bench-secret-value"), "Bearer "))
                                 .build())
                         .start()) {
                SSLContext trustServer = trusting(serverTrust);
                SSLContext trustBroker = trusting(trustStore(brokered.caCertificatePem().orElseThrow()));
                Way[] ways = {
                    new Way("direct", null, trustServer, target),
                    new Way("tunnel (CONNECT, SNI check)", (InetSocketAddress) tunnel.address(), trustServer, target),
                    new Way("brokered (TLS terminated, header added)", (InetSocketAddress) brokered.address(), trustBroker, target),
                };
                System.out.printf(Locale.ROOT, "egress proxy bench: %d requests per case, %d MiB x %d rounds, %d cores, load %s%n",
                        requests, mib, rounds, Runtime.getRuntime().availableProcessors(), load());
                // warm-up: the JIT and the proxies' leaf caches
                for (int i = 0; i < Math.max(20, requests / 5); i++) {
                    for (Way w : ways) {
                        w.fresh();
                    }
                }
                for (Way w : ways) {
                    w.download(8L << 20);
                }
                double[][] fresh = new double[ways.length][requests];
                double[][] kept = new double[ways.length][requests];
                Socket[] open = new Socket[ways.length];
                for (int i = 0; i < ways.length; i++) {
                    open[i] = ways[i].open();
                }
                for (int r = 0; r < requests; r++) {
                    for (int k = 0; k < ways.length; k++) {
                        int i = (k + r) % ways.length;
                        fresh[i][r] = ways[i].fresh();
                        long t0 = System.nanoTime();
                        get(open[i], "/small");
                        kept[i][r] = (System.nanoTime() - t0) / 1e6;
                    }
                }
                for (Socket s : open) {
                    s.close();
                }
                double[][] mibs = new double[ways.length][rounds];
                for (int r = 0; r < rounds; r++) {
                    for (int k = 0; k < ways.length; k++) {
                        int i = (k + r) % ways.length;
                        mibs[i][r] = ways[i].download(mib << 20);
                    }
                }
                System.out.printf(Locale.ROOT, "%-42s %14s %14s %14s %14s %12s%n", "case", "new conn med", "p90 ms",
                        "kept-alive med", "p90 ms", "MiB/s med");
                for (int i = 0; i < ways.length; i++) {
                    System.out.printf(Locale.ROOT, "%-42s %14.3f %14.3f %14.3f %14.3f %12.1f%n", ways[i].name,
                            pct(fresh[i], 50), pct(fresh[i], 90), pct(kept[i], 50), pct(kept[i], 90), pct(mibs[i], 50));
                }
                for (int i = 1; i < ways.length; i++) {
                    System.out.printf(Locale.ROOT, "%-42s added %.3f ms per new-connection request, %.3f ms per kept-alive request;"
                                    + " throughput %.2f of direct (MiB/s per round: %s vs %s)%n",
                            ways[i].name, pct(fresh[i], 50) - pct(fresh[0], 50), pct(kept[i], 50) - pct(kept[0], 50),
                            pct(mibs[i], 50) / pct(mibs[0], 50), Arrays.toString(round(mibs[i])), Arrays.toString(round(mibs[0])));
                }
                System.out.println("tunnel " + tunnel.stats());
                System.out.println("brokered " + brokered.stats());
                System.out.printf(Locale.ROOT, "load after %s%n", load());
            }
        }
    }

    private static double[] round(double[] a) {
        double[] out = new double[a.length];
        for (int i = 0; i < a.length; i++) {
            out[i] = Math.round(a[i] * 10) / 10.0;
        }
        return out;
    }

    private static String load() {
        try {
            return java.nio.file.Files.readString(java.nio.file.Path.of("/proc/loadavg")).strip();
        } catch (IOException e) {
            return "?";
        }
    }

    private static double pct(double[] values, int p) {
        double[] a = values.clone();
        Arrays.sort(a);
        int i = (int) Math.ceil(p / 100.0 * a.length) - 1;
        return a[Math.max(0, Math.min(a.length - 1, i))];
    }

    /** One way to reach the server. */
    private static final class Way {
        final String name;
        final InetSocketAddress proxy;
        final SSLContext trust;
        final InetSocketAddress server;

        Way(String name, InetSocketAddress proxy, SSLContext trust, InetSocketAddress server) {
            this.name = name;
            this.proxy = proxy;
            this.trust = trust;
            this.server = server;
        }

        Socket open() throws IOException {
            Socket s = new Socket();
            s.setTcpNoDelay(true);
            s.connect(proxy == null ? server : proxy, 60_000);
            s.setSoTimeout(60_000);
            if (proxy != null) {
                OutputStream out = s.getOutputStream();
                out.write(("CONNECT " + HOST + ":443 HTTP/1.1\r\nHost: " + HOST + ":443\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
                out.flush();
                String status = line(s.getInputStream());
                if (!status.startsWith("HTTP/1.1 200")) {
                    throw new IOException("CONNECT: " + status);
                }
                while (!line(s.getInputStream()).isEmpty()) {
                    // the rest of the head
                }
            }
            SSLSocket t = (SSLSocket) trust.getSocketFactory().createSocket(s, HOST, 443, true);
            SSLParameters p = t.getSSLParameters();
            p.setServerNames(List.of(new SNIHostName(HOST)));
            p.setEndpointIdentificationAlgorithm("HTTPS");
            t.setSSLParameters(p);
            t.startHandshake();
            return t;
        }

        /** One request on a new connection, in ms. */
        double fresh() throws IOException {
            long t0 = System.nanoTime();
            try (Socket s = open()) {
                get(s, "/small");
            }
            return (System.nanoTime() - t0) / 1e6;
        }

        /** One download of {@code bytes} on a new connection, in MiB/s. */
        double download(long bytes) throws IOException {
            long t0 = System.nanoTime();
            long got;
            try (Socket s = open()) {
                got = get(s, "/bytes/" + bytes);
            }
            if (got != bytes) {
                throw new IOException(name + ": got " + got + " of " + bytes + " bytes");
            }
            return bytes / 1048576.0 / ((System.nanoTime() - t0) / 1e9);
        }
    }

    /** GET path; reads the response by Content-Length; returns the body's length. */
    static long get(Socket s, String path) throws IOException {
        OutputStream out = s.getOutputStream();
        out.write(("GET " + path + " HTTP/1.1\r\nHost: " + HOST + "\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
        out.flush();
        InputStream in = s.getInputStream();
        String status = line(in);
        if (!status.startsWith("HTTP/1.1 200")) {
            throw new IOException("GET " + path + ": " + status);
        }
        long length = -1;
        String h;
        while (!(h = line(in)).isEmpty()) {
            if (h.regionMatches(true, 0, "Content-Length:", 0, 15)) {
                length = Long.parseLong(h.substring(15).strip());
            }
        }
        byte[] buf = new byte[64 << 10];
        long left = length;
        while (left > 0) {
            int n = in.read(buf, 0, (int) Math.min(buf.length, left));
            if (n < 0) {
                break;
            }
            left -= n;
        }
        return length - left;
    }

    static String line(InputStream in) throws IOException {
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        int c;
        while ((c = in.read()) >= 0 && c != '\n') {
            b.write(c);
        }
        String s = b.toString(StandardCharsets.ISO_8859_1);
        return s.endsWith("\r") ? s.substring(0, s.length() - 1) : s;
    }

    private static KeyStore trustStore(String pem) throws Exception {
        KeyStore ks = KeyStore.getInstance("PKCS12");
        ks.load(null, null);
        ks.setCertificateEntry("ca", java.security.cert.CertificateFactory.getInstance("X.509")
                .generateCertificate(new java.io.ByteArrayInputStream(pem.getBytes(StandardCharsets.US_ASCII))));
        return ks;
    }

    private static SSLContext trusting(KeyStore ks) throws Exception {
        TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        tmf.init(ks);
        SSLContext ctx = SSLContext.getInstance("TLS");
        ctx.init(null, tmf.getTrustManagers(), null);
        return ctx;
    }

    /** A keep-alive HTTPS/1.1 server: {@code /bytes/N} answers N zero bytes, anything else 100 bytes. */
    private static final class Server implements AutoCloseable {
        private final SSLServerSocket socket;
        private final List<Socket> open = new ArrayList<>();

        Server(SSLContext tls) throws IOException {
            socket = (SSLServerSocket) tls.getServerSocketFactory().createServerSocket(0, 100, InetAddress.getLoopbackAddress());
            Thread t = new Thread(this::accept, "bench-https-accept");
            t.setDaemon(true);
            t.start();
        }

        InetSocketAddress address() {
            return new InetSocketAddress(InetAddress.getLoopbackAddress(), socket.getLocalPort());
        }

        private void accept() {
            while (!socket.isClosed()) {
                try {
                    Socket s = socket.accept();
                    s.setTcpNoDelay(true);
                    synchronized (open) {
                        open.add(s);
                    }
                    Thread t = new Thread(() -> serve(s), "bench-https");
                    t.setDaemon(true);
                    t.start();
                } catch (IOException e) {
                    return;
                }
            }
        }

        private void serve(Socket s) {
            try (s) {
                InputStream in = new BufferedInputStream(s.getInputStream());
                OutputStream out = s.getOutputStream();
                byte[] chunk = new byte[64 << 10];
                byte[] small = new byte[100];
                while (true) {
                    String request = line(in);
                    if (request.isEmpty()) {
                        return;
                    }
                    while (!line(in).isEmpty()) {
                        // headers: the bench sends no body
                    }
                    String path = request.split(" ")[1];
                    long n = path.startsWith("/bytes/") ? Long.parseLong(path.substring(7)) : small.length;
                    out.write(("HTTP/1.1 200 OK\r\nContent-Length: " + n + "\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
                    if (n == small.length) {
                        out.write(small);
                    } else {
                        for (long left = n; left > 0; left -= chunk.length) {
                            out.write(chunk, 0, (int) Math.min(chunk.length, left));
                        }
                    }
                    out.flush();
                }
            } catch (IOException e) {
                // the client closed
            }
        }

        @Override
        public void close() throws IOException {
            socket.close();
            synchronized (open) {
                for (Socket s : open) {
                    s.close();
                }
            }
        }
    }
}
