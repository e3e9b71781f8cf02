package dev.sandbox4j.modal.internal;

import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.shaded.io.netty.channel.EventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.epoll.Epoll;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollEventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollSocketChannel;
import io.grpc.netty.shaded.io.netty.channel.nio.NioEventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.socket.nio.NioSocketChannel;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The gRPC channels of one runner: the control-plane channel and one channel per command-router
 * address ({@code host:port}), shared by every sandbox on that router, on one small Netty event loop
 * group of the runner's own. A channel per sandbox cost a TCP connection and an HTTP/2 handshake per
 * sandbox (issue 35: 12 % of the client's CPU samples). A router channel carries no credential:
 * each sandbox's JWT goes on each of its calls ({@link ModalExec}), so a shared connection never
 * carries one sandbox's calls under another's JWT. The authority (and TLS name) is the router's own
 * address, as before. A router channel no sandbox uses any more stays open for the next sandbox on
 * that worker, at most {@link #MAX_IDLE} of them (the oldest idle one is closed first); everything is
 * closed with the runner.
 */
final class ModalChannels implements AutoCloseable {
    /** Idle router channels kept for reuse; more are closed, oldest first. */
    static final int MAX_IDLE = 8;
    /**
     * Event loop threads: one, since a runner holds a handful of connections (the server, and one per
     * router address), and more threads than connections only add wake-ups and hand-offs.
     */
    static final int EVENT_LOOP_THREADS = 1;

    private final ModalSettings settings;
    private final EventLoopGroup group;
    private final boolean epoll;
    /** Address to channel, in order of last release (idle ones first to go). Guarded by itself. */
    private final LinkedHashMap<String, Entry> routers = new LinkedHashMap<>(16, 0.75f, false);
    private final AtomicInteger opened = new AtomicInteger();
    /** Every channel opened (control plane included), for close. Guarded by {@link #routers}. */
    private final List<ManagedChannel> all = new ArrayList<>();
    private boolean closed;

    private static final class Entry {
        final ManagedChannel channel;
        int users;

        Entry(ManagedChannel channel) {
            this.channel = channel;
        }
    }

    ModalChannels(ModalSettings settings) {
        this.settings = settings;
        if (settings.channels != null) {
            // tests: the hook opens in-process channels, no Netty
            this.group = null;
            this.epoll = false;
            return;
        }
        FrameLogGuard.install(); // before the first Netty class logs anything
        AtomicInteger n = new AtomicInteger();
        ThreadFactory threads = r -> {
            Thread t = new Thread(r, "sandbox4j-modal-netty-" + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        };
        this.epoll = Epoll.isAvailable();
        this.group = epoll ? new EpollEventLoopGroup(EVENT_LOOP_THREADS, threads)
                : new NioEventLoopGroup(EVENT_LOOP_THREADS, threads);
    }

    /**
     * A channel with TLS on the JVM's default trust roots; plaintext only for an {@code http://} server
     * URL. Netty's HTTP/2 frame log, which would print the credentials, is silenced first ({@link FrameLogGuard}).
     */
    ManagedChannel open(String host, int port) {
        ManagedChannel ch = build(host, port);
        synchronized (routers) {
            all.removeIf(ManagedChannel::isTerminated);
            all.add(ch);
            if (closed) {
                ch.shutdownNow();
            }
        }
        return ch;
    }

    private ManagedChannel build(String host, int port) {
        opened.incrementAndGet();
        if (settings.channels != null) {
            return settings.channels.open(host, port, settings.plaintext);
        }
        FrameLogGuard.install();
        NettyChannelBuilder b = NettyChannelBuilder.forAddress(host, port)
                .eventLoopGroup(group)
                .channelType(epoll ? EpollSocketChannel.class : NioSocketChannel.class)
                .maxInboundMessageSize(ModalRpc.MAX_MESSAGE_BYTES)
                .keepAliveTime(30, TimeUnit.SECONDS)
                .keepAliveTimeout(10, TimeUnit.SECONDS)
                .keepAliveWithoutCalls(true)
                .disableRetry(); // no transport re-sends a request on its own: this client decides
        if (settings.plaintext) {
            b.usePlaintext();
        } else {
            b.useTransportSecurity();
        }
        return b.build();
    }

    /** One sandbox's use of a shared router channel; {@link #close()} gives it back, once. */
    final class Lease implements AutoCloseable {
        final ManagedChannel channel;
        private final String host;
        private final int port;
        private final java.util.concurrent.atomic.AtomicBoolean returned = new java.util.concurrent.atomic.AtomicBoolean();

        private Lease(String host, int port, ManagedChannel channel) {
            this.host = host;
            this.port = port;
            this.channel = channel;
        }

        @Override
        public void close() {
            if (returned.compareAndSet(false, true)) {
                releaseRouter(host, port);
            }
        }
    }

    /** A lease on the shared channel to the router at {@code host:port}, opened on first use. */
    Lease leaseRouter(String host, int port) {
        return new Lease(host, port, acquireRouter(host, port));
    }

    /** The shared channel to a router at {@code host:port}, opened on first use; give it back with {@link #releaseRouter}. */
    private ManagedChannel acquireRouter(String host, int port) {
        String key = key(host, port);
        synchronized (routers) {
            if (closed) {
                throw new IllegalStateException("modal: the runner is closed");
            }
            Entry e = routers.get(key);
            if (e == null || e.channel.isShutdown()) {
                e = new Entry(open(host, port));
                routers.put(key, e);
            }
            e.users++;
            return e.channel;
        }
    }

    /** One user fewer for the router at {@code host:port}; past {@link #MAX_IDLE} idle channels the oldest idle one closes. */
    private void releaseRouter(String host, int port) {
        List<ManagedChannel> close = new ArrayList<>();
        synchronized (routers) {
            String key = key(host, port);
            Entry e = routers.remove(key);
            if (e == null) {
                return;
            }
            e.users = Math.max(0, e.users - 1);
            routers.put(key, e); // re-inserted last: the most recently used
            int idle = 0;
            for (Entry x : routers.values()) {
                if (x.users == 0) {
                    idle++;
                }
            }
            for (Iterator<Entry> it = routers.values().iterator(); it.hasNext() && idle > MAX_IDLE; ) {
                Entry x = it.next();
                if (x.users == 0) {
                    it.remove();
                    close.add(x.channel);
                    idle--;
                }
            }
        }
        close.forEach(ManagedChannel::shutdown);
    }

    /** Channels opened so far (the control plane's included), for tests. */
    int openedCount() {
        return opened.get();
    }

    /** Router channels currently held, in use or idle, for tests. */
    int routerCount() {
        synchronized (routers) {
            return routers.size();
        }
    }

    private static String key(String host, int port) {
        return host + ":" + port;
    }

    /**
     * Shuts every channel down (in-flight calls are cancelled), waits up to 2 s for them to end, then
     * stops the event loop group, so that a closed runner leaves no connection and no thread behind.
     */
    @Override
    public void close() {
        List<ManagedChannel> channels;
        synchronized (routers) {
            closed = true;
            routers.clear();
            channels = new ArrayList<>(all);
            all.clear();
        }
        channels.forEach(ManagedChannel::shutdownNow);
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(2);
        boolean interrupted = Thread.interrupted();
        for (ManagedChannel ch : channels) {
            try {
                ch.awaitTermination(Math.max(0, until - System.nanoTime()), TimeUnit.NANOSECONDS);
            } catch (InterruptedException e) {
                interrupted = true;
            }
        }
        if (group != null) {
            group.shutdownGracefully(0, 2, TimeUnit.SECONDS);
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }
}
