package dev.sandbox4j.emulators.e2b;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * Connect streaming envelopes: one flag byte, a 4-byte big-endian length, then that many bytes of
 * JSON. Flag {@code 0x02} marks the end-of-stream message, {@code 0x01} compression (never used here).
 */
final class Envelopes {
    static final int FLAG_MESSAGE = 0x00;
    static final int FLAG_COMPRESSED = 0x01;
    static final int FLAG_END_STREAM = 0x02;
    private static final ObjectMapper JSON = new ObjectMapper();

    private Envelopes() {
    }

    /** Writes one envelope and flushes it, so the client sees each event as it happens. */
    static void write(OutputStream out, int flags, JsonNode message) throws IOException {
        byte[] payload = JSON.writeValueAsBytes(message);
        out.write(header(flags, payload.length));
        out.write(payload);
        out.flush();
    }

    static byte[] header(int flags, long length) {
        return new byte[] {(byte) flags, (byte) (length >>> 24), (byte) (length >>> 16), (byte) (length >>> 8), (byte) length};
    }

    /**
     * Reads the single enveloped request message of a server-streaming call, refusing more than
     * {@code maxBytes} of payload before reading it.
     */
    static JsonNode readSingle(InputStream in, int maxBytes) throws IOException, ConnectException {
        byte[] head = in.readNBytes(5);
        if (head.length < 5) {
            throw new ConnectException("invalid_argument", "protocol error: incomplete envelope: unexpected EOF");
        }
        int flags = head[0] & 0xff;
        long length = ((head[1] & 0xffL) << 24) | ((head[2] & 0xffL) << 16) | ((head[3] & 0xffL) << 8) | (head[4] & 0xffL);
        if ((flags & FLAG_COMPRESSED) != 0) {
            throw new ConnectException("internal", "protocol error: sent compressed message without compression support");
        }
        if (flags != FLAG_MESSAGE) {
            throw new ConnectException("invalid_argument", "protocol error: invalid envelope flags " + flags);
        }
        if (length > maxBytes) {
            throw new ConnectException("resource_exhausted",
                    "message size " + length + " is larger than configured max " + maxBytes);
        }
        byte[] payload = in.readNBytes((int) length);
        if (payload.length < length) {
            throw new ConnectException("invalid_argument", "protocol error: promised " + length
                    + " bytes in enveloped message, got " + payload.length + " bytes");
        }
        try {
            return JSON.readTree(payload);
        } catch (IOException e) {
            throw new ConnectException("invalid_argument", "unmarshal message: " + firstLine(e.getMessage()));
        }
    }

    /**
     * A hostile frame: a header declaring {@code declaredLength} bytes, then up to {@code streamBytes}
     * bytes of a never-ending stdout event, written lazily from one small buffer, so a gigabyte costs
     * the emulator nothing. Stops when the client goes away (the write fails).
     */
    static void writeHostile(OutputStream out, long declaredLength, long streamBytes) throws IOException {
        out.write(header(FLAG_MESSAGE, declaredLength));
        byte[] prefix = "{\"event\":{\"data\":{\"stdout\":\"".getBytes(StandardCharsets.US_ASCII);
        out.write(prefix);
        byte[] chunk = new byte[64 * 1024];
        Arrays.fill(chunk, (byte) 'A'); // valid base64 for as long as it goes
        long sent = prefix.length;
        while (sent < streamBytes) {
            int n = (int) Math.min(chunk.length, streamBytes - sent);
            out.write(chunk, 0, n);
            sent += n;
        }
        out.flush();
    }

    private static String firstLine(String s) {
        if (s == null) {
            return "";
        }
        int nl = s.indexOf('\n');
        return nl < 0 ? s : s.substring(0, nl);
    }
}
