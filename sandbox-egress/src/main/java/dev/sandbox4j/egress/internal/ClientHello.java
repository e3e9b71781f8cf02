package dev.sandbox4j.egress.internal;

import java.io.ByteArrayOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.Locale;

/**
 * Reads the first TLS handshake message of a tunnel, the ClientHello (RFC 8446 4.1.2), from as
 * many handshake records as it spans, and finds its server_name (RFC 6066 3). The bytes read are kept
 * to be passed on unchanged.
 */
final class ClientHello {
    private static final int MAX_HELLO = 64 << 10;

    /** Everything read from the stream, to send on. */
    final byte[] raw;
    /** False when the first byte was not a TLS handshake record. */
    final boolean tls;
    /** The host_name, lower case without a trailing dot; null when absent. */
    final String serverName;

    private ClientHello(byte[] raw, boolean tls, String serverName) {
        this.raw = raw;
        this.tls = tls;
        this.serverName = serverName;
    }

    static ClientHello read(InputStream in) throws IOException {
        ByteArrayOutputStream raw = new ByteArrayOutputStream(2048);
        ByteArrayOutputStream message = new ByteArrayOutputStream(2048);
        int first = in.read();
        if (first < 0) {
            throw new EOFException("the tunnel closed before a ClientHello");
        }
        raw.write(first);
        if (first != 0x16) {
            return new ClientHello(raw.toByteArray(), false, null);
        }
        boolean firstRecord = true;
        int needed = -1;
        while (needed < 0 || message.size() < needed) {
            byte[] header = new byte[5];
            header[0] = (byte) first;
            if (firstRecord) {
                readFully(in, header, 1, 4);
            } else {
                readFully(in, header, 0, 5);
                if (header[0] != 0x16) {
                    throw new HttpHead.MalformedException("a ClientHello interrupted by a non-handshake record");
                }
            }
            raw.write(header, firstRecord ? 1 : 0, firstRecord ? 4 : 5);
            firstRecord = false;
            int len = ((header[3] & 0xff) << 8) | (header[4] & 0xff);
            if ((header[1] & 0xff) != 3 || len == 0 || len > 16384 + 2048) {
                return new ClientHello(raw.toByteArray(), false, null);
            }
            byte[] body = new byte[len];
            readFully(in, body, 0, len);
            raw.write(body, 0, len);
            message.write(body, 0, len);
            if (needed < 0 && message.size() >= 4) {
                byte[] m = message.toByteArray();
                if (m[0] != 1) {
                    return new ClientHello(raw.toByteArray(), false, null); // not a ClientHello
                }
                needed = 4 + (((m[1] & 0xff) << 16) | ((m[2] & 0xff) << 8) | (m[3] & 0xff));
                if (needed > MAX_HELLO) {
                    throw new HttpHead.MalformedException("a ClientHello longer than " + MAX_HELLO + " bytes");
                }
            }
        }
        return new ClientHello(raw.toByteArray(), true, serverName(message.toByteArray()));
    }

    /** The host_name of a ClientHello message (type and length included), or null. */
    static String serverName(byte[] m) {
        try {
            int p = 4;
            p += 2 + 32; // legacy_version, random
            p += 1 + (m[p] & 0xff); // legacy_session_id
            p += 2 + u16(m, p); // cipher_suites
            p += 1 + (m[p] & 0xff); // legacy_compression_methods
            if (p + 2 > m.length) {
                return null;
            }
            int end = p + 2 + u16(m, p);
            p += 2;
            while (p + 4 <= end) {
                int type = u16(m, p);
                int len = u16(m, p + 2);
                p += 4;
                if (type == 0) { // server_name
                    int q = p + 2; // server_name_list length
                    int listEnd = q + u16(m, p);
                    while (q + 3 <= listEnd) {
                        int nameType = m[q] & 0xff;
                        int nameLen = u16(m, q + 1);
                        q += 3;
                        if (nameType == 0) {
                            String name = new String(m, q, nameLen, StandardCharsets.US_ASCII).toLowerCase(Locale.ROOT);
                            return name.endsWith(".") ? name.substring(0, name.length() - 1) : name;
                        }
                        q += nameLen;
                    }
                    return null;
                }
                p += len;
            }
            return null;
        } catch (IndexOutOfBoundsException e) {
            return null; // truncated: treated as no name
        }
    }

    private static int u16(byte[] b, int p) {
        return ((b[p] & 0xff) << 8) | (b[p + 1] & 0xff);
    }

    private static void readFully(InputStream in, byte[] b, int off, int len) throws IOException {
        while (len > 0) {
            int n = in.read(b, off, len);
            if (n < 0) {
                throw new EOFException("the tunnel closed inside a ClientHello");
            }
            off += n;
            len -= n;
        }
    }

    /** A fatal TLS alert record, access_denied (RFC 8446 6.2): the refusal a TLS client reads. */
    static byte[] accessDeniedAlert() {
        return new byte[] {0x15, 0x03, 0x03, 0x00, 0x02, 0x02, 49};
    }
}
