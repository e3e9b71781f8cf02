package dev.sandbox4j.emulators.vercel;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.zip.GZIPOutputStream;

/** Builds the gzip-tar bodies of fs/write by hand, as the SDK's tar-stream lays them out. */
final class Tars {
    private final ByteArrayOutputStream tar = new ByteArrayOutputStream();

    /** A ustar file entry; names over 100 bytes go to the prefix field (split at a slash). */
    Tars file(String name, String content, int mode) {
        byte[] data = content.getBytes(StandardCharsets.UTF_8);
        String prefix = "";
        if (name.length() > 100) {
            int cut = name.lastIndexOf('/', 155);
            prefix = name.substring(0, cut);
            name = name.substring(cut + 1);
        }
        header(name, prefix, '0', data.length, mode);
        body(data);
        return this;
    }

    Tars directory(String name) {
        header(name, "", '5', 0, 0755);
        return this;
    }

    /** A PAX extended header carrying {@code path}, then the file under a dummy short name. */
    Tars paxFile(String path, String content) {
        String record = " path=" + path + "\n";
        int len = record.getBytes(StandardCharsets.UTF_8).length;
        int total = len + Integer.toString(len).length();
        if (Integer.toString(total).length() != Integer.toString(len).length()) {
            total++;
        }
        byte[] pax = (total + record).getBytes(StandardCharsets.UTF_8);
        header("PaxHeader/x", "", 'x', pax.length, 0644);
        body(pax);
        return file("short-name-ignored", content, 0644);
    }

    /** A GNU long-name entry followed by the file. */
    Tars gnuLongName(String path, String content) {
        byte[] name = (path + "\0").getBytes(StandardCharsets.UTF_8);
        header("././@LongLink", "", 'L', name.length, 0644);
        body(name);
        return file("short", content, 0644);
    }

    Tars symlink(String name, String target) {
        byte[] h = headerBytes(name, "", '2', 0, 0777);
        byte[] t = target.getBytes(StandardCharsets.UTF_8);
        System.arraycopy(t, 0, h, 157, t.length);
        checksum(h);
        tar.writeBytes(h);
        return this;
    }

    /** A header whose checksum is wrong. */
    Tars corruptHeader(String name) {
        byte[] h = headerBytes(name, "", '0', 0, 0644);
        h[0] ^= 1;
        tar.writeBytes(h);
        return this;
    }

    byte[] gzip() {
        tar.writeBytes(new byte[1024]);
        return gzipRaw(tar.toByteArray());
    }

    /** The archive cut short after {@code length} bytes (a header promising data that never comes). */
    byte[] gzipTruncated(int length) {
        return gzipRaw(java.util.Arrays.copyOf(tar.toByteArray(), length));
    }

    static byte[] gzipRaw(byte[] raw) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        try (GZIPOutputStream gz = new GZIPOutputStream(out)) {
            gz.write(raw);
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
        return out.toByteArray();
    }

    private void header(String name, String prefix, char type, long size, int mode) {
        byte[] h = headerBytes(name, prefix, type, size, mode);
        checksum(h);
        tar.writeBytes(h);
    }

    private static byte[] headerBytes(String name, String prefix, char type, long size, int mode) {
        byte[] h = new byte[512];
        put(h, 0, name);
        put(h, 100, String.format("%07o", mode));
        put(h, 108, "0000000");
        put(h, 116, "0000000");
        put(h, 124, String.format("%011o", size));
        put(h, 136, String.format("%011o", System.currentTimeMillis() / 1000));
        h[156] = (byte) type;
        put(h, 257, "ustar");
        put(h, 263, "00");
        put(h, 345, prefix);
        return h;
    }

    private static void checksum(byte[] h) {
        for (int i = 148; i < 156; i++) {
            h[i] = ' ';
        }
        long sum = 0;
        for (byte b : h) {
            sum += b & 0xff;
        }
        put(h, 148, String.format("%06o", sum));
        h[154] = 0;
        h[155] = ' ';
    }

    private void body(byte[] data) {
        tar.writeBytes(data);
        int pad = (512 - data.length % 512) % 512;
        tar.writeBytes(new byte[pad]);
    }

    private static void put(byte[] h, int off, String s) {
        byte[] b = s.getBytes(StandardCharsets.UTF_8);
        System.arraycopy(b, 0, h, off, b.length);
    }
}
