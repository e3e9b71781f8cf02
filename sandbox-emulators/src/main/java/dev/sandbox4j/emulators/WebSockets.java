package dev.sandbox4j.emulators;

import java.io.ByteArrayOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Base64;

/**
 * The server side of WebSocket (RFC 6455) for the emulators whose provider streams over one (the
 * Kubernetes pod exec, Daytona's session command logs): the JDK has no WebSocket server. The 101
 * answer, and frames: the client's masked, ours unmasked and final.
 *
 * @since 0.1.0
 */
public final class WebSockets {
    /** The largest client frame read. */
    public static final int MAX_FRAME_BYTES = 16 << 20;
    private static final String WS_GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";
    /** Opcode of a text data frame. */
    public static final int TEXT = 1;
    /** Opcode of a binary data frame. */
    public static final int BINARY = 2;
    /** Opcode of a close frame. */
    public static final int CLOSE = 8;
    /** Opcode of a ping frame. */
    public static final int PING = 9;
    /** Opcode of a pong frame, the answer to a ping. */
    public static final int PONG = 10;

    private WebSockets() {
    }

    /**
     * Answers an upgrade with 101 and the accept key ({@code protocol} may be null).
     *
     * @param out the connection's output; flushed after the answer
     * @param key the client's {@code Sec-WebSocket-Key} header
     * @param protocol the subprotocol confirmed in {@code Sec-WebSocket-Protocol}, or null to send none
     * @throws IOException if writing the answer fails
     */
    public static void switchProtocols(OutputStream out, String key, String protocol) throws IOException {
        String accept;
        try {
            accept = Base64.getEncoder().encodeToString(MessageDigest.getInstance("SHA-1")
                    .digest((key + WS_GUID).getBytes(StandardCharsets.ISO_8859_1)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
        String head = "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: "
                + accept + "\r\n" + (protocol == null ? "" : "Sec-WebSocket-Protocol: " + protocol + "\r\n") + "\r\n";
        out.write(head.getBytes(StandardCharsets.ISO_8859_1));
        out.flush();
    }

    /**
     * One WebSocket frame from the client.
     *
     * @since 0.1.0
     */
    public static final class Frame {
        /** The frame's opcode, such as {@link WebSockets#TEXT} or {@link WebSockets#CLOSE}. */
        public final int opcode;
        /** The frame's payload, already unmasked. */
        public final byte[] payload;

        Frame(int opcode, byte[] payload) {
            this.opcode = opcode;
            this.payload = payload;
        }
    }

    /**
     * Reads one frame (unmasking it); control frames and data frames alike.
     *
     * @param in the connection's input, positioned at the start of a frame
     * @return the frame's opcode and unmasked payload
     * @throws IOException if the stream ends before the frame does ({@link EOFException}), the frame
     *     is longer than {@link #MAX_FRAME_BYTES}, or reading fails
     */
    public static Frame readFrame(InputStream in) throws IOException {
        int b0 = in.read();
        int b1 = in.read();
        if (b0 < 0 || b1 < 0) {
            throw new EOFException();
        }
        int opcode = b0 & 0x0f;
        boolean masked = (b1 & 0x80) != 0;
        long len = b1 & 0x7f;
        if (len == 126) {
            len = ((in.read() & 0xff) << 8) | (in.read() & 0xff);
        } else if (len == 127) {
            len = 0;
            for (int i = 0; i < 8; i++) {
                len = (len << 8) | (in.read() & 0xff);
            }
        }
        if (len > MAX_FRAME_BYTES || len < 0) {
            throw new IOException("frame too long");
        }
        byte[] mask = masked ? in.readNBytes(4) : null;
        byte[] payload = in.readNBytes((int) len);
        if (payload.length != len) {
            throw new EOFException();
        }
        if (mask != null) {
            for (int i = 0; i < payload.length; i++) {
                payload[i] ^= mask[i & 3];
            }
        }
        return new Frame(opcode, payload);
    }

    /**
     * Writes one unmasked, final frame.
     *
     * @param out the connection's output; flushed after the frame
     * @param opcode the frame's opcode, such as {@link #TEXT} or {@link #BINARY}
     * @param payload the array holding the payload
     * @param off where the payload starts in {@code payload}
     * @param len the payload's length in bytes
     * @throws IOException if writing to {@code out} fails
     */
    public static void writeFrame(OutputStream out, int opcode, byte[] payload, int off, int len) throws IOException {
        ByteArrayOutputStream h = new ByteArrayOutputStream(10);
        h.write(0x80 | opcode);
        if (len < 126) {
            h.write(len);
        } else if (len <= 0xffff) {
            h.write(126);
            h.write(len >>> 8);
            h.write(len);
        } else {
            h.write(127);
            for (int i = 7; i >= 0; i--) {
                h.write((int) (((long) len) >>> (8 * i)));
            }
        }
        out.write(h.toByteArray());
        out.write(payload, off, len);
        out.flush();
    }
}
