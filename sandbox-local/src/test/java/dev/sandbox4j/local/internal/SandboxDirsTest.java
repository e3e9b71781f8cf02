package dev.sandbox4j.local.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sandbox4j.api.InputFile;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SandboxDirsTest {
    @TempDir
    Path tmp;

    @Test
    void deletionNeverFollowsSymlinksOutOfTheTreeAndUnlocksLockedDirectories() throws IOException {
        Path outside = Files.createDirectory(tmp.resolve("outside"));
        Files.writeString(outside.resolve("precious.txt"), "keep me");
        Path root = Files.createDirectory(tmp.resolve("sandbox"));
        Path work = Files.createDirectories(root.resolve("work/a/b"));
        Files.writeString(work.resolve("deep.txt"), "x");
        Files.createSymbolicLink(root.resolve("work/link-to-dir"), outside);
        Files.createSymbolicLink(root.resolve("work/link-to-file"), outside.resolve("precious.txt"));
        Files.createSymbolicLink(root.resolve("work/a/dangling"), tmp.resolve("nowhere"));
        Path locked = Files.createDirectory(root.resolve("work/locked"));
        Files.writeString(locked.resolve("inside.txt"), "y");
        Files.setPosixFilePermissions(locked, PosixFilePermissions.fromString("---------"));
        Path readOnly = Files.createDirectory(root.resolve("work/read-only"));
        Files.writeString(readOnly.resolve("inside.txt"), "z");
        Files.setPosixFilePermissions(readOnly, PosixFilePermissions.fromString("r-x------"));

        SandboxDirs.delete(root);

        assertFalse(Files.exists(root), "the tree is gone");
        assertEquals("keep me", Files.readString(outside.resolve("precious.txt")), "a symlink target outside is untouched");
        SandboxDirs.delete(root); // idempotent
    }

    @Test
    void createMakesTheLayoutBwrapExpects() throws IOException {
        LocalSettings s = LocalSettings.builder().workRoot(tmp).dropPrivileges(false).build();
        Path root = SandboxDirs.create(s, "abc123", new byte[] {1, 2, 3, 4, 5, 6, 7, 8});
        SandboxDirs.prepareFs(s, root);
        try {
            assertTrue(root.getFileName().toString().startsWith("sandbox4j-abc123-"));
            assertEquals("rwx------", PosixFilePermissions.toString(Files.getPosixFilePermissions(root)));
            assertEquals("rwx------", PosixFilePermissions.toString(Files.getPosixFilePermissions(root.resolve("fs/work"))));
            assertEquals("rwx------", PosixFilePermissions.toString(Files.getPosixFilePermissions(root.resolve("fs/stage"))));
            assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(root.resolve("seccomp.bpf"))));
            assertTrue(Files.readString(root.resolve("owner")).startsWith(ProcessHandle.current().pid() + " "));
            assertEquals(SandboxDirs.PASSWD, Files.readString(root.resolve("etc/passwd")));
            assertTrue(Files.readString(root.resolve("etc/hosts")).contains("127.0.0.1\tlocalhost"));
            assertTrue(Files.readString(root.resolve("etc/nsswitch.conf")).contains("hosts: files dns"));
        } finally {
            SandboxDirs.delete(root);
        }
    }

    @Test
    void inputFilesAreWrittenUnderTheWorkDirAndNeverThroughASymlink() throws IOException {
        LocalSettings s = LocalSettings.builder().workRoot(tmp).dropPrivileges(false).build();
        Path outside = Files.createDirectory(tmp.resolve("outside"));
        Path work = Files.createDirectory(tmp.resolve("work"));
        Path stage = Files.createDirectory(tmp.resolve("stage"));
        SandboxDirs.writeFiles(s, work, stage, List.of(InputFile.of("a/b/c.txt", "n\u00e9sted"), InputFile.of("top.txt", "top")));
        assertEquals("n\u00e9sted", Files.readString(work.resolve("a/b/c.txt"), StandardCharsets.UTF_8));
        assertEquals("top", Files.readString(work.resolve("top.txt")));

        Files.createSymbolicLink(work.resolve("escape"), outside);
        assertThrows(IOException.class, () -> SandboxDirs.writeFiles(s, work, stage, List.of(InputFile.of("escape/x.txt", "no"))));
        Files.createSymbolicLink(work.resolve("file-link"), outside.resolve("target.txt"));
        SandboxDirs.writeFiles(s, work, stage, List.of(InputFile.of("file-link", "replaced the link, not its target")));
        assertFalse(Files.exists(outside.resolve("target.txt")));
        assertFalse(Files.isSymbolicLink(work.resolve("file-link")));
    }
}
