package dev.sandbox4j.local.internal;

import dev.sandbox4j.api.FileEntry;
import dev.sandbox4j.api.SandboxFile;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SeekableByteChannel;
import java.nio.file.DirectoryStream;
import java.nio.file.FileSystemException;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.OpenOption;
import java.nio.file.Path;
import java.nio.file.SecureDirectoryStream;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributeView;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Set;

/**
 * Reads and lists files in a sandbox's work directory without following a symbolic link anywhere:
 * each directory is opened relative to its parent's handle with O_NOFOLLOW (openat), and the file
 * itself is checked through that handle (fstatat with AT_SYMLINK_NOFOLLOW) and opened with
 * O_NOFOLLOW, so a link planted by the code, in the path or at its end, is refused rather than read.
 * Memory is bounded by the cap the caller gives, whatever the file's size.
 */
final class SandboxFiles {
    /** Entries listed per directory at most. */
    static final int MAX_LIST_ENTRIES = 10_000;
    private static final Set<OpenOption> READ_NOFOLLOW = Set.of(StandardOpenOption.READ, LinkOption.NOFOLLOW_LINKS);

    private SandboxFiles() {
    }

    /** Thrown for a path the sandbox refuses: missing, a link, not a file. */
    static final class Refused extends IOException {
        Refused(String message) {
            super(message);
        }
    }

    static SandboxFile read(Path work, String path, long maxBytes) throws IOException {
        String[] parts = path.split("/");
        List<SecureDirectoryStream<Path>> opened = new ArrayList<>();
        try {
            SecureDirectoryStream<Path> dir = walk(work, parts, parts.length - 1, opened, path);
            Path name = Path.of(parts[parts.length - 1]);
            BasicFileAttributes a;
            try {
                a = dir.getFileAttributeView(name, BasicFileAttributeView.class, LinkOption.NOFOLLOW_LINKS).readAttributes();
            } catch (NoSuchFileException e) {
                throw new Refused(path + ": no such file");
            }
            if (a.isSymbolicLink()) {
                throw new Refused(path + ": a symbolic link (not followed)");
            }
            if (!a.isRegularFile()) {
                throw new Refused(path + ": not a regular file");
            }
            try (SeekableByteChannel ch = dir.newByteChannel(name, READ_NOFOLLOW)) {
                int cap = (int) Math.min(maxBytes, Integer.MAX_VALUE - 16);
                ByteArrayOutputStream out = new ByteArrayOutputStream((int) Math.min(cap, Math.min(a.size(), 1 << 20)));
                ByteBuffer buf = ByteBuffer.allocate(64 * 1024);
                long kept = 0;
                while (kept < cap) {
                    buf.clear().limit((int) Math.min(buf.capacity(), cap - kept));
                    int n = ch.read(buf);
                    if (n < 0) {
                        break;
                    }
                    out.write(buf.array(), 0, n);
                    kept += n;
                }
                long size = Math.max(ch.size(), kept);
                return SandboxFile.builder(path).content(out.toByteArray()).size(size).truncated(size > kept).build();
            } catch (FileSystemException e) {
                throw new Refused(path + ": could not be opened without following links (" + e.getReason() + ")");
            }
        } finally {
            closeAll(opened);
        }
    }

    static List<FileEntry> list(Path work, String directory) throws IOException {
        String[] parts = directory.isEmpty() ? new String[0] : directory.split("/");
        List<SecureDirectoryStream<Path>> opened = new ArrayList<>();
        try {
            SecureDirectoryStream<Path> dir = walk(work, parts, parts.length, opened, directory.isEmpty() ? "." : directory);
            List<FileEntry> entries = new ArrayList<>();
            for (Path p : dir) {
                if (entries.size() >= MAX_LIST_ENTRIES) {
                    break;
                }
                String name = p.getFileName().toString();
                String rel = directory.isEmpty() ? name : directory + "/" + name;
                BasicFileAttributes a;
                try {
                    a = dir.getFileAttributeView(p.getFileName(), BasicFileAttributeView.class, LinkOption.NOFOLLOW_LINKS)
                            .readAttributes();
                } catch (NoSuchFileException e) {
                    continue; // removed while listing
                }
                FileEntry.Type type = a.isSymbolicLink() ? FileEntry.Type.SYMLINK : a.isDirectory() ? FileEntry.Type.DIRECTORY
                        : a.isRegularFile() ? FileEntry.Type.FILE : FileEntry.Type.OTHER;
                try {
                    entries.add(FileEntry.of(rel, type, type == FileEntry.Type.FILE ? a.size() : 0));
                } catch (IllegalArgumentException e) {
                    // a name no path of the API can address (a control character, a backslash): left out
                }
            }
            entries.sort(Comparator.comparing(FileEntry::path));
            return entries;
        } finally {
            closeAll(opened);
        }
    }

    /** Opens {@code parts[0..n)} below {@code work}, each relative to its parent, following no link. */
    private static SecureDirectoryStream<Path> walk(Path work, String[] parts, int n, List<SecureDirectoryStream<Path>> opened,
            String path) throws IOException {
        DirectoryStream<Path> ds = java.nio.file.Files.newDirectoryStream(work);
        if (!(ds instanceof SecureDirectoryStream<Path> top)) {
            ds.close();
            throw new IOException("no SecureDirectoryStream on this platform: cannot read a sandbox's files safely");
        }
        opened.add(top);
        SecureDirectoryStream<Path> dir = top;
        for (int i = 0; i < n; i++) {
            try {
                dir = dir.newDirectoryStream(Path.of(parts[i]), LinkOption.NOFOLLOW_LINKS);
            } catch (NoSuchFileException e) {
                throw new Refused(path + ": no such file or directory");
            } catch (FileSystemException e) {
                throw new Refused(path + ": '" + parts[i] + "' is not a directory (a symbolic link or a file; not followed)");
            }
            opened.add(dir);
        }
        return dir;
    }

    private static void closeAll(List<SecureDirectoryStream<Path>> opened) {
        for (int i = opened.size() - 1; i >= 0; i--) {
            try {
                opened.get(i).close();
            } catch (IOException ignored) {
                // read-only handles
            }
        }
    }
}
