package dev.sandbox4j.docker.internal;

import java.io.IOException;
import java.io.InputStream;

/**
 * Reads the Engine API's multiplexed exec stream (no TTY): frames of an 8-byte header (stream 1 stdout or
 * 2 stderr, three zero bytes, a big-endian 32-bit length) and that many bytes. A frame's bytes go to the
 * target in chunks as they arrive, so memory stays bounded whatever length a header claims; reading stops
 * when the target reports its cap.
 */
final class ExecStream {
    interface Target {
        /** Takes bytes of one stream; false when the hard cap is reached (stop reading). */
        boolean accept(int stream, byte[] b, int off, int len);
    }

    /** How a stream ended. */
    enum End { EOF, CAPPED }

    private ExecStream() {
    }

    static End pump(InputStream in, Target target) throws IOException {
        byte[] header = new byte[8];
        byte[] buf = new byte[64 * 1024];
        while (true) {
            int got = readFully(in, header, 8);
            if (got == 0) {
                return End.EOF;
            }
            if (got < 8) {
                throw new IOException("the exec stream ended inside a frame header");
            }
            int stream = header[0];
            if (stream != 1 && stream != 2) {
                // 0 is stdin (never attached), 3 is the engine's own error text: shown as stderr
                stream = 2;
            }
            long left = ((header[4] & 0xffL) << 24) | ((header[5] & 0xff) << 16) | ((header[6] & 0xff) << 8) | (header[7] & 0xff);
            while (left > 0) {
                int n = in.read(buf, 0, (int) Math.min(buf.length, left));
                if (n < 0) {
                    throw new IOException("the exec stream ended inside a frame");
                }
                left -= n;
                if (!target.accept(stream, buf, 0, n)) {
                    return End.CAPPED;
                }
            }
        }
    }

    private static int readFully(InputStream in, byte[] b, int len) throws IOException {
        int off = 0;
        while (off < len) {
            int n = in.read(b, off, len - off);
            if (n < 0) {
                break;
            }
            off += n;
        }
        return off;
    }
}
