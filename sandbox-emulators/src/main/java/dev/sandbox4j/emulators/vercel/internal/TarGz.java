package dev.sandbox4j.emulators.vercel.internal;

import java.io.ByteArrayOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.zip.GZIPInputStream;
import java.util.zip.ZipException;

/**
 * Reads the gzip-compressed tar that {@code fs/write} receives (ustar as written by the SDK's
 * tar-stream: name plus prefix, PAX {@code x} headers for long paths; GNU {@code L} names too).
 * Only regular files and directories are accepted; links and devices are refused, so an upload can
 * never point outside the work directory.
 */
public final class TarGz {
    private static final int BLOCK = 512;

    /** One regular file or directory from the archive. */
    public static final class Entry {
        private final String name;
        private final boolean directory;
        private final int mode;
        private final byte[] content;

        Entry(String name, boolean directory, int mode, byte[] content) {
            this.name = name;
            this.directory = directory;
            this.mode = mode;
            this.content = content;
        }

        /** The entry name as stored (relative to the extraction directory). */
        public String name() {
            return name;
        }

        public boolean directory() {
            return directory;
        }

        /** Permission bits, e.g. {@code 0644}. */
        public int mode() {
            return mode;
        }

        public byte[] content() {
            return content;
        }
    }

    /** A malformed, hostile or oversized archive; answered with 400. */
    public static final class BadArchiveException extends Exception {
        BadArchiveException(String message) {
            super(message);
        }
    }

    private TarGz() {
    }

    /**
     * Reads every entry. {@code maxBytes} bounds the total uncompressed size (headers included), so a
     * gzip bomb cannot exhaust memory.
     */
    public static List<Entry> read(InputStream gzipped, long maxBytes) throws BadArchiveException, IOException {
        InputStream in;
        try {
            in = new GZIPInputStream(gzipped, 8192);
        } catch (ZipException | EOFException e) {
            throw new BadArchiveException("body is not gzip: " + e.getMessage());
        }
        Bounded tar = new Bounded(in, maxBytes);
        List<Entry> entries = new ArrayList<>();
        String paxPath = null;
        Long paxSize = null;
        String longName = null;
        byte[] header = new byte[BLOCK];
        try {
            while (true) {
                if (!tar.readBlock(header)) {
                    // Tolerate a missing end-of-archive marker, as GNU tar does.
                    return entries;
                }
                if (allZero(header)) {
                    return entries;
                }
                verifyChecksum(header);
                char type = (char) header[156];
                long size = paxSize != null ? paxSize : number(header, 124, 12, "size");
                if (size < 0 || size > maxBytes) {
                    throw new BadArchiveException("an entry of " + size + " bytes exceeds the upload limit");
                }
                switch (type) {
                    case 'x': {
                        byte[] data = tar.readData(size);
                        String[] pax = pax(data);
                        paxPath = pax[0];
                        paxSize = pax[1] == null ? null : parseDecimal(pax[1]);
                        continue;
                    }
                    case 'g':
                        tar.readData(size);
                        continue;
                    case 'L': {
                        byte[] data = tar.readData(size);
                        longName = cString(data, 0, data.length);
                        continue;
                    }
                    case '0':
                    case '\0':
                    case '7':
                    case '5':
                        break;
                    default:
                        throw new BadArchiveException("unsupported tar entry type '" + printable(type)
                                + "' (only regular files and directories are accepted)");
                }
                String name;
                if (paxPath != null) {
                    name = paxPath;
                } else if (longName != null) {
                    name = longName;
                } else {
                    name = cString(header, 0, 100);
                    String prefix = isUstar(header) ? cString(header, 345, 155) : "";
                    if (!prefix.isEmpty()) {
                        name = prefix + "/" + name;
                    }
                }
                paxPath = null;
                paxSize = null;
                longName = null;
                int mode = (int) (number(header, 100, 8, "mode") & 07777);
                boolean directory = type == '5';
                byte[] content = directory ? new byte[0] : tar.readData(size);
                if (directory && size > 0) {
                    tar.readData(size);
                }
                if (name.isEmpty()) {
                    throw new BadArchiveException("tar entry with an empty name");
                }
                entries.add(new Entry(name, directory, mode, content));
            }
        } catch (EOFException e) {
            throw new BadArchiveException("truncated archive");
        } catch (ZipException e) {
            throw new BadArchiveException("corrupt gzip stream: " + e.getMessage());
        }
    }

    private static boolean isUstar(byte[] h) {
        return h[257] == 'u' && h[258] == 's' && h[259] == 't' && h[260] == 'a' && h[261] == 'r' && h[262] == 0;
    }

