package dev.sandbox4j.vercel.internal;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.zip.GZIPInputStream;

/** A minimal ustar + PAX reader for tests, asserting the framing as it goes. */
public final class TarReader {
    private TarReader() {
    }

    public static final class Member {
        public String name;
        public int mode;
        public int uid;
        public int gid;
        public String uname;
        public String gname;
        public char type;
        public byte[] content;
    }

    public static byte[] gunzip(byte[] gz) throws IOException {
        try (GZIPInputStream in = new GZIPInputStream(new ByteArrayInputStream(gz))) {
            return in.readAllBytes();
        }
    }

    public static int tarLength(byte[] gz) throws IOException {
        return gunzip(gz).length;
    }

    public static List<Member> read(byte[] gz) throws IOException {
        byte[] tar = gunzip(gz);
        assertEquals(0, tar.length % 512, "whole blocks");
        java.util.List<Member> out = new java.util.ArrayList<>();
        int pos = 0;
        String paxPath = null;
        while (pos + 512 <= tar.length) {
            byte[] h = java.util.Arrays.copyOfRange(tar, pos, pos + 512);
            if (java.util.Arrays.equals(h, new byte[512])) {
                assertArrayEquals(new byte[512], java.util.Arrays.copyOfRange(tar, pos + 512, pos + 1024),
                        "a second zero block");
                assertEquals(tar.length, pos + 1024, "nothing after the end blocks");
                return out;
            }
            long sum = 0;
            for (int i = 0; i < 512; i++) {
                sum += i >= 148 && i < 156 ? ' ' : h[i] & 0xff;
            }
            assertEquals(sum, octal(h, 148, 8), "checksum");
            assertEquals("ustar\0", new String(h, 257, 6, StandardCharsets.US_ASCII));
            int size = (int) octal(h, 124, 12);
            byte[] content = java.util.Arrays.copyOfRange(tar, pos + 512, pos + 512 + size);
            pos += 512 + (size + 511) / 512 * 512;
            char type = (char) h[156];
            if (type == 'x') {
                String rec = new String(content, StandardCharsets.UTF_8);
                int sp = rec.indexOf(' ');
                assertEquals(Integer.parseInt(rec.substring(0, sp)), content.length, "PAX record length");
                paxPath = rec.substring(rec.indexOf("path=") + 5, rec.length() - 1);
                continue;
            }
            Member m = new Member();
            String prefix = string(h, 345, 155);
            m.name = paxPath != null ? paxPath : prefix.isEmpty() ? string(h, 0, 100) : prefix + "/" + string(h, 0, 100);
            paxPath = null;
            m.mode = (int) octal(h, 100, 8);
            m.uid = (int) octal(h, 108, 8);
            m.gid = (int) octal(h, 116, 8);
            m.uname = string(h, 265, 32);
            m.gname = string(h, 297, 32);
            m.type = type;
            m.content = content;
            out.add(m);
        }
        throw new AssertionError("no end-of-archive blocks");
    }

    private static String string(byte[] h, int off, int len) {
        int end = off;
        while (end < off + len && h[end] != 0) {
            end++;
        }
        return new String(h, off, end - off, StandardCharsets.UTF_8);
    }

    private static long octal(byte[] h, int off, int len) {
        String s = string(h, off, len).trim();
        return s.isEmpty() ? 0 : Long.parseLong(s, 8);
    }
}
