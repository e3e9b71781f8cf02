package dev.sandbox4j.benchmarks.adapters;

import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A byte-counting forwarder from a Unix socket of its own to the Docker engine's, for the flood's wire
 * figures: the Docker runner reaches the engine over its own Unix-socket client (no injectable socket
 * factory), so it is pointed at this socket instead. Counts the bytes the engine sent towards the client
 * ({@link #toClient}) and every byte this forwarder read ({@link #read}, to take its own reads out of
 * the process's rchar). One 64 KiB buffer per direction per connection.
 */
final class CountingUnixProxy implements AutoCloseable {
    final AtomicLong toClient = new AtomicLong();
    final AtomicLong read = new AtomicLong();
    private final Path listen;
    private final Path engine;
    private final ServerSocketChannel server;

    CountingUnixProxy(Path listen, Path engine) throws IOException {
        this.listen = listen;
        this.engine = engine;
        Files.deleteIfExists(listen);
        server = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
        server.bind(UnixDomainSocketAddress.of(listen));
        Thread t = new Thread(this::accept, "counting-unix-proxy");
        t.setDaemon(true);
        t.start();
    }

    Path socket() {
        return listen;
    }

    private void accept() {
        while (true) {
            SocketChannel client;
            try {
                client = server.accept();
            } catch (IOException e) {
                return;
            }
            try {
                SocketChannel up = SocketChannel.open(UnixDomainSocketAddress.of(engine));
                pipe(client, up, null);
                pipe(up, client, toClient);
            } catch (IOException e) {
                close(client);
            }
        }
    }

    private void pipe(SocketChannel from, SocketChannel to, AtomicLong counter) {
        Thread t = new Thread(() -> {
            ByteBuffer buf = ByteBuffer.allocate(64 * 1024);
            try {
                while (true) {
                    buf.clear();
                    int n = from.read(buf);
                    if (n < 0) {
                        break;
                    }
                    read.addAndGet(n);
                    buf.flip();
                    while (buf.hasRemaining()) {
                        to.write(buf);
                    }
                    if (counter != null) {
                        counter.addAndGet(n);
                    }
                }
            } catch (IOException e) {
                // either side went away
            } finally {
                close(from);
                close(to);
            }
        }, "counting-unix-proxy-pipe");
        t.setDaemon(true);
        t.start();
    }

    private static void close(SocketChannel c) {
        try {
            c.close();
        } catch (IOException ignored) {
            // closing
        }
    }

    @Override
    public void close() throws IOException {
        server.close();
        Files.deleteIfExists(listen);
    }
}
