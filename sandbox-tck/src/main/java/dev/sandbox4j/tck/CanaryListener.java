package dev.sandbox4j.tck;

import java.io.IOException;
import java.io.InputStream;
import java.net.DatagramPacket;
import java.net.DatagramSocket;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A TCP and a UDP listener that count the bytes they receive, by tag. A connect that a sandbox reports
 * as successful proves nothing (a proxy or a blackhole can accept it); bytes arriving here do. Each TCP
 * connection's and each datagram's first line is its tag (e.g. {@code deny-all}); all its bytes are
 * counted under it. A first line that is an HTTP request line (a request relayed by an HTTP proxy) is
 * answered {@code 204 No Content}, so the client does not wait for an answer that never comes.
 *
 * @since 0.1.0
 */
public final class CanaryListener implements AutoCloseable {
    private static final java.util.regex.Pattern HTTP_REQUEST_LINE = java.util.regex.Pattern.compile(
            "[A-Z]+ \\S+ HTTP/1\\.[01]\r?");
    private static final byte[] NO_CONTENT = "HTTP/1.1 204 No Content\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
            .getBytes(StandardCharsets.ISO_8859_1);
    private final ServerSocket server;
    private final DatagramSocket udp;
    private final Thread acceptor;
    private final Thread receiver;
    private final Map<String, AtomicLong> bytesByTag = new ConcurrentHashMap<>();
    private final Map<String, AtomicLong> udpBytesByTag = new ConcurrentHashMap<>();
    private final AtomicLong total = new AtomicLong();
    private final AtomicLong connections = new AtomicLong();

    private CanaryListener(ServerSocket server, DatagramSocket udp) {
        this.server = server;
        this.udp = udp;
        this.acceptor = new Thread(this::acceptLoop, "tck-canary-tcp-" + server.getLocalPort());
        this.acceptor.setDaemon(true);
        this.acceptor.start();
        this.receiver = new Thread(this::receiveLoop, "tck-canary-udp-" + udp.getLocalPort());
        this.receiver.setDaemon(true);
        this.receiver.start();
    }

    /**
     * Listens on an ephemeral TCP port and an ephemeral UDP port of {@code bindAddress}.
     *
     * @param bindAddress the address to bind both sockets to
     * @return the listener, its threads started
     * @throws IOException when a socket cannot be bound (both are closed again)
     */
    public static CanaryListener start(InetAddress bindAddress) throws IOException {
        ServerSocket s = new ServerSocket();
        DatagramSocket u = null;
        try {
            s.bind(new InetSocketAddress(bindAddress, 0), 50);
            u = new DatagramSocket(new InetSocketAddress(bindAddress, 0));
            return new CanaryListener(s, u);
        } catch (IOException | RuntimeException e) {
            s.close();
            if (u != null) {
                u.close();
            }
            throw e;
        }
    }

    /**
     * The address the listeners are bound to.
     *
     * @return the TCP listener's bound address
     */
    public InetAddress bindAddress() {
        return server.getInetAddress();
    }

    /**
     * The TCP port.
     *
     * @return the port the TCP listener accepts on
     */
    public int port() {
        return server.getLocalPort();
    }

    /**
     * The UDP port.
     *
     * @return the port the UDP listener receives on
     */
    public int udpPort() {
        return udp.getLocalPort();
    }

    /**
     * Bytes received in datagrams whose first line was {@code tag}.
     *
     * @param tag the tag
     * @return the bytes, the tag line included; 0 when none arrived
     */
    public long udpBytes(String tag) {
        AtomicLong n = udpBytesByTag.get(tag);
        return n == null ? 0 : n.get();
    }

