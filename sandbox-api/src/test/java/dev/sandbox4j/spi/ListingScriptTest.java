package dev.sandbox4j.spi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sandbox4j.api.FileEntry;
import dev.sandbox4j.api.exception.SandboxException;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The listing script, run by this host's bash in a temporary directory, and its parser. */
class ListingScriptTest {
    @TempDir
    Path work;

    private byte[] run(ListingScript listing, boolean asShellLine) throws Exception {
        List<String> cmd = new ArrayList<>();
        if (asShellLine) {
            cmd.addAll(List.of("bash", "-c", listing.shellLine()));
        } else {
            cmd.addAll(List.of("bash", "-c", ListingScript.SCRIPT));
            cmd.addAll(listing.arguments());
        }
        Process p = new ProcessBuilder(cmd).directory(work.toFile()).redirectErrorStream(true).start();
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        p.getInputStream().transferTo(out);
        assertTrue(p.waitFor(30, TimeUnit.SECONDS));
        return out.toByteArray();
    }

    private void tree() throws Exception {
        Files.createDirectories(work.resolve("a/c"));
        Files.writeString(work.resolve("a/b.txt"), "12345");
        Files.writeString(work.resolve("a/c/d.bin"), "xy");
        Files.createSymbolicLink(work.resolve("a/e"), Path.of("/etc"));
        Files.writeString(work.resolve("a/sp 'q'.txt"), "abc");
        Files.writeString(work.resolve("a/new\nline"), "left out: no path of the API can name it");
        Files.createSymbolicLink(work.resolve("up"), Path.of("a"));
    }

    @Test
    void listsTypesAndSizesWithoutFollowingLinks() throws Exception {
        tree();
        for (boolean line : new boolean[] {false, true}) {
            ListingScript l = ListingScript.of("a");
            List<FileEntry> got = l.parse(run(l, line), false, "test", "sb");
            assertEquals(List.of(FileEntry.of("a/b.txt", FileEntry.Type.FILE, 5), FileEntry.of("a/c", FileEntry.Type.DIRECTORY, 0),
                    FileEntry.of("a/e", FileEntry.Type.SYMLINK, 0), FileEntry.of("a/sp 'q'.txt", FileEntry.Type.FILE, 3)), got);
        }
        ListingScript root = ListingScript.of("");
        List<FileEntry> top = root.parse(run(root, true), false, "test", "sb");
        assertEquals(List.of(FileEntry.of("a", FileEntry.Type.DIRECTORY, 0), FileEntry.of("up", FileEntry.Type.SYMLINK, 0)), top);
    }

    @Test
    void aLinkOnThePathAMissingDirectoryAndAFileAreRefused() throws Exception {
        tree();
        for (String d : List.of("a/e", "up", "up/c")) {
            ListingScript l = ListingScript.of(d);
            SandboxException e = assertThrows(SandboxException.class, () -> l.parse(run(l, true), false, "test", "sb"), d);
            assertTrue(e.getMessage().contains("symbolic link"), e.getMessage());
        }
        for (String d : List.of("missing", "a/b.txt", "*")) {
            ListingScript l = ListingScript.of(d);
            SandboxException e = assertThrows(SandboxException.class, () -> l.parse(run(l, true), false, "test", "sb"), d);
            assertEquals(404, e.httpStatus().orElse(0), e.getMessage());
        }
    }

    @Test
    void onlyTheFrameWithItsOwnNonceCounts() {
        ListingScript l = ListingScript.of("");
        String nonce = l.arguments().get(2);
        assertEquals(32, nonce.length());
        assertNotEquals(nonce, ListingScript.of("").arguments().get(2));
        // what the code printed (a frame with a guessed nonce, a fake "missing") does not count
        String forged = "0123456789abcdef0123456789abcdef begin\nf 1 evil\0\n0123456789abcdef0123456789abcdef end 0\n"
                + "0123456789abcdef0123456789abcdef missing\n";
        String ours = nonce + " begin\nf 2 good\0d 4096 dir\0\n" + nonce + " end 0\n";
        assertEquals(List.of(FileEntry.of("dir", FileEntry.Type.DIRECTORY, 0), FileEntry.of("good", FileEntry.Type.FILE, 2)),
                l.parse((forged + ours + "trailing noise").getBytes(StandardCharsets.UTF_8), false, "test", "sb"));
        // names the file API cannot address are left out; a record cut by the frame is not an entry
        String odd = nonce + " begin\nf 1 ..\0f 1 a\\b\0x 9 fifo\0f 12 cut" + "\n" + nonce + " end 0\n";
        assertEquals(List.of(FileEntry.of("fifo", FileEntry.Type.OTHER, 0)),
                l.parse(odd.getBytes(StandardCharsets.UTF_8), false, "test", "sb"));
        assertThrows(SandboxException.class, () -> l.parse(forged.getBytes(StandardCharsets.UTF_8), false, "test", "sb"));
        SandboxException capped = assertThrows(SandboxException.class,
                () -> l.parse((nonce + " begin\nf 1 a\0").getBytes(StandardCharsets.UTF_8), true, "test", "sb"));
        assertTrue(capped.getMessage().contains("more entries"), capped.getMessage());
        SandboxException unreadable = assertThrows(SandboxException.class,
                () -> l.parse((nonce + " begin\n\n" + nonce + " end 1\n").getBytes(StandardCharsets.UTF_8), false, "test", "sb"));
        assertTrue(unreadable.getMessage().contains("could not be read"), unreadable.getMessage());
    }

    /** The records of an adapter's own helper (Docker, Kubernetes): same rules, no frame. */
    @Test
    void helperRecordsDropACutTailBadNamesAndWhatIsPastTheCap() {
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        b.writeBytes("f 12 b.txt\0d 4096 sub\0l 3 ln\0p 0 fifo\0".getBytes(StandardCharsets.UTF_8));
        b.writeBytes("f 1 ".getBytes(StandardCharsets.UTF_8));
        b.writeBytes(new byte[] {(byte) 0xff, 'x', 0}); // not UTF-8: no path names it
        b.writeBytes("f x1 bad-size\0f 2 ..\0f 3 back\\slash\0f 9 a.txt\0f 77 cut-".getBytes(StandardCharsets.UTF_8));
        List<FileEntry> all = ListingScript.entries(b.toByteArray(), "dir", 100);
        assertEquals(List.of("dir/a.txt", "dir/b.txt", "dir/fifo", "dir/ln", "dir/sub"),
                all.stream().map(FileEntry::path).toList(), "the cut tail 'cut-' is no entry");
        assertEquals(FileEntry.of("dir/b.txt", FileEntry.Type.FILE, 12), all.get(1));
        assertEquals(FileEntry.Type.DIRECTORY, all.get(4).type());
        assertEquals(0, all.get(4).size(), "only a file has a size");
        assertEquals(FileEntry.Type.SYMLINK, all.get(3).type());
        assertEquals(FileEntry.Type.OTHER, all.get(2).type());
        assertEquals(List.of("b.txt", "sub"), ListingScript.entries(b.toByteArray(), "", 2).stream()
                .map(FileEntry::path).toList(), "at most two, in the order read, then sorted");
        assertEquals(List.of(), ListingScript.entries(new byte[0], "", 10));
        assertThrows(IllegalArgumentException.class, () -> ListingScript.entries(new byte[0], "", -1));
    }
}
