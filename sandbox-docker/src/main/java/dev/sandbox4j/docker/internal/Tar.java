package dev.sandbox4j.docker.internal;

import dev.sandbox4j.api.InputFile;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * A minimal POSIX ustar writer for the archives the runner copies into a container's work directory:
 * regular files and their parent directories, owned by the code's user. Paths are already normalised
 * (relative, no {@code ..}); one that does not fit a ustar header is refused rather than cut.
 */
final class Tar {
    private Tar() {
    }

    static byte[] of(List<InputFile> files, int uid, int gid) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        Set<String> dirs = new LinkedHashSet<>();
        for (InputFile f : files) {
            String p = f.path();
            for (int i = p.indexOf('/'); i > 0; i = p.indexOf('/', i + 1)) {
                dirs.add(p.substring(0, i));
            }
        }
        long now = System.currentTimeMillis() / 1000;
        for (String d : dirs) {
            header(out, d + "/", 0, 0755, '5', uid, gid, now);
        }
        for (InputFile f : files) {
            byte[] content = f.content();
            header(out, f.path(), content.length, 0644, '0', uid, gid, now);
            out.write(content, 0, content.length);
            pad(out, content.length);
        }
        out.write(new byte[1024], 0, 1024);
        return out.toByteArray();
    }

    private static void header(ByteArrayOutputStream out, String path, long size, int mode, char type, int uid, int gid, long mtime) {
        byte[] h = new byte[512];
        byte[] name = path.getBytes(StandardCharsets.UTF_8);
        if (name.length <= 100) {
            System.arraycopy(name, 0, h, 0, name.length);
        } else {
            // ustar splits a long path at a '/' into prefix (155) and name (100)
            int cut = -1;
            for (int i = name.length - 1; i > 0; i--) {
                if (name[i] == '/' && name.length - i - 1 <= 100 && i <= 155) {
                    cut = i;
                    break;
                }
            }
            if (cut < 0) {
                throw new IllegalArgumentException("input file path too long for the container archive: " + path);
            }
            System.arraycopy(name, cut + 1, h, 0, name.length - cut - 1);
            System.arraycopy(name, 0, h, 345, cut);
        }
        octal(h, 100, 8, mode);
        octal(h, 108, 8, uid);
        octal(h, 116, 8, gid);
        octal(h, 124, 12, size);
        octal(h, 136, 12, mtime);
        for (int i = 148; i < 156; i++) {
            h[i] = ' ';
        }
        h[156] = (byte) type;
        byte[] magic = "ustar\u000000".getBytes(StandardCharsets.US_ASCII);
        System.arraycopy(magic, 0, h, 257, magic.length);
        long sum = 0;
        for (byte b : h) {
            sum += b & 0xff;
        }
        octal(h, 148, 7, sum);
        out.write(h, 0, 512);
    }

    /** Zero-padded octal in {@code len - 1} digits and a NUL. */
    private static void octal(byte[] h, int off, int len, long value) {
        String s = Long.toOctalString(value);
        if (s.length() > len - 1) {
            throw new IllegalArgumentException("value too large for a tar header: " + value);
        }
        s = "0".repeat(len - 1 - s.length()) + s;
        byte[] b = s.getBytes(StandardCharsets.US_ASCII);
        System.arraycopy(b, 0, h, off, b.length);
        h[off + len - 1] = 0;
    }

    private static void pad(ByteArrayOutputStream out, long size) {
        int rest = (int) (size % 512);
        if (rest != 0) {
            out.write(new byte[512 - rest], 0, 512 - rest);
        }
    }
}
