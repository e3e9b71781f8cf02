package dev.sandbox4j.tck;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import dev.sandbox4j.api.Execution;
import dev.sandbox4j.api.FileEntry;
import dev.sandbox4j.api.RunResult;
import dev.sandbox4j.api.Sandbox;
import dev.sandbox4j.api.exception.SandboxException;
import dev.sandbox4j.api.SandboxFile;
import dev.sandbox4j.api.SandboxSpec;
import dev.sandbox4j.policy.Capabilities;
import dev.sandbox4j.policy.Language;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * Contract cases. Files back from the sandbox: read exact and binary-safe, cut at a cap with the sizes
 * right, paths out of the working directory refused (climbing, absolute, through symbolic links),
 * directories listed, and files collected by a one-shot run before its teardown. Part of
 * {@link SandboxRunnerContract}; skipped by {@code Feature.READ_FILES} and {@code Feature.LIST_FILES}.
 *
 * @since 0.1.0
 */
public interface FilesCases extends ContractContext {
    /** Python that writes every byte value 0..255 once to {@code bytes.bin}. */
    String ALL_BYTES = "open('bytes.bin', 'wb').write(bytes(range(256)))\n";

    /** Python's standard library only: a 4x3 red PNG at out/chart.png; prints its length. */
    String PNG_CODE = "import os, struct, zlib\n"
            + "w, h = 4, 3\n"
            + "raw = b''.join(b'\\x00' + bytes([255, 0, 0] * w) for _ in range(h))\n"
            + "def chunk(t, d):\n"
            + "    return struct.pack('>I', len(d)) + t + d + struct.pack('>I', zlib.crc32(t + d) & 0xffffffff)\n"
            + "png = (b'\\x89PNG\\r\\n\\x1a\\n' + chunk(b'IHDR', struct.pack('>IIBBBBB', w, h, 8, 2, 0, 0, 0))\n"
            + "       + chunk(b'IDAT', zlib.compress(raw)) + chunk(b'IEND', b''))\n"
            + "os.makedirs('out', exist_ok=True)\n"
            + "open('out/chart.png', 'wb').write(png)\n"
            + "open('out/notes.txt', 'w').write('not a png')\n"
            + "print(len(png))\n";

    private static byte[] allBytes() {
        byte[] b = new byte[256];
        for (int i = 0; i < b.length; i++) {
            b[i] = (byte) i;
        }
        return b;
    }

    /**
     * In an opened sandbox Python writes {@link #ALL_BYTES}; {@code readFile("bytes.bin", 1024)} fails the
     * case unless it returns the 256 byte values in order, size 256, not truncated, path {@code bytes.bin} and
     * media type {@code application/octet-stream}, and the same content comes back for {@code ./bytes.bin}.
     * (The body's comment also names a doubled slash; no such path is read.) Skipped without
     * {@code Feature.READ_FILES} or {@code Language.PYTHON}.
     */
    @Test
    default void aFileWithAllByteValuesComesBackExact() {
        requireFeature(Capabilities.Feature.READ_FILES);
        requireLanguage(Language.PYTHON);
        try (Sandbox sandbox = runner().open(SandboxSpec.defaults())) {
            assertExited(sandbox.exec(Execution.python(ALL_BYTES)), 0);
            SandboxFile f = sandbox.readFile("bytes.bin", 1024);
            assertArrayEquals(allBytes(), f.content());
            assertEquals(256, f.size());
            assertFalse(f.truncated());
            assertEquals("bytes.bin", f.path());
            assertEquals("application/octet-stream", f.mediaType());
            // the same file through './' and a doubled slash: paths are normalised
            assertArrayEquals(allBytes(), sandbox.readFile("./bytes.bin", 1024).content());
        }
    }

    /**
     * {@code readFile("no-such-file.txt", 1024)} in a fresh sandbox must throw a {@code SandboxException} (any
     * subtype); fails when it returns or throws anything else. Skipped without {@code Feature.READ_FILES}.
     */
    @Test
    default void aMissingFileIsAnError() {
        requireFeature(Capabilities.Feature.READ_FILES);
        try (Sandbox sandbox = runner().open(SandboxSpec.defaults())) {
            assertThrows(SandboxException.class, () -> sandbox.readFile("no-such-file.txt", 1024));
        }
    }

