package dev.sandbox4j.vercel.internal;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.zip.GZIPOutputStream;

/**
 * A gzip-compressed POSIX ustar archive, as Vercel's {@code fs/write} takes it: regular files and
 * directories, uid/gid 0, names relative to the extraction directory. Names longer than ustar holds
 * go in the prefix field, or in a PAX {@code path} record when even that is too short.
 */
public final class TarGz {
    private static final int BLOCK = 512;

    /** One archive member. */
    public static final class Entry {
        final String name;
        final int mode;
        final byte[] content;
        final boolean directory;

        private Entry(String name, int mode, byte[] content, boolean directory) {
            this.name = name;
            this.mode = mode;
            this.content = content;
            this.directory = directory;
        }

        public static Entry file(String name, int mode, byte[] content) {
            return new Entry(checkName(name), mode, Objects.requireNonNull(content), false);
        }

        public static Entry directory(String name, int mode) {
            return new Entry(checkName(name), mode, new byte[0], true);
        }

        private static String checkName(String name) {
            if (name == null || name.isEmpty() || name.startsWith("/") || name.indexOf('\0') >= 0) {
                throw new IllegalArgumentException("tar entry names are relative and non-empty: '" + name + "'");
            }
            return name;
        }

        @Override
        public String toString() {
            return "Entry[" + name + (directory ? "/" : ", " + content.length + " bytes") + "]";
        }
    }

    private final List<Entry> entries = new ArrayList<>();
    private final long mtimeSeconds;

    public TarGz(long mtimeSeconds) {
        this.mtimeSeconds = mtimeSeconds;
    }

    public TarGz add(Entry e) {
        entries.add(e);
        return this;
    }

    /** The whole archive, compressed. */
    public byte[] toBytes() {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (GZIPOutputStream gz = new GZIPOutputStream(bytes)) {
            for (Entry e : entries) {
                write(gz, e);
            }
            gz.write(new byte[2 * BLOCK]); // end of archive
        } catch (IOException e) {
            throw new UncheckedIOException(e); // in-memory streams do not fail
        }
        return bytes.toByteArray();
    }

    private void write(OutputStream out, Entry e) throws IOException {
        String name = e.directory && !e.name.endsWith("/") ? e.name + "/" : e.name;
        byte[] full = name.getBytes(StandardCharsets.UTF_8);
        String[] split = split(full, name);
        if (split == null) {
            byte[] record = paxRecord("path", name);
            out.write(header(ascii("PaxHeaders/" + Math.abs(name.hashCode())), "", record.length, 'x', 0644));
            out.write(record);
            pad(out, record.length);
            String shortName = shorten(name);
            out.write(header(shortName.getBytes(StandardCharsets.UTF_8), "", e.content.length,
                    e.directory ? '5' : '0', e.mode));
        } else {
            out.write(header(split[1].getBytes(StandardCharsets.UTF_8), split[0], e.content.length,
                    e.directory ? '5' : '0', e.mode));
        }
        out.write(e.content);
        pad(out, e.content.length);
    }

    /** {prefix, name} fitting ustar's 155 and 100 bytes, or null when no '/' splits it so. */
    private static String[] split(byte[] full, String name) {
        if (full.length <= 100) {
            return new String[] {"", name};
        }
        for (int i = name.indexOf('/'); i > 0; i = name.indexOf('/', i + 1)) {
            String prefix = name.substring(0, i);
            String rest = name.substring(i + 1);
            int p = prefix.getBytes(StandardCharsets.UTF_8).length;
            int r = rest.getBytes(StandardCharsets.UTF_8).length;
            if (p <= 155 && r <= 100 && r > 0) {
                return new String[] {prefix, rest};
            }
        }
        return null;
    }

    private static String shorten(String name) {
        String s = name;
        while (s.getBytes(StandardCharsets.UTF_8).length > 100) {
            s = s.substring(1);
        }
        return s;
    }

    private byte[] header(byte[] name, String prefix, long size, char type, int mode) {
        byte[] h = new byte[BLOCK];
        System.arraycopy(name, 0, h, 0, Math.min(name.length, 100));
        octal(h, 100, 8, mode & 07777);
        octal(h, 108, 8, 0);
        octal(h, 116, 8, 0);
        octal(h, 124, 12, size);
        octal(h, 136, 12, mtimeSeconds);
        h[156] = (byte) type;
        System.arraycopy(ascii("ustar\0"), 0, h, 257, 6);
        h[263] = '0';
        h[264] = '0';
        byte[] p = prefix.getBytes(StandardCharsets.UTF_8);
        System.arraycopy(p, 0, h, 345, Math.min(p.length, 155));
        for (int i = 148; i < 156; i++) {
            h[i] = ' ';
        }
        long sum = 0;
        for (byte b : h) {
            sum += b & 0xff;
        }
        octal(h, 148, 7, sum); // six digits, a NUL, and the space left in place
        return h;
    }

    /** {@code width - 1} zero-padded octal digits and a NUL. */
    private static void octal(byte[] h, int off, int width, long value) {
        String s = Long.toOctalString(value);
        if (s.length() > width - 1) {
            throw new IllegalArgumentException("value " + value + " does not fit a tar header field");
        }
        s = "0".repeat(width - 1 - s.length()) + s;
        System.arraycopy(ascii(s), 0, h, off, width - 1);
        h[off + width - 1] = 0;
    }

    /** A PAX record "LEN key=value\n", where LEN counts itself. */
    private static byte[] paxRecord(String key, String value) {
        int body = (" " + key + "=" + value + "\n").getBytes(StandardCharsets.UTF_8).length;
        int len = body + Integer.toString(body).length();
        if (Integer.toString(len).length() != Integer.toString(body).length()) {
            len++;
        }
        return (len + " " + key + "=" + value + "\n").getBytes(StandardCharsets.UTF_8);
    }

    private static void pad(OutputStream out, long written) throws IOException {
        int rest = (int) (written % BLOCK);
        if (rest != 0) {
            out.write(new byte[BLOCK - rest]);
        }
    }

    private static byte[] ascii(String s) {
        return s.getBytes(StandardCharsets.US_ASCII);
    }
}
