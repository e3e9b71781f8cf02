package dev.sandbox4j.local.internal;

import dev.sandbox4j.api.InputFile;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.AccessDeniedException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.SecureDirectoryStream;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFileAttributeView;
import java.nio.file.attribute.PosixFileAttributes;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;

/** The per-sandbox host directory: creation, synthetic /etc files, input files, and deletion. */
final class SandboxDirs {
    private static final int MAX_DEPTH = 100;
    private static final Set<PosixFilePermission> OWNER_ONLY = PosixFilePermissions.fromString("rwx------");
    private static final Set<PosixFilePermission> TRAVERSE = PosixFilePermissions.fromString("rwx--x--x");
    private static final Set<PosixFilePermission> READABLE_DIR = PosixFilePermissions.fromString("rwxr-xr-x");
    private static final Set<PosixFilePermission> READABLE_FILE = PosixFilePermissions.fromString("rw-r--r--");

    static final String PASSWD = "root:x:0:0:root:/root:/usr/sbin/nologin\n"
            + "sandbox:x:1000:1000:sandbox:/sandbox:/bin/bash\n"
            + "nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n";
    static final String GROUP = "root:x:0:\nsandbox:x:1000:\nnogroup:x:65534:\n";
    static final String HOSTS = "127.0.0.1\tlocalhost sandbox\n::1\tlocalhost ip6-localhost ip6-loopback\n";
    static final String NSSWITCH = "passwd: files\ngroup: files\nshadow: files\nhosts: files dns\n"
            + "networks: files\nprotocols: files\nservices: files\n";

    private SandboxDirs() {
    }

    /**
     * Creates {@code <workRoot>/sandbox4j-<runId>-*}: {@code work/} (0700, owned by the drop uid when
     * root) and {@code etc/} (read-only to the sandbox). When root, the root dir is 0711 so that bwrap,
     * running as the drop uid, can reach its two children but not list the directory.
     */
    static Path create(LocalSettings s, String runId) throws IOException {
        Path root = Files.createTempDirectory(s.workRoot(), "sandbox4j-" + runId + "-");
        try {
            Path work = Files.createDirectory(root.resolve("work"));
            Files.setPosixFilePermissions(work, OWNER_ONLY);
            Path etc = Files.createDirectory(root.resolve("etc"));
            write(etc.resolve("passwd"), PASSWD);
            write(etc.resolve("group"), GROUP);
            write(etc.resolve("hosts"), HOSTS);
            write(etc.resolve("nsswitch.conf"), NSSWITCH);
            Files.setPosixFilePermissions(etc, READABLE_DIR);
            if (s.dropPrivileges()) {
                chown(s, work);
                Files.setPosixFilePermissions(root, TRAVERSE);
            } else {
                Files.setPosixFilePermissions(root, OWNER_ONLY);
            }
            return root;
        } catch (IOException | RuntimeException e) {
            try {
                delete(root);
            } catch (IOException suppressed) {
                e.addSuppressed(suppressed);
            }
            throw e;
        }
    }

    private static void write(Path file, String content) throws IOException {
        Files.writeString(file, content, StandardCharsets.UTF_8, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE);
        Files.setPosixFilePermissions(file, READABLE_FILE);
    }

    /**
     * Writes input files under {@code work}, refusing to follow any symlink (the sandbox may have
     * created some in earlier executions) and creating parent directories owned by the sandbox user.
     */
    static void writeFiles(LocalSettings s, Path work, List<InputFile> files) throws IOException {
        for (InputFile f : files) {
            Path target = work;
            String[] parts = f.path().split("/");
            for (int i = 0; i < parts.length - 1; i++) {
                target = target.resolve(parts[i]);
                if (Files.isSymbolicLink(target)) {
                    throw new IOException("input file " + f.path() + ": '" + parts[i] + "' is a symbolic link in the sandbox");
                }
                if (!Files.isDirectory(target, LinkOption.NOFOLLOW_LINKS)) {
                    Files.createDirectory(target);
                    if (s.dropPrivileges()) {
                        chown(s, target);
                    }
                }
            }
            target = target.resolve(parts[parts.length - 1]);
            writeFile(s, target, f.content());
        }
    }