    /**
     * Python writes {@code big.bin}, 20 MiB whose byte i is {@code i % 251}. Read with a 1 MiB cap it must be
     * marked truncated, with size 20 MiB, content length 1 MiB and every kept byte in its place; read with a
     * cap of 0, content length 0, size 20 MiB, truncated. Then a one-shot run that writes the same file and
     * collects {@code big.bin} with a per-file cap of 1 MiB must exit 0 and collect exactly that one file,
     * with size 20 MiB, content length 1 MiB, truncated (its bytes are not compared there). Fails on any of
     * these. Skipped without {@code Feature.READ_FILES} or {@code Language.PYTHON}.
     */
    @Test
    default void aLargeFileIsCutAtTheCapWithItsSizeReported() {
        requireFeature(Capabilities.Feature.READ_FILES);
        requireLanguage(Language.PYTHON);
        long size = 20L * 1024 * 1024;
        int cap = 1024 * 1024;
        // byte i is i % 251, so a cut in the wrong place shows
        String code = "data = bytes(i % 251 for i in range(251)) * (" + size + " // 251 + 1)\n"
                + "open('big.bin', 'wb').write(data[:" + size + "])\n";
        try (Sandbox sandbox = runner().open(SandboxSpec.defaults())) {
            assertExited(sandbox.exec(Execution.builder(code).budget(Duration.ofSeconds(60)).build()), 0);
            SandboxFile f = sandbox.readFile("big.bin", cap);
            assertTrue(f.truncated(), "a 20 MiB file read with a 1 MiB cap must be truncated: " + f);
            assertEquals(size, f.size());
            assertEquals(cap, f.contentLength());
            byte[] b = f.content();
            for (int i = 0; i < b.length; i++) {
                if (b[i] != (byte) (i % 251)) {
                    throw new AssertionError("byte " + i + " is " + b[i]);
                }
            }
            SandboxFile none = sandbox.readFile("big.bin", 0);
            assertEquals(0, none.contentLength());
            assertEquals(size, none.size());
            assertTrue(none.truncated());
        }
        // a one-shot run collects it cut at the per-file cap, its size still right
        RunResult r = run(SandboxSpec.defaults(), Execution.builder(code).budget(Duration.ofSeconds(60))
                .collect("big.bin").collectFileBytes(cap).build());
        assertExited(r, 0);
        assertEquals(1, r.files().size(), () -> "files: " + r.files() + ", problems: " + r.fileProblems());
        SandboxFile f = r.files().get(0);
        assertEquals(size, f.size());
        assertEquals(cap, f.contentLength());
        assertTrue(f.truncated());
    }

