package dev.sandbox4j.docker.internal;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketAddress;
import java.net.SocketException;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.file.Path;
import javax.net.SocketFactory;

/**
 * A {@link SocketFactory} whose sockets connect to one Unix domain socket (the Docker engine's), with the
 * JDK's own {@code SocketChannel} (Java 16+), so OkHttp speaks HTTP/1.1 to the engine with no native
 * library. The host and port OkHttp asks for are ignored. Read timeouts are not supported by these
 * channels: OkHttp's timeouts close the socket instead (Okio's watchdog), which unblocks a read; and
 * the client that uses this factory keeps no idle connections, so no health check ever waits on one.
 */
final class UnixSockets extends SocketFactory {
    private final Path path;

    UnixSockets(Path path) {
        this.path = path;
    }

    @Override
    public Socket createSocket() {
        return new UnixSocket(path);
    }

    @Override
    public Socket createSocket(String host, int port) throws IOException {
        return connected();
    }

    @Override
    public Socket createSocket(String host, int port, InetAddress localHost, int localPort) throws IOException {
        return connected();
    }

    @Override
    public Socket createSocket(InetAddress host, int port) throws IOException {
        return connected();
    }

    @Override
    public Socket createSocket(InetAddress address, int port, InetAddress localAddress, int localPort) throws IOException {
        return connected();
    }

    private Socket connected() throws IOException {
        Socket s = new UnixSocket(path);
        s.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
        return s;
    }

    /** The subset of {@link Socket} OkHttp uses, over a Unix domain {@link SocketChannel}. */
    private static final class UnixSocket extends Socket {
        private final Path path;
        private volatile SocketChannel channel;
        private volatile boolean closed;
        private volatile boolean inputShut;
        private volatile boolean outputShut;

        UnixSocket(Path path) {
            this.path = path;
        }

        @Override
        public void connect(SocketAddress endpoint) throws IOException {
            connect(endpoint, 0);
        }

        @Override
        public void connect(SocketAddress endpoint, int timeout) throws IOException {
            if (closed) {
                throw new SocketException("Socket is closed");
            }
            channel = SocketChannel.open(UnixDomainSocketAddress.of(path));
        }

        private SocketChannel channel() throws SocketException {
            SocketChannel c = channel;
            if (c == null) {
                throw new SocketException("Socket is not connected");
            }
            return c;
        }

        @Override
        public InputStream getInputStream() throws IOException {
            SocketChannel c = channel();
            // not Channels.newInputStream: its reads hold the channel's blocking lock, which would stall writes
            return new InputStream() {
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
                    return c.read(ByteBuffer.wrap(b, off, len));
                }

                @Override
                public void close() throws IOException {
                    UnixSocket.this.close();
                }
            };
        }

        @Override
        public OutputStream getOutputStream() throws IOException {
            SocketChannel c = channel();
            return new OutputStream() {
                @Override
                public void write(int b) throws IOException {
                    write(new byte[] {(byte) b}, 0, 1);
                }

                @Override
                public void write(byte[] b, int off, int len) throws IOException {
                    ByteBuffer buf = ByteBuffer.wrap(b, off, len);
                    while (buf.hasRemaining()) {
                        c.write(buf);
                    }
                }

                @Override
                public void close() throws IOException {
                    UnixSocket.this.close();
                }
            };
        }

        @Override
        public boolean isConnected() {
            return channel != null;
        }

        @Override
        public boolean isClosed() {
            return closed;
        }

        @Override
        public boolean isInputShutdown() {
            return inputShut;
        }

        @Override
        public boolean isOutputShutdown() {
            return outputShut;
        }

        @Override
        public void shutdownInput() throws IOException {
            inputShut = true;
            channel().shutdownInput();
        }

        @Override
        public void shutdownOutput() throws IOException {
            outputShut = true;
            channel().shutdownOutput();
        }

        @Override
        public synchronized void close() throws IOException {
            closed = true;
            SocketChannel c = channel;
            if (c != null) {
                c.close();
            }
        }

        @Override
        public void setSoTimeout(int timeout) {
            // see the class comment: OkHttp's timeouts close the socket
        }

        @Override
        public void setTcpNoDelay(boolean on) {
            // not a TCP socket
        }

        @Override
        public void setKeepAlive(boolean on) {
            // not a TCP socket
        }

        @Override
        public InetAddress getInetAddress() {
            return InetAddress.getLoopbackAddress();
        }

        @Override
        public SocketAddress getRemoteSocketAddress() {
            return new InetSocketAddress(InetAddress.getLoopbackAddress(), 0);
        }

        @Override
        public SocketAddress getLocalSocketAddress() {
            return new InetSocketAddress(InetAddress.getLoopbackAddress(), 0);
        }

        @Override
        public int getPort() {
            return 0;
        }

        @Override
        public int getLocalPort() {
            return 0;
        }

        @Override
        public String toString() {
            return "UnixSocket[" + path + "]";
        }
    }
}
