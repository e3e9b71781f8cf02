package dev.sandbox4j.egress.internal;

import java.io.Closeable;
import java.io.IOException;
import java.nio.channels.SocketChannel;
import java.util.concurrent.atomic.AtomicBoolean;

/** One connection from the sandbox, and the upstream it may have: closed together, from any thread. */
final class Connection {
    final long id;
    final SocketChannel client;
    final long startNanos = System.nanoTime();
    private volatile long lastActivity = startNanos;
    private volatile Closeable upstream;
    private final AtomicBoolean closed = new AtomicBoolean();
    private final AtomicBoolean byteLimited = new AtomicBoolean();

    Connection(long id, SocketChannel client) {
        this.id = id;
        this.client = client;
    }

    void touch() {
        lastActivity = System.nanoTime();
    }

    long lastActivity() {
        return lastActivity;
    }

    void upstream(Closeable c) throws IOException {
        this.upstream = c;
        if (closed.get()) {
            c.close(); // closed while connecting: do not keep it
            throw new IOException("connection closed");
        }
    }

    /** True for the first call: the byte limit is counted once per connection. */
    boolean markByteLimited() {
        return byteLimited.compareAndSet(false, true);
    }

    boolean isClosed() {
        return closed.get();
    }

    /** Closes both sides at once; true for the call that closed it. */
    boolean close() {
        return close(null);
    }

    /** Closes both sides; {@code first} runs before the sockets close, only in the call that closes. */
    boolean close(Runnable first) {
        if (!closed.compareAndSet(false, true)) {
            return false;
        }
        if (first != null) {
            first.run(); // counted before the sandbox can see the close
        }
        quietly(client);
        Closeable u = upstream;
        if (u != null) {
            quietly(u);
        }
        return true;
    }

    private static void quietly(Closeable c) {
        try {
            c.close();
        } catch (IOException ignored) {
            // closing: nothing to do
        }
    }
}
