package dev.sandbox4j.egress.internal;

import java.io.ByteArrayOutputStream;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;

/** The few DER encodings an X.509 certificate needs (ITU-T X.690), nothing more. */
final class Der {
    static final int INTEGER = 0x02;
    static final int BIT_STRING = 0x03;
    static final int OCTET_STRING = 0x04;
    static final int OID = 0x06;
    static final int UTF8_STRING = 0x0c;
    static final int UTC_TIME = 0x17;
    static final int GENERALIZED_TIME = 0x18;
    static final int SEQUENCE = 0x30;
    static final int SET = 0x31;
    static final int BOOLEAN = 0x01;

    private static final DateTimeFormatter UTC = DateTimeFormatter.ofPattern("yyMMddHHmmss'Z'");
    private static final DateTimeFormatter GENERALIZED = DateTimeFormatter.ofPattern("yyyyMMddHHmmss'Z'");

    private Der() {
    }

    static byte[] tlv(int tag, byte[] value) {
        ByteArrayOutputStream out = new ByteArrayOutputStream(value.length + 6);
        out.write(tag);
        int n = value.length;
        if (n < 0x80) {
            out.write(n);
        } else {
            int bytes = n > 0xffffff ? 4 : n > 0xffff ? 3 : n > 0xff ? 2 : 1;
            out.write(0x80 | bytes);
            for (int i = bytes - 1; i >= 0; i--) {
                out.write(n >>> (8 * i));
            }
        }
        out.writeBytes(value);
        return out.toByteArray();
    }

    static byte[] seq(byte[]... parts) {
        return tlv(SEQUENCE, concat(parts));
    }

    static byte[] set(byte[]... parts) {
        return tlv(SET, concat(parts));
    }

    /** A context-specific constructed tag, [n] EXPLICIT. */
    static byte[] explicit(int n, byte[] inner) {
        return tlv(0xa0 | n, inner);
    }

    /** A context-specific primitive tag, [n] IMPLICIT over a primitive value. */
    static byte[] implicit(int n, byte[] value) {
        return tlv(0x80 | n, value);
    }

    static byte[] integer(BigInteger v) {
        return tlv(INTEGER, v.toByteArray()); // two's complement, minimal: what DER wants
    }

    static byte[] integer(long v) {
        return integer(BigInteger.valueOf(v));
    }

    static byte[] bool(boolean v) {
        return tlv(BOOLEAN, new byte[] {(byte) (v ? 0xff : 0x00)});
    }

    static byte[] octets(byte[] v) {
        return tlv(OCTET_STRING, v);
    }

    /** A BIT STRING of whole bytes (no unused bits). */
    static byte[] bits(byte[] v) {
        byte[] b = new byte[v.length + 1];
        System.arraycopy(v, 0, b, 1, v.length);
        return tlv(BIT_STRING, b);
    }

    /** A BIT STRING of one byte with {@code unused} trailing bits not used. */
    static byte[] bits(int value, int unused) {
        return tlv(BIT_STRING, new byte[] {(byte) unused, (byte) value});
    }

    static byte[] utf8(String s) {
        return tlv(UTF8_STRING, s.getBytes(StandardCharsets.UTF_8));
    }

    /** UTCTime for years 1950 to 2049, GeneralizedTime after (RFC 5280 4.1.2.5). */
    static byte[] time(ZonedDateTime t) {
        ZonedDateTime utc = t.withZoneSameInstant(ZoneOffset.UTC).withNano(0);
        if (utc.getYear() < 2050) {
            return tlv(UTC_TIME, UTC.format(utc).getBytes(StandardCharsets.US_ASCII));
        }
        return tlv(GENERALIZED_TIME, GENERALIZED.format(utc).getBytes(StandardCharsets.US_ASCII));
    }

    /** An OBJECT IDENTIFIER from dotted text. */
    static byte[] oid(String dotted) {
        String[] parts = dotted.split("\\.");
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        base128(out, Long.parseLong(parts[0]) * 40 + Long.parseLong(parts[1]));
        for (int i = 2; i < parts.length; i++) {
            base128(out, Long.parseLong(parts[i]));
        }
        return tlv(OID, out.toByteArray());
    }

    private static void base128(ByteArrayOutputStream out, long v) {
        int groups = 1;
        for (long x = v >>> 7; x != 0; x >>>= 7) {
            groups++;
        }
        for (int i = groups - 1; i >= 0; i--) {
            int b = (int) ((v >>> (7 * i)) & 0x7f);
            out.write(i == 0 ? b : b | 0x80);
        }
    }

    static byte[] concat(byte[]... parts) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (byte[] p : parts) {
            out.writeBytes(p);
        }
        return out.toByteArray();
    }
}