    /**
     * Python makes {@code d/inside.txt} and three symbolic links: {@code link-to-file} to
     * {@code /etc/hostname}, {@code link-to-dir} to {@code /etc}, {@code link-inside} to {@code d}.
     * {@code readFile} must throw {@code IllegalArgumentException} for {@code ../x}, {@code d/../../x},
     * {@code /etc/passwd}, {@code /sandbox/d/inside.txt}, {@code ..} and a path climbing with backslashes;
     * {@code SandboxException} for each path through a link, the one that stays inside too; and read
     * {@code d/inside.txt} as {@code inside}. With {@code Feature.LIST_FILES}, {@code listFiles} must throw
     * {@code SandboxException} for {@code link-to-dir} and {@code IllegalArgumentException} for {@code ..} and
     * {@code /etc}. {@code Execution.Builder.collect} must refuse {@code ../*.txt} and {@code /etc/*} with
     * {@code IllegalArgumentException}. Fails on any other outcome. Skipped without
     * {@code Feature.READ_FILES} or {@code Language.PYTHON}.
     */
    @Test
    default void pathsOutOfTheWorkingDirectoryAreRefused() {
        requireFeature(Capabilities.Feature.READ_FILES);
        requireLanguage(Language.PYTHON);
        try (Sandbox sandbox = runner().open(SandboxSpec.defaults())) {
            assertExited(sandbox.exec(Execution.python("import os\n"
                    + "os.makedirs('d', exist_ok=True)\n"
                    + "open('d/inside.txt', 'w').write('inside')\n"
                    + "os.symlink('/etc/hostname', 'link-to-file')\n"
                    + "os.symlink('/etc', 'link-to-dir')\n"
                    + "os.symlink('d', 'link-inside')\n")), 0);
            for (String p : List.of("../x", "d/../../x", "/etc/passwd", "/sandbox/d/inside.txt", "..", "d/..\\..\\x")) {
                assertThrows(IllegalArgumentException.class, () -> sandbox.readFile(p, 1024), p);
            }
            // a link is never followed, even one that stays inside: the reader cannot tell where it points
            for (String p : List.of("link-to-file", "link-to-dir/hostname", "link-to-dir/passwd", "link-inside/inside.txt")) {
                assertThrows(SandboxException.class, () -> sandbox.readFile(p, 1024), p);
            }
            assertEquals("inside", new String(sandbox.readFile("d/inside.txt", 1024).content()));
            if (runner().capabilities().supports(Capabilities.Feature.LIST_FILES)) {
                assertThrows(SandboxException.class, () -> sandbox.listFiles("link-to-dir"));
                assertThrows(IllegalArgumentException.class, () -> sandbox.listFiles(".."));
                assertThrows(IllegalArgumentException.class, () -> sandbox.listFiles("/etc"));
            }
        }
        assertThrows(IllegalArgumentException.class, () -> Execution.builder("pass").collect("../*.txt"));
        assertThrows(IllegalArgumentException.class, () -> Execution.builder("pass").collect("/etc/*"));
    }

    /**
     * Python makes {@code a/b.txt} (5 bytes), {@code a/c/d.bin} and a link {@code a/e} to {@code /etc}.
     * {@code listFiles("a")} must list exactly, in this order, {@code a/b.txt} as a file of size 5,
     * {@code a/c} as a directory and {@code a/e} as a symbolic link (the sizes of the directory and the link
     * are not compared, and {@code a/c/d.bin} must not appear: the listing is one level); {@code listFiles("")}
     * must hold the directory {@code a}; {@code listFiles("missing")} must throw {@code SandboxException}.
     * Fails otherwise. Skipped without {@code Feature.LIST_FILES} or {@code Language.PYTHON}.
     */
    @Test
    default void aDirectoryIsListedWithTypesAndSizes() {
        requireFeature(Capabilities.Feature.LIST_FILES);
        requireLanguage(Language.PYTHON);
        try (Sandbox sandbox = runner().open(SandboxSpec.defaults())) {
            assertExited(sandbox.exec(Execution.python("import os\n"
                    + "os.makedirs('a/c', exist_ok=True)\n"
                    + "open('a/b.txt', 'w').write('12345')\n"
                    + "open('a/c/d.bin', 'wb').write(b'xy')\n"
                    + "os.symlink('/etc', 'a/e')\n")), 0);
            List<FileEntry> a = sandbox.listFiles("a");
            assertEquals(List.of(FileEntry.of("a/b.txt", FileEntry.Type.FILE, 5), FileEntry.of("a/c", FileEntry.Type.DIRECTORY, 0),
                    FileEntry.of("a/e", FileEntry.Type.SYMLINK, 0)), a.stream().map(e -> e.isDirectory() || e.type() == FileEntry.Type.SYMLINK
                            ? FileEntry.of(e.path(), e.type(), 0) : e).collect(Collectors.toList()));
            assertTrue(sandbox.listFiles("").stream().anyMatch(e -> e.path().equals("a") && e.isDirectory()));
            assertThrows(SandboxException.class, () -> sandbox.listFiles("missing"));
        }
    }

