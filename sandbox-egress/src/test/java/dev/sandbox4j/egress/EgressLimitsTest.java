package dev.sandbox4j.egress;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sandbox4j.policy.EgressPolicy;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Limits on the proxy itself (issue 31 item 4): connections, bytes, idle and total time, and
 * close() ending every open tunnel. Waits are for an event (a read returning end of stream), bounded
 * by the sockets' 60 s timeout, never a sleep.
 */
class EgressLimitsTest {
    static Canaries canaries;
    EgressProxy proxy;

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

    /** A proxy allowing 127.0.0.0/8 (the echo server, by literal) and allowed.test:80 (the HTTP canary). */
    EgressProxy start(EgressLimits limits) {
        proxy = EgressProxy.builder()
                .policy(EgressPolicy.builder().allowDomain("allowed.test").allowCidr("127.0.0.0/8").build())
                .resolver(EgressResolver.fixed(Map.of()))
                .limits(limits)
                .listen(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0))
                .route("allowed.test", 80, canaries.httpAddress())
                .start();
        return proxy;
    }

    InetSocketAddress address() {
        return (InetSocketAddress) proxy.address();
    }

    Socket echoTunnel() throws IOException {
        Socket s = ProxyClient.open(address());
        ProxyClient.Response r = ProxyClient.connect(s, "127.0.0.1:" + canaries.echoAddress().getPort());
        assertEquals(200, r.status(), r.toString());
        s.getOutputStream().write("hi\n".getBytes(StandardCharsets.US_ASCII));
        assertEquals("hi", ProxyClient.line(s.getInputStream()));
        return s;
    }

    /** Reads until the proxy closes the connection: true for end of stream or a reset. */
    static boolean closedByProxy(InputStream in) {
        try {
            while (in.read() >= 0) {
                // drain
            }
            return true;
        } catch (java.net.SocketTimeoutException e) {
            return false;
        } catch (IOException e) {
            return true; // reset
        }
    }

    @Test
    void connectionsOverTheLimitAreRefused() throws Exception {
        start(EgressLimits.builder().maxConnections(2).build());
        List<Socket> open = new ArrayList<>();
        try {
            open.add(echoTunnel());
            open.add(echoTunnel());
            ProxyClient.Response r = ProxyClient.connect(address(), "127.0.0.1:" + canaries.echoAddress().getPort());
            assertEquals(403, r.status(), r.toString());
            assertEquals("sandbox4j-egress: refused: too many connections: the proxy allows 2 at once", r.body.strip());
            assertEquals(1, proxy.stats().refusals(RefusalReason.CONNECTION_LIMIT));
        } finally {
            for (Socket s : open) {
                s.close();
            }
        }
        // the slots come back once the tunnels end
        awaitOpen(0);
        try (Socket s = echoTunnel()) {
            assertTrue(s.isConnected());
            assertEquals(1, proxy.stats().connectionsOpen());
        }
    }

    private void awaitOpen(long n) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        while (proxy.stats().connectionsOpen() != n && System.nanoTime() < deadline) {
            Thread.sleep(5); // polling a counter the proxy's threads update after the close
        }
        assertEquals(n, proxy.stats().connectionsOpen());
    }

    @Test
    void theByteLimitClosesTheConnectionAndRefusesLaterRequests() throws Exception {
        start(EgressLimits.builder().maxBytes(256 << 10).build());
        try (Socket s = ProxyClient.open(address())) {
            s.getOutputStream().write("GET http://allowed.test/bytes/1048576 HTTP/1.1\r\nHost: allowed.test\r\n\r\n"
                    .getBytes(StandardCharsets.US_ASCII));
            ProxyClient.Response head = ProxyClient.read(s.getInputStream(), false);
            assertEquals(200, head.status());
            long got = 0;
            try {
                got = s.getInputStream().transferTo(java.io.OutputStream.nullOutputStream());
            } catch (IOException e) {
                // a reset is a close too
            }
            assertTrue(got < 256 << 10, got + " bytes arrived");
        }
        EgressStats st = proxy.stats();
        assertEquals(1, st.refusals(RefusalReason.BYTE_LIMIT));
        assertTrue(st.bytesUp() + st.bytesDown() <= 256 << 10, st.toString());
        ProxyClient.Response r = ProxyClient.get(address(), "http://allowed.test/small");
        assertEquals(403, r.status());
        assertEquals(RefusalReason.BYTE_LIMIT.code(), r.header("X-Sandbox4j-Egress-Refusal"));
        assertEquals(2, proxy.stats().refusals(RefusalReason.BYTE_LIMIT));
    }

    /** CONNECT to the echo server without waiting for the answer: a timeout may close it at any point. */
    Socket rawTunnel() throws IOException {
        Socket s = ProxyClient.open(address());
        String a = "127.0.0.1:" + canaries.echoAddress().getPort();
        s.getOutputStream().write(("CONNECT " + a + " HTTP/1.1\r\nHost: " + a + "\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
        return s;
    }

    @Test
    void anIdleTunnelIsClosed() throws Exception {
        start(EgressLimits.builder().idleTimeout(Duration.ofMillis(200)).build());
        try (Socket s = rawTunnel()) {
            assertTrue(closedByProxy(s.getInputStream()), "the idle tunnel stayed open for 60 s");
        }
        assertEquals(1, proxy.stats().idleClosed());
        assertEquals(0, proxy.stats().lifetimeClosed());
    }

    @Test
    void aBusyTunnelIsClosedAtTheEndOfItsLifetime() throws Exception {
        start(EgressLimits.builder().maxConnectionLifetime(Duration.ofMillis(300)).build());
        try (Socket s = rawTunnel()) {
            boolean closed = false;
            long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
            while (!closed && System.nanoTime() < deadline) {
                try {
                    s.getOutputStream().write("tick\n".getBytes(StandardCharsets.US_ASCII)); // busy: never idle
                    String line = ProxyClient.line(s.getInputStream());
                    closed = line.isEmpty() && s.getInputStream().read() < 0;
                } catch (IOException e) {
                    closed = true;
                }
            }
            assertTrue(closed, "the tunnel outlived its lifetime by 60 s");
        }
        assertEquals(1, proxy.stats().lifetimeClosed());
        assertEquals(0, proxy.stats().idleClosed());
    }

    @Test
    void closeEndsEveryOpenTunnelAtOnce() throws Exception {
        start(EgressLimits.defaults());
        Socket a = echoTunnel();
        Socket b = echoTunnel();
        try (a; b) {
            assertEquals(2, proxy.stats().connectionsOpen());
            proxy.close();
            assertTrue(closedByProxy(a.getInputStream()));
            assertTrue(closedByProxy(b.getInputStream()));
            // Whether the listener is closed is asked of the kernel, not by connecting: once the port is free,
            // anything on the machine may bind it, or a client may connect to itself through it (CI once saw
            // a connect there succeed after close()).
            assertEquals(List.of(), listenersOfThisProcess(address().getPort()), "the listener is closed");
        }
    }

    /**
     * The sockets of this JVM (inodes behind {@code /proc/self/fd}) that listen on TCP {@code port}
     * ({@code /proc/net/tcp} and {@code tcp6}, state {@code 0A}).
     */
    static List<String> listenersOfThisProcess(int port) throws IOException {
        java.util.Set<String> mine = new java.util.HashSet<>();
        try (var fds = java.nio.file.Files.list(java.nio.file.Path.of("/proc/self/fd"))) {
            for (java.nio.file.Path fd : (Iterable<java.nio.file.Path>) fds::iterator) {
                try {
                    String target = java.nio.file.Files.readSymbolicLink(fd).toString();
                    if (target.startsWith("socket:[")) {
                        mine.add(target.substring(8, target.length() - 1));
                    }
                } catch (IOException gone) {
                    // closed while listing (the directory stream's own descriptor, among others)
                }
            }
        }
        List<String> listening = new ArrayList<>();
        String hexPort = String.format(java.util.Locale.ROOT, "%04X", port);
        for (String table : new String[] {"/proc/net/tcp", "/proc/net/tcp6"}) {
            java.nio.file.Path t = java.nio.file.Path.of(table);
            if (!java.nio.file.Files.exists(t)) {
                continue;
            }
            for (String row : java.nio.file.Files.readAllLines(t, StandardCharsets.US_ASCII)) {
                String[] f = row.trim().split("\\s+");
                // sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode
                if (f.length > 9 && f[1].endsWith(":" + hexPort) && f[3].equals("0A") && mine.contains(f[9])) {
                    listening.add(table + " " + row.trim());
                }
            }
        }
        return listening;
    }

    @Test
    void listenersOfThisProcessSeesAnOpenListener() throws IOException {
        try (java.net.ServerSocket s = new java.net.ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            assertEquals(1, listenersOfThisProcess(s.getLocalPort()).size(), "the check finds a listener it could miss");
        }
    }

    @Test
    void limitsRefuseNonsense() {
        assertThrows(IllegalArgumentException.class, () -> EgressLimits.builder().maxConnections(0));
        assertThrows(IllegalArgumentException.class, () -> EgressLimits.builder().maxBytes(-1));
        assertThrows(IllegalArgumentException.class, () -> EgressLimits.builder().idleTimeout(Duration.ZERO));
        assertEquals(64, EgressLimits.defaults().maxConnections());
        assertEquals(EgressLimits.defaults(), EgressLimits.defaults().toBuilder().build());
    }
}
