package dev.sandbox4j.e2b.internal;

import java.io.EOFException;
import java.io.IOException;
import okio.BufferedSource;

/**
 * Connect protocol envelopes: one flags byte, a 4-byte big-endian length, then the payload (here
 * UTF-8 JSON). Flag 0x02 marks the end-of-stream message; 0x01 (compressed) is never requested and
 * is refused.
 */
public final class ConnectFrames {
    public static final int FLAG_END_STREAM = 0x02;
    static final int FLAG_COMPRESSED = 0x01;

    private ConnectFrames() {
    }

    /** One uncompressed message envelope around {@code payload}. */
    public static byte[] envelope(byte[] payload) {
        byte[] out = new byte[5 + payload.length];
        int n = payload.length;
        out[1] = (byte) (n >>> 24);
        out[2] = (byte) (n >>> 16);
        out[3] = (byte) (n >>> 8);
        out[4] = (byte) n;
        System.arraycopy(payload, 0, out, 5, n);
        return out;
    }

    /** One received envelope. */
    public static final class Frame {
        private final int flags;
        private final byte[] payload;

        Frame(int flags, byte[] payload) {
            this.flags = flags;
            this.payload = payload;
        }

        public boolean isEndStream() {
            return (flags & FLAG_END_STREAM) != 0;
        }

        public int flags() {
            return flags;
        }

        public byte[] payload() {
            return payload;
        }
    }

    /**
     * Reads envelopes from a response body. The length prefix is checked against {@code maxFrameBytes}
     * before anything is buffered, so a hostile prefix (0xFFFFFFFF, or a gigabyte) costs nothing.
     */
    public static final class Reader {
        private final BufferedSource source;
        private final int maxFrameBytes;

        public Reader(BufferedSource source, int maxFrameBytes) {
            this.source = source;
            this.maxFrameBytes = maxFrameBytes;
        }

        /**
         * The next envelope, or null at a clean end of the body (between envelopes).
         *
         * @throws StreamRefusedException for an oversized, compressed or unknown frame
         * @throws EOFException when the body ends inside an envelope
         */
        public Frame next() throws IOException {
            if (source.exhausted()) {
                return null;
            }
            if (!source.request(5)) {
                throw new EOFException("stream ended inside an envelope header");
            }
            int flags = source.readByte() & 0xff;
            long length = source.readInt() & 0xffffffffL;
            if ((flags & FLAG_COMPRESSED) != 0) {
                throw new StreamRefusedException("compressed envelope (flags 0x" + Integer.toHexString(flags)
                        + ") although no compression was offered");
            }
            if ((flags & ~FLAG_END_STREAM) != 0) {
                throw new StreamRefusedException("unknown envelope flags 0x" + Integer.toHexString(flags));
            }
            if (length > maxFrameBytes) {
                throw new StreamRefusedException("envelope of " + length + " bytes exceeds the limit of "
                        + maxFrameBytes + " bytes");
            }
            if (!source.request(length)) {
                throw new EOFException("stream ended inside an envelope of " + length + " bytes");
            }
            return new Frame(flags, source.readByteArray(length));
        }
    }
}
