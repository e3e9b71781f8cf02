package dev.sandbox4j.emulators.vercel;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A loopback TCP listener counting bytes per tag (the first line a client sends), so a blocked connect
 * cannot look like success: only bytes that arrived count.
 */
final class Canary implements AutoCloseable {
    private final ServerSocket server;
    private final Map<String, AtomicLong> bytes = new ConcurrentHashMap<>();
    private final Thread acceptor;

    Canary() throws IOException {
        server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        acceptor = new Thread(this::accept, "canary");
        acceptor.setDaemon(true);
        acceptor.start();
    }

    int port() {
        return server.getLocalPort();
    }

    /** A bash line that connects and sends {@code tag} then some bytes; exits 3 when it cannot connect. */
    String knock(String tag) {
        return "exec 3<>/dev/tcp/127.0.0.1/" + port() + " || exit 3; printf '" + tag + "\\nknock-knock' >&3; exec 3>&-";
    }

    long bytes(String tag) {
        AtomicLong n = bytes.get(tag);
        return n == null ? 0 : n.get();
    }

    /** Waits until {@code tag} sent something; false after {@code millis}. */
    boolean await(String tag, long millis) throws InterruptedException {
        long deadline = System.currentTimeMillis() + millis;
        synchronized (this) {
            while (bytes(tag) == 0) {
                long left = deadline - System.currentTimeMillis();
                if (left <= 0) {
                    return false;
                }
                wait(left);
            }
        }
        return true;
    }

    private void accept() {
        while (!server.isClosed()) {
            try {
                Socket s = server.accept();
                Thread t = new Thread(() -> read(s), "canary-conn");
                t.setDaemon(true);
                t.start();
            } catch (IOException e) {
                return;
            }
        }
    }

    private void read(Socket s) {
        try (s; BufferedReader r = new BufferedReader(new InputStreamReader(s.getInputStream(), StandardCharsets.UTF_8))) {
            String tag = r.readLine();
            if (tag == null) {
                return;
            }
            AtomicLong n = bytes.computeIfAbsent(tag, k -> new AtomicLong());
            n.addAndGet(tag.length() + 1);
            char[] buf = new char[1024];
            int k;
            while ((k = r.read(buf)) > 0) {
                n.addAndGet(k);
            }
        } catch (IOException ignored) {
            // the sandbox went away
        }
        synchronized (this) {
            notifyAll();
        }
    }

    @Override
    public void close() throws IOException {
        server.close();
    }
}
