package dev.sandbox4j.local.internal;

import dev.sandbox4j.api.InputFile;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.AccessDeniedException;
import java.nio.file.DirectoryStream;
import java.nio.file.FileSystems;
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
import java.nio.file.attribute.UserPrincipalLookupService;
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

    /** Under the sandbox's root: the directory holding everything the code can write (see {@link #prepareFs}). */
    static final String FS = "fs";
    static final String WORK = "work";
    static final String TMP = "tmp";
    static final String SHM = "shm";
    /** Private to the JVM: files are made here, then renamed into the sandbox's tree. */
    static final String STAGE = "stage";
    static final String SECCOMP = "seccomp.bpf";
    /**
     * The sandbox's PID 1: a copy of the host's {@code sh}, mode 0111. The kernel makes a process that
     * executes a file it cannot read non-dumpable, so the code (same uid, no capabilities) can neither
     * open its {@code /proc/1/mem} nor attach to it (see {@link BwrapCommand#INIT_SCRIPT}).
     */
    static final String INIT = "init";
    /** Holds the host proxy's unix sockets and CA files; bound read-only into a proxied sandbox. */
    static final String EGRESS = "egress";
    /** Which JVM owns the directory ({@code pid start-time}), for the sweep of stale directories. */
    static final String OWNER = "owner";

    /**
     * Creates {@code <workRoot>/sandbox4j-<runId>-*} with {@code etc/} (read-only to the sandbox), the
     * seccomp program, the execute-only init, the owner file and an empty {@code fs/} (a mount point when the disk is
     * bounded; filled by {@link #prepareFs}). When root, the root dir is 0711 so that bwrap, running as
     * the drop uid, can reach its children but not list the directory.
     */
    static Path create(LocalSettings s, String runId, byte[] seccomp) throws IOException {
        Path root = Files.createTempDirectory(s.workRoot(), "sandbox4j-" + runId + "-");
        try {
            Path etc = Files.createDirectory(root.resolve("etc"));
            write(etc.resolve("passwd"), PASSWD);
            write(etc.resolve("group"), GROUP);
            write(etc.resolve("hosts"), HOSTS);
            write(etc.resolve("nsswitch.conf"), NSSWITCH);
            write(etc.resolve("empty"), "");
            Files.setPosixFilePermissions(etc, READABLE_DIR);
            // read by the launcher before it leaves root, so it stays private to the JVM's user
            Files.write(root.resolve(SECCOMP), seccomp, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE);
            Files.setPosixFilePermissions(root.resolve(SECCOMP), PosixFilePermissions.fromString("rw-------"));
            Files.writeString(root.resolve(OWNER), Owner.current(), StandardCharsets.UTF_8, StandardOpenOption.CREATE_NEW);
            Files.copy(s.sh(), root.resolve(INIT));
            // execute only, for every uid: unreadable, so the process running it is not dumpable
            Files.setPosixFilePermissions(root.resolve(INIT), PosixFilePermissions.fromString("--x--x--x"));
            Files.createDirectory(root.resolve(FS));
            Files.setPosixFilePermissions(root, s.dropPrivileges() ? TRAVERSE : OWNER_ONLY);
            return root;
        } catch (IOException | RuntimeException | Error e) {
            try {
                delete(root);
            } catch (IOException suppressed) {
                e.addSuppressed(suppressed);
            }
            throw e;
        }
    }

    /**
     * Makes {@code fs/work}, {@code fs/tmp}, {@code fs/shm} (0700, owned by the drop uid when root) and
     * {@code fs/stage} (0700, the JVM's). Called after the size-limited file system, if any, is mounted on {@code fs}.
     */
    static void prepareFs(LocalSettings s, Path root) throws IOException {
        Path fs = root.resolve(FS);
        Files.setPosixFilePermissions(fs, s.dropPrivileges() ? TRAVERSE : OWNER_ONLY);
        for (String d : new String[] {WORK, TMP, SHM}) {
            Path p = Files.createDirectory(fs.resolve(d));
            Files.setPosixFilePermissions(p, OWNER_ONLY);
            if (s.dropPrivileges()) {
                chown(s, p);
            }
        }
        Files.setPosixFilePermissions(Files.createDirectory(fs.resolve(STAGE)), OWNER_ONLY);
    }

    /**
     * Makes {@code root/egress} (once): 0700 and owned by the drop uid when root (bwrap, running as that
     * uid, binds it; no other host user can reach the sockets in it), 0700 the JVM's otherwise.
     */
    static Path egressDir(LocalSettings s, Path root) throws IOException {
        Path d = root.resolve(EGRESS);
        if (!Files.isDirectory(d, LinkOption.NOFOLLOW_LINKS)) {
            Files.createDirectory(d);
            Files.setPosixFilePermissions(d, OWNER_ONLY);
            if (s.dropPrivileges()) {
                chown(s, d);
            }
        }
        return d;
    }

    /** A new directory for a proxy socket under {@code base} (a short path), with the modes of {@link #egressDir}. */
    static Path shortEgressDir(LocalSettings s, Path base) throws IOException {
        Path d = Files.createTempDirectory(base, "s4j-egress-");
        Files.setPosixFilePermissions(d, OWNER_ONLY);
        if (s.dropPrivileges()) {
            chown(s, d);
        }
        return d;
    }

    /** Writes a file the sandbox may read (0644) into the egress directory, replacing it whole (a rename). */
    static void writeEgressFile(Path egressDir, String name, String content) throws IOException {
        Path tmp = egressDir.resolve("." + name + ".tmp");
        Files.deleteIfExists(tmp);
        write(tmp, content);
        Files.move(tmp, egressDir.resolve(name), java.nio.file.StandardCopyOption.REPLACE_EXISTING,
                java.nio.file.StandardCopyOption.ATOMIC_MOVE);
    }

    private static void write(Path file, String content) throws IOException {
        Files.writeString(file, content, StandardCharsets.UTF_8, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE);
        Files.setPosixFilePermissions(file, READABLE_FILE);
    }

    /**
     * Writes input files under {@code work} so that sandboxed code running at the same time cannot
     * redirect them: every directory is opened relative to its parent's handle without following a
     * symlink (openat with O_NOFOLLOW); each new file or directory is made in {@code stage}, which the
     * sandbox cannot reach, given its owner and mode there through its handle, and then renamed into
     * the opened directory (renameat). Swapping a component for a symlink makes the write fail;
     * swapping afterwards only moves the file within the sandbox's own tree.
     */
    static void writeFiles(LocalSettings s, Path work, Path stage, List<InputFile> files) throws IOException {
        try (SecureDirectoryStream<Path> top = openSecure(work); SecureDirectoryStream<Path> staging = openSecure(stage)) {
            for (InputFile f : files) {
                writeOne(s, top, staging, stage, f);
            }
        }
    }

    private static void writeOne(LocalSettings s, SecureDirectoryStream<Path> top, SecureDirectoryStream<Path> staging,
            Path stage, InputFile f) throws IOException {
        String[] parts = f.path().split("/");
        List<SecureDirectoryStream<Path>> opened = new ArrayList<>();
        try {
            SecureDirectoryStream<Path> dir = top;
            for (int i = 0; i < parts.length - 1; i++) {
                Path name = Path.of(parts[i]);
                SecureDirectoryStream<Path> child;
                try {
                    child = dir.newDirectoryStream(name, LinkOption.NOFOLLOW_LINKS);
                } catch (NoSuchFileException e) {
                    Path made = Files.createDirectory(stage.resolve(stagedName()));
                    own(s, staging, made.getFileName(), READABLE_DIR);
                    staging.move(made.getFileName(), dir, name);
                    child = dir.newDirectoryStream(name, LinkOption.NOFOLLOW_LINKS);
                } catch (IOException e) {
                    throw new IOException("input file " + f.path() + ": '" + parts[i]
                            + "' is not a directory (a symbolic link or a file) in the sandbox", e);
                }
                opened.add(child);
                dir = child;
            }
            Path staged = stage.resolve(stagedName());
            Files.write(staged, f.content(), StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE);
            try {
                own(s, staging, staged.getFileName(), READABLE_FILE);
                // replaces a file or a symlink of that name (the link itself, never its target)
                staging.move(staged.getFileName(), dir, Path.of(parts[parts.length - 1]));
            } finally {
                Files.deleteIfExists(staged);
            }
        } finally {
            for (SecureDirectoryStream<Path> d : opened) {
                d.close();
            }
        }
    }

    private static SecureDirectoryStream<Path> openSecure(Path dir) throws IOException {
        DirectoryStream<Path> ds = Files.newDirectoryStream(dir);
        if (ds instanceof SecureDirectoryStream<Path> sds) {
            return sds;
        }
        ds.close();
        throw new IOException("no SecureDirectoryStream on this platform: cannot write into a sandbox safely");
    }

    /** Mode and owner through the entry's own handle (fchmod/fchown after an O_NOFOLLOW open). */
    private static void own(LocalSettings s, SecureDirectoryStream<Path> dir, Path name, Set<PosixFilePermission> mode)
            throws IOException {
        PosixFileAttributeView v = dir.getFileAttributeView(name, PosixFileAttributeView.class, LinkOption.NOFOLLOW_LINKS);
        v.setPermissions(mode);
        if (s.dropPrivileges()) {
            UserPrincipalLookupService lookup = FileSystems.getDefault().getUserPrincipalLookupService();
            v.setGroup(lookup.lookupPrincipalByGroupName(Integer.toString(s.dropGid())));
            v.setOwner(lookup.lookupPrincipalByName(Integer.toString(s.dropUid())));
        }
    }

    private static String stagedName() {
        return "f-" + Long.toHexString(STAGED.incrementAndGet()) + "-" + Long.toHexString(System.nanoTime());
    }

    private static final java.util.concurrent.atomic.AtomicLong STAGED = new java.util.concurrent.atomic.AtomicLong();

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