    private static void verifyChecksum(byte[] h) throws BadArchiveException {
        long stored = number(h, 148, 8, "checksum");
        long unsigned = 0;
        long signed = 0;
        for (int i = 0; i < BLOCK; i++) {
            int b = (i >= 148 && i < 156) ? ' ' : h[i];
            unsigned += b & 0xff;
            signed += (i >= 148 && i < 156) ? ' ' : h[i];
        }
        if (stored != unsigned && stored != signed) {
            throw new BadArchiveException("tar header checksum mismatch");
        }
    }

    /** An octal field (NUL or space terminated), or GNU base-256 when the high bit is set. */
    private static long number(byte[] h, int off, int len, String field) throws BadArchiveException {
        if ((h[off] & 0x80) != 0) {
            long v = h[off] & 0x7f;
            for (int i = 1; i < len; i++) {
                if (v > (Long.MAX_VALUE >> 8)) {
                    throw new BadArchiveException("tar " + field + " field too large");
                }
                v = (v << 8) | (h[off + i] & 0xff);
            }
            return v;
        }
        long v = 0;
        boolean digits = false;
        for (int i = off; i < off + len; i++) {
            byte b = h[i];
            if (b == 0 || (b == ' ' && digits)) {
                break;
            }
            if (b == ' ') {
                continue;
            }
            if (b < '0' || b > '7') {
                throw new BadArchiveException("bad octal digit in tar " + field + " field");
            }
            digits = true;
            v = (v << 3) + (b - '0');
        }
        return v;
    }

    private static String cString(byte[] b, int off, int len) {
        int end = off;
        while (end < off + len && b[end] != 0) {
            end++;
        }
        return new String(b, off, end - off, StandardCharsets.UTF_8);
    }

    /** PAX records {@code "<len> <key>=<value>\n"}; returns [path, size]. */
    private static String[] pax(byte[] data) throws BadArchiveException {
        String path = null;
        String size = null;
        int pos = 0;
        while (pos < data.length) {
            int space = pos;
            while (space < data.length && data[space] != ' ') {
                space++;
            }
            if (space >= data.length) {
                break;
            }
            long len = parseDecimal(new String(data, pos, space - pos, StandardCharsets.US_ASCII));
            if (len <= space - pos || pos + len > data.length) {
                throw new BadArchiveException("bad PAX record length");
            }
            String record = new String(data, space + 1, (int) (len - (space - pos) - 2), StandardCharsets.UTF_8);
            int eq = record.indexOf('=');
            if (eq > 0) {
                String key = record.substring(0, eq);
                if (key.equals("path")) {
                    path = record.substring(eq + 1);
                } else if (key.equals("size")) {
                    size = record.substring(eq + 1);
                }
            }
            pos += (int) len;
        }
        return new String[] {path, size};
    }

    private static long parseDecimal(String s) throws BadArchiveException {
        try {
            long v = Long.parseLong(s.trim());
            if (v < 0) {
                throw new BadArchiveException("negative number in PAX header");
            }
            return v;
        } catch (NumberFormatException e) {
            throw new BadArchiveException("bad number in PAX header");
        }
    }

    private static boolean allZero(byte[] b) {
        for (byte x : b) {
            if (x != 0) {
                return false;
            }
        }
        return true;
    }

    private static String printable(char c) {
        return c >= 0x20 && c < 0x7f ? String.valueOf(c) : String.format("\\x%02x", (int) c);
    }

    /** The tar stream with a running budget of bytes. */
    private static final class Bounded {
        private final InputStream in;
        private long remaining;

        Bounded(InputStream in, long max) {
            this.in = in;
            this.remaining = max;
        }

        /** Reads one block; false at a clean end of stream. */
        boolean readBlock(byte[] block) throws IOException, BadArchiveException {
            int n = in.readNBytes(block, 0, BLOCK);
            if (n == 0) {
                return false;
            }
            if (n < BLOCK) {
                throw new EOFException();
            }
            charge(BLOCK);
            return true;
        }

        /** Reads {@code size} bytes of entry data plus the padding to the next block. */
        byte[] readData(long size) throws IOException, BadArchiveException {
            long padded = (size + BLOCK - 1) / BLOCK * BLOCK;
            charge(padded);
            ByteArrayOutputStream out = new ByteArrayOutputStream((int) Math.min(size, 1 << 20));
            byte[] buf = new byte[8192];
            long left = size;
            while (left > 0) {
                int n = in.read(buf, 0, (int) Math.min(buf.length, left));
                if (n < 0) {
                    throw new EOFException();
                }
                out.write(buf, 0, n);
                left -= n;
            }
            long pad = padded - size;
            in.skipNBytes(pad);
            return out.toByteArray();
        }

        private void charge(long n) throws BadArchiveException {
            remaining -= n;
            if (remaining < 0) {
                throw new BadArchiveException("archive exceeds the upload limit");
            }
        }
    }
}
