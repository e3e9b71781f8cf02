package dev.sandbox4j.egress.internal;

import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLEngineResult;
import javax.net.ssl.SSLException;

/**
 * TLS over a pair of blocking streams with an {@link SSLEngine}: the sandbox's side of a brokered
 * tunnel arrives over a channel (a unix socket has no {@code Socket} to layer an {@code SSLSocket}
 * on). Reads and writes may run on two threads: each side has its own lock, and a wrap the read side
 * needs (a post-handshake message) takes the write lock.
 */
final class TlsStream {
    private final SSLEngine engine;
    private final InputStream rawIn;
    private final OutputStream rawOut;
    private final Object readLock = new Object();
    private final Object writeLock = new Object();
    private ByteBuffer netIn;
    private ByteBuffer appIn;
    private ByteBuffer netOut;
    private final byte[] readBuf;
    private boolean inboundDone;

    TlsStream(SSLEngine engine, byte[] initial, InputStream rawIn, OutputStream rawOut) {
        this.engine = engine;
        this.rawIn = rawIn;
        this.rawOut = rawOut;
        int packet = engine.getSession().getPacketBufferSize();
        this.netIn = ByteBuffer.allocate(Math.max(packet, initial.length));
        this.netIn.put(initial).flip();
        this.appIn = ByteBuffer.allocate(engine.getSession().getApplicationBufferSize());
        this.appIn.flip();
        this.netOut = ByteBuffer.allocate(packet);
        this.readBuf = new byte[packet];
    }

    void handshake() throws IOException {
        engine.beginHandshake();
        while (true) {
            switch (engine.getHandshakeStatus()) {
                case NEED_UNWRAP:
                case NEED_UNWRAP_AGAIN:
                    synchronized (readLock) {
                        if (!unwrapOnce()) {
                            throw new EOFException("the client closed during the TLS handshake");
                        }
                    }
                    break;
                case NEED_WRAP:
                    synchronized (writeLock) {
                        wrap(ByteBuffer.allocate(0));
                    }
                    break;
                case NEED_TASK:
                    runTasks();
                    break;
                default:
                    return;
            }
        }
    }

    private void runTasks() {
        Runnable r;
        while ((r = engine.getDelegatedTask()) != null) {
            r.run();
        }
    }

    /** One unwrap from the network buffer, reading the stream when it holds too little; false at end. */
    private boolean unwrapOnce() throws IOException {
        while (true) {
            appIn.compact();
            SSLEngineResult r;
            try {
                r = engine.unwrap(netIn, appIn);
            } finally {
                appIn.flip();
            }
            switch (r.getStatus()) {
                case OK:
                    if (r.getHandshakeStatus() == SSLEngineResult.HandshakeStatus.NEED_TASK) {
                        runTasks();
                    }
                    return true;
                case CLOSED:
                    inboundDone = true;
                    return false;
                case BUFFER_OVERFLOW:
                    ByteBuffer bigger = ByteBuffer.allocate(appIn.capacity() * 2);
                    bigger.put(appIn).flip();
                    appIn = bigger;
                    break;
                case BUFFER_UNDERFLOW:
                    if (netIn.limit() == netIn.capacity() && netIn.position() == 0) {
                        ByteBuffer grown = ByteBuffer.allocate(netIn.capacity() * 2);
                        grown.put(netIn).flip();
                        netIn = grown;
                    }
                    int n = rawIn.read(readBuf, 0, Math.min(readBuf.length, netIn.capacity() - netIn.remaining()));
                    if (n < 0) {
                        inboundDone = true;
                        return false;
                    }
                    netIn.compact();
                    netIn.put(readBuf, 0, n);
                    netIn.flip();
                    break;
                default:
                    throw new SSLException("unexpected unwrap status " + r.getStatus());
            }
        }
    }

    private void wrap(ByteBuffer src) throws IOException {
        while (true) {
            netOut.clear();
            SSLEngineResult r = engine.wrap(src, netOut);
            if (r.getStatus() == SSLEngineResult.Status.BUFFER_OVERFLOW) {
                netOut = ByteBuffer.allocate(netOut.capacity() * 2);
                continue;
            }
            if (r.getHandshakeStatus() == SSLEngineResult.HandshakeStatus.NEED_TASK) {
                runTasks();
            }
            netOut.flip();
            if (netOut.hasRemaining()) {
                rawOut.write(netOut.array(), 0, netOut.limit());
                rawOut.flush();
            }
            if (r.getStatus() == SSLEngineResult.Status.CLOSED) {
                if (src.hasRemaining()) {
                    throw new SSLException("the TLS session is closed");
                }
                return;
            }
            if (!src.hasRemaining()) {
                return;
            }
        }
    }

    final InputStream in = new InputStream() {
        @Override
        public int read() throws IOException {
            byte[] one = new byte[1];
            int n = read(one, 0, 1);
            return n < 0 ? -1 : one[0] & 0xff;
        }

        @Override
        public int read(byte[] b, int off, int len) throws IOException {
            if (len == 0) {
                return 0;
            }
            synchronized (readLock) {
                while (!appIn.hasRemaining()) {
                    if (inboundDone || !unwrapOnce()) {
                        return -1;
                    }
                    // a post-handshake message (a KeyUpdate, say) may need an answer
                    while (engine.getHandshakeStatus() == SSLEngineResult.HandshakeStatus.NEED_WRAP) {
                        synchronized (writeLock) {
                            wrap(ByteBuffer.allocate(0));
                        }
                    }
                }
                int n = Math.min(len, appIn.remaining());
                appIn.get(b, off, n);
                return n;
            }
        }

        @Override
        public int available() {
            return appIn.remaining();
        }
    };

    final OutputStream out = new OutputStream() {
        @Override
        public void write(int b) throws IOException {
            write(new byte[] {(byte) b}, 0, 1);
        }

        @Override
        public void write(byte[] b, int off, int len) throws IOException {
            synchronized (writeLock) {
                wrap(ByteBuffer.wrap(b, off, len));
            }
        }
    };

    /** Sends close_notify (best effort). */
    void closeOutbound() {
        try {
            synchronized (writeLock) {
                engine.closeOutbound();
                wrap(ByteBuffer.allocate(0));
            }
        } catch (IOException ignored) {
            // the peer went first
        }
    }
}