    /**
     * Waits until at least one datagram arrived under {@code tag}, at most {@code timeoutMillis}.
     *
     * @param tag the tag
     * @param timeoutMillis how long to wait, in milliseconds
     * @return whether a datagram under {@code tag} arrived in time
     * @throws InterruptedException when the waiting thread is interrupted
     */
    public boolean awaitUdpBytes(String tag, long timeoutMillis) throws InterruptedException {
        long until = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMillis);
        while (udpBytes(tag) == 0) {
            if (System.nanoTime() > until) {
                return false;
            }
            Thread.sleep(10);
        }
        return true;
    }

    /**
     * Bytes received on connections whose first line was {@code tag} (the tag line included).
     *
     * @param tag the tag
     * @return the bytes; 0 when none arrived
     */
    public long bytes(String tag) {
        AtomicLong n = bytesByTag.get(tag);
        return n == null ? 0 : n.get();
    }

    /**
     * Bytes received on connections whose first line contains {@code part} (an HTTP request line, say).
     *
     * @param part a part of the first line
     * @return the bytes of every such connection, summed; 0 when none
     */
    public long bytesContaining(String part) {
        long n = 0;
        for (Map.Entry<String, AtomicLong> e : bytesByTag.entrySet()) {
            if (e.getKey().contains(part)) {
                n += e.getValue().get();
            }
        }
        return n;
    }

    /**
     * Bytes received in all, TCP and UDP.
     *
     * @return the bytes, whatever their tag
     */
    public long totalBytes() {
        return total.get();
    }

    /**
     * TCP connections accepted so far, whatever they sent.
     *
     * @return the count
     */
    public long connections() {
        return connections.get();
    }

    /**
     * Waits until at least one byte arrived under {@code tag}, at most {@code timeoutMillis}.
     *
     * @param tag the tag
     * @param timeoutMillis how long to wait, in milliseconds
     * @return whether a byte under {@code tag} arrived over TCP in time
     * @throws InterruptedException when the waiting thread is interrupted
     */
    public boolean awaitBytes(String tag, long timeoutMillis) throws InterruptedException {
        long until = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMillis);
        while (bytes(tag) == 0) {
            if (System.nanoTime() > until) {
                return false;
            }
            Thread.sleep(10);
        }
        return true;
    }

    private void acceptLoop() {
        while (!server.isClosed()) {
            try {
                Socket s = server.accept();
                connections.incrementAndGet();
                Thread t = new Thread(() -> count(s), "tck-canary-conn");
                t.setDaemon(true);
                t.start();
            } catch (IOException e) {
                return;
            }
        }
    }

    private void receiveLoop() {
        byte[] buf = new byte[65536];
        while (!udp.isClosed()) {
            try {
                DatagramPacket p = new DatagramPacket(buf, buf.length);
                udp.receive(p);
                total.addAndGet(p.getLength());
                int end = 0;
                while (end < p.getLength() && end < 64 && buf[end] != '\n') {
                    end++;
                }
                String tag = new String(buf, 0, end, StandardCharsets.ISO_8859_1);
                udpBytesByTag.computeIfAbsent(tag, k -> new AtomicLong()).addAndGet(p.getLength());
            } catch (IOException e) {
                return;
            }
        }
    }

    private void count(Socket s) {
        try (s; InputStream in = s.getInputStream()) {
            s.setSoTimeout(30_000);
            StringBuilder tag = new StringBuilder();
            String known = null;
            long pending = 0;
            byte[] buf = new byte[8192];
            int n;
            while ((n = in.read(buf)) != -1) {
                total.addAndGet(n);
                if (known == null) {
                    for (int i = 0; i < n && known == null; i++) {
                        if (buf[i] == '\n' || tag.length() > 64) {
                            known = tag.toString();
                        } else {
                            tag.append((char) (buf[i] & 0xff));
                        }
                    }
                    pending += n;
                    if (known != null) {
                        bytesByTag.computeIfAbsent(known, k -> new AtomicLong()).addAndGet(pending);
                        if (HTTP_REQUEST_LINE.matcher(known).matches()) {
                            // through an HTTP proxy: an answer ends the client's wait (the bytes are counted all the same)
                            s.getOutputStream().write(NO_CONTENT);
                            s.getOutputStream().flush();
                        }
                    }
                } else {
                    bytesByTag.get(known).addAndGet(n);
                }
            }
            if (known == null && pending > 0) {
                bytesByTag.computeIfAbsent(tag.toString(), k -> new AtomicLong()).addAndGet(pending);
            }
        } catch (IOException e) {
            // the sandbox went away mid-connection; what arrived is counted
        }
    }

    @Override
    public void close() throws IOException {
        udp.close();
        server.close();
    }
}
