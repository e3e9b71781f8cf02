package dev.sandbox4j.tck;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.OutputStream;
import java.net.DatagramPacket;
import java.net.DatagramSocket;
import java.net.InetAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/** The canary is the instrument of the egress cases: it must count what arrives, by tag, and nothing else. */
class CanaryListenerTest {
    private static final InetAddress LOOPBACK = InetAddress.getLoopbackAddress();

    @Test
    void countsTcpBytesUnderTheConnectionsTag() throws Exception {
        try (CanaryListener canary = CanaryListener.start(LOOPBACK)) {
            send(canary.port(), "alpha\n" + "x".repeat(10_000));
            send(canary.port(), "beta\nyy");
            assertTrue(canary.awaitBytes("alpha", 5_000));
            assertTrue(canary.awaitBytes("beta", 5_000));
            // the tag line counts: every byte that reached the host is evidence
            awaitEquals(6 + 10_000, canary, "alpha");
            awaitEquals(7, canary, "beta");
            assertEquals(0, canary.bytes("gamma"));
            assertEquals(0, canary.udpBytes("alpha"), "TCP and UDP are counted apart");
            assertEquals(2, canary.connections());
        }
    }

    @Test
    void aConnectionThatSendsNothingCountsNothing() throws Exception {
        try (CanaryListener canary = CanaryListener.start(LOOPBACK)) {
            try (Socket s = new Socket(LOOPBACK, canary.port())) {
                s.getOutputStream().flush();
            }
            assertFalse(canary.awaitBytes("", 200));
            assertEquals(0, canary.totalBytes());
        }
    }

    @Test
    void countsDatagramsUnderTheirTag() throws Exception {
        try (CanaryListener canary = CanaryListener.start(LOOPBACK); DatagramSocket u = new DatagramSocket()) {
            byte[] d = "delta\nzzzz".getBytes(StandardCharsets.US_ASCII);
            u.send(new DatagramPacket(d, d.length, LOOPBACK, canary.udpPort()));
            assertTrue(canary.awaitUdpBytes("delta", 5_000));
            assertEquals(d.length, canary.udpBytes("delta"));
            assertEquals(0, canary.bytes("delta"));
        }
    }

    private static void send(int port, String data) throws Exception {
        try (Socket s = new Socket(LOOPBACK, port); OutputStream out = s.getOutputStream()) {
            out.write(data.getBytes(StandardCharsets.US_ASCII));
        }
    }

    private static void awaitEquals(long expected, CanaryListener canary, String tag) throws InterruptedException {
        long until = System.nanoTime() + 5_000_000_000L;
        while (canary.bytes(tag) != expected && System.nanoTime() < until) {
            Thread.sleep(5);
        }
        assertEquals(expected, canary.bytes(tag), tag);
    }
}