    /** Writes one file (replacing a regular file, never following a symlink), readable by the sandbox user. */
    static void writeFile(LocalSettings s, Path target, byte[] content) throws IOException {
        if (Files.isSymbolicLink(target)) {
            Files.delete(target);
        }
        try (OutputStream out = Files.newOutputStream(target, LinkOption.NOFOLLOW_LINKS, StandardOpenOption.CREATE,
                StandardOpenOption.TRUNCATE_EXISTING, StandardOpenOption.WRITE)) {
            out.write(content);
        }
        if (s.dropPrivileges()) {
            chown(s, target);
        }
    }

    private static void chown(LocalSettings s, Path p) throws IOException {
        Files.setAttribute(p, "unix:uid", s.dropUid(), LinkOption.NOFOLLOW_LINKS);
        Files.setAttribute(p, "unix:gid", s.dropGid(), LinkOption.NOFOLLOW_LINKS);
    }

    /**
     * Deletes the tree. Works relative to open directory handles (openat/unlinkat through
     * {@link SecureDirectoryStream}), never following a symlink, so a process that swaps a directory
     * for a symlink while this runs cannot redirect the deletion outside the tree. Directories the
     * sandbox locked (chmod 000 or 500) are made writable first. Falls back to {@code rm -rf} (which
     * is just as careful) when that fails, e.g. for a tree deeper than the open-file budget here.
     */
    static void delete(Path root) throws IOException {
        if (!Files.exists(root, LinkOption.NOFOLLOW_LINKS)) {
            return;
        }
        try {
            try (DirectoryStream<Path> ds = Files.newDirectoryStream(root)) {
                if (!(ds instanceof SecureDirectoryStream)) {
                    throw new IOException("no SecureDirectoryStream on this platform");
                }
                clear((SecureDirectoryStream<Path>) ds, 0);
            }
            Files.delete(root);
        } catch (IOException e) {
            rmRf(root, e);
        }
    }

    private static void clear(SecureDirectoryStream<Path> dir, int depth) throws IOException {
        if (depth > MAX_DEPTH) {
            throw new IOException("directory tree deeper than " + MAX_DEPTH);
        }
        List<Path> entries = new ArrayList<>();
        for (Path p : dir) {
            entries.add(p);
        }
        for (Path entry : entries) {
            Path name = entry.getFileName();
            PosixFileAttributeView view = dir.getFileAttributeView(name, PosixFileAttributeView.class, LinkOption.NOFOLLOW_LINKS);
            PosixFileAttributes a;
            try {
                a = view.readAttributes();
            } catch (NoSuchFileException e) {
                continue;
            }
            if (a.isDirectory()) {
                if (!a.permissions().containsAll(OWNER_ONLY)) {
                    unlock(view, entry);
                }
                try (SecureDirectoryStream<Path> child = dir.newDirectoryStream(name, LinkOption.NOFOLLOW_LINKS)) {
                    clear(child, depth + 1);
                }
                dir.deleteDirectory(name);
            } else {
                dir.deleteFile(name);
            }
        }
    }

    private static void unlock(PosixFileAttributeView view, Path dir) throws IOException {
        try {
            view.setPermissions(OWNER_ONLY);
        } catch (AccessDeniedException e) {
            // the JDK changes modes through an opened file, which a chmod-000 directory refuses to a
            // non-root owner; chmod by path instead (only reachable for a non-root JVM, whose own files
            // are all a swapped-in symlink could point at)
            if (Files.isSymbolicLink(dir)) {
                throw e;
            }
            Files.setPosixFilePermissions(dir, OWNER_ONLY);
        }
    }

    private static void rmRf(Path root, Throwable cause) throws IOException {
        try {
            Process p = new ProcessBuilder("/usr/bin/rm", "-rf", "--one-file-system", "--", root.toString())
                    .redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
            if (!p.waitFor(60, TimeUnit.SECONDS)) {
                p.destroyForcibly();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (Files.exists(root, LinkOption.NOFOLLOW_LINKS)) {
            IOException e = new IOException("could not delete " + root);
            e.addSuppressed(cause);
            throw e;
        }
    }
}
