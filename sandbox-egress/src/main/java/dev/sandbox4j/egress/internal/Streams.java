package dev.sandbox4j.egress.internal;

import java.io.FilterOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;

/** Stream adapters: over a channel without its blocking lock (so both directions run at once), touching, metered. */
final class Streams {
    private Streams() {
    }

    /**
     * Reads a blocking channel. Not {@code Channels.newInputStream}: its streams take the channel's
     * blocking lock for every read and write, so a read waiting for the sandbox would stop the other
     * direction's writes.
     */
    static InputStream in(SocketChannel ch, Connection c) {
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
                int n = ch.read(ByteBuffer.wrap(b, off, len));
                c.touch();
                return n;
            }

            @Override
            public void close() throws IOException {
                ch.close();
            }
        };
    }

    static OutputStream out(SocketChannel ch, Connection c) {
        return new OutputStream() {
            @Override
            public void write(int b) throws IOException {
                write(new byte[] {(byte) b}, 0, 1);
            }

            @Override
            public void write(byte[] b, int off, int len) throws IOException {
                ByteBuffer buf = ByteBuffer.wrap(b, off, len);
                while (buf.hasRemaining()) {
                    ch.write(buf);
                    c.touch();
                }
            }

            @Override
            public void close() throws IOException {
                ch.close();
            }
        };
    }

    /** Touches the connection on every read. */
    static InputStream touching(InputStream in, Connection c) {
        return new InputStream() {
            @Override
            public int read() throws IOException {
                int b = in.read();
                c.touch();
                return b;
            }

            @Override
            public int read(byte[] b, int off, int len) throws IOException {
                int n = in.read(b, off, len);
                c.touch();
                return n;
            }

            @Override
            public void close() throws IOException {
                in.close();
            }
        };
    }

    /** Counts what is written against the proxy's byte budget, and touches the connection. */
    static OutputStream metered(OutputStream out, Connection c, Budget budget, boolean up) {
        return new FilterOutputStream(out) {
            @Override
            public void write(int b) throws IOException {
                write(new byte[] {(byte) b}, 0, 1);
            }

            @Override
            public void write(byte[] b, int off, int len) throws IOException {
                budget.take(len, up);
                out.write(b, off, len);
                c.touch();
            }

            @Override
            public void close() throws IOException {
                out.close();
            }
        };
    }

    /** Copies until end of stream, flushing after every read. */
    static long copy(InputStream in, OutputStream out) throws IOException {
        byte[] buf = new byte[64 << 10];
        long total = 0;
        int n;
        while ((n = in.read(buf)) >= 0) {
            if (n > 0) {
                out.write(buf, 0, n);
                out.flush();
                total += n;
            }
        }
        return total;
    }

    /** The byte budget of one proxy. */
    interface Budget {
        /** @throws ByteLimitException when taking {@code n} would pass the limit */
        void take(long n, boolean up) throws ByteLimitException;
    }

    /** The proxy's byte limit was reached. */
    static final class ByteLimitException extends IOException {
        ByteLimitException(String message) {
            super(message);
        }
    }
}