    /**
     * A one-shot run of {@link #PNG_CODE} collecting {@code out/*.png} (by name, {@code out/chart.png}, where
     * the runner does not declare {@code Feature.LIST_FILES}) and {@code missing.csv}. Fails unless it exits
     * 0 and collects exactly one file, {@code out/chart.png}, named {@code chart.png}, of media type
     * {@code image/png}, not truncated, of the size the code printed, with the PNG signature and an
     * {@code IHDR} of width 4 and height 3, and the file problems name {@code missing.csv}. Skipped without
     * {@code Feature.READ_FILES} or {@code Language.PYTHON}.
     */
    @Test
    default void aPngWrittenWithTheStandardLibraryIsCollected() {
        requireFeature(Capabilities.Feature.READ_FILES);
        requireLanguage(Language.PYTHON);
        // by glob where the runner lists, else by name
        String which = runner().capabilities().supports(Capabilities.Feature.LIST_FILES) ? "out/*.png" : "out/chart.png";
        RunResult r = run(SandboxSpec.defaults(), Execution.builder(PNG_CODE).collect(which).collect("missing.csv").build());
        assertExited(r, 0);
        assertEquals(1, r.files().size(), () -> "files: " + r.files() + ", problems: " + r.fileProblems());
        SandboxFile png = r.files().get(0);
        assertEquals("out/chart.png", png.path());
        assertEquals("chart.png", png.name());
        assertEquals("image/png", png.mediaType());
        assertFalse(png.truncated());
        assertEquals(Long.parseLong(r.stdout().strip()), png.size());
        byte[] b = png.content();
        assertArrayEquals(new byte[] {(byte) 0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'}, Arrays.copyOf(b, 8));
        assertEquals(4, ByteBuffer.wrap(b, 16, 4).getInt(), "IHDR width");
        assertEquals(3, ByteBuffer.wrap(b, 20, 4).getInt(), "IHDR height");
        assertTrue(r.fileProblems().stream().anyMatch(p -> p.startsWith("missing.csv")), () -> "problems: " + r.fileProblems());
    }

    /**
     * A one-shot run writes five 100-byte files {@code out/f0.txt} to {@code out/f4.txt} and a link
     * {@code out/z.txt} to {@code /etc/hostname}, collecting <code>**&#47;*.txt</code> and {@code out/z.txt}
     * under a run cap of 250 bytes. Fails unless it exits 0, no {@code out/z.txt} is collected, the collected
     * files keep at most 250 content bytes in all, the first collected is {@code out/f0.txt}, and the file
     * problems name {@code out/z.txt}. Skipped without {@code Feature.READ_FILES}, {@code Feature.LIST_FILES}
     * or {@code Language.PYTHON}.
     */
    @Test
    default void collectingFollowsNoLinkAndKeepsToTheRunCap() {
        requireFeature(Capabilities.Feature.READ_FILES);
        requireFeature(Capabilities.Feature.LIST_FILES);
        requireLanguage(Language.PYTHON);
        RunResult r = run(SandboxSpec.defaults(), Execution.builder("import os\n"
                        + "os.makedirs('out', exist_ok=True)\n"
                        + "for i in range(5):\n"
                        + "    open('out/f%d.txt' % i, 'w').write('x' * 100)\n"
                        + "os.symlink('/etc/hostname', 'out/z.txt')\n")
                .collect("**/*.txt").collect("out/z.txt").collectTotalBytes(250).build());
        assertExited(r, 0);
        List<String> paths = r.files().stream().map(SandboxFile::path).toList();
        assertFalse(paths.contains("out/z.txt"), () -> "a symlink was collected: " + r.files());
        long kept = r.files().stream().mapToLong(SandboxFile::contentLength).sum();
        assertTrue(kept <= 250, "kept " + kept + " bytes over a 250-byte run cap");
        assertEquals("out/f0.txt", paths.get(0));
        assertTrue(r.fileProblems().stream().anyMatch(p -> p.startsWith("out/z.txt")), () -> "problems: " + r.fileProblems());
    }
}
