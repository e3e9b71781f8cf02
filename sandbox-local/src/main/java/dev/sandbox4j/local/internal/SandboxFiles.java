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
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Reads and lists files in a sandbox's work directory without following a symbolic link anywhere:
 * each directory is opened relative to its parent's handle with O_NOFOLLOW (openat), and the file
 * itself is checked through that handle (fstatat with AT_SYMLINK_NOFOLLOW) and opened with
 * O_NOFOLLOW, so a link planted by the code, in the path or at its end, is refused rather than read.
 * Memory is bounded by the cap the caller gives, whatever the file's size.
 *
 * <p>Nothing the code does while a read runs can stall it (issue 27: a FIFO swapped in between the
 * type check and the open made {@code open()} wait for a writer, and the JDK has no O_NONBLOCK): every
 * open (each directory of the path and the file) runs on a helper thread and is given up after
 * {@link #OPEN_MILLIS} (a late open is closed as soon as it returns); what was opened is checked again
 * (a seek fails on a FIFO, so one swapped in after the check is refused); and the whole read of the
 * file is bounded by {@link #READ_MILLIS}, after which the channel is closed under the reader. Each
 * of these ends in a {@link Refused} naming the path.
 */
final class SandboxFiles {
    /** Entries listed per directory at most. */
    static final int MAX_LIST_ENTRIES = 10_000;
    private static final Set<OpenOption> READ_NOFOLLOW = Set.of(StandardOpenOption.READ, LinkOption.NOFOLLOW_LINKS);
    /** How long one open may take: a local open is immediate unless it waits on a FIFO. */
    static final long OPEN_MILLIS = 2_000;
    /** How long reading one file may take in all. */
    static final long READ_MILLIS = 10_000;
    private static final ExecutorService OPENER = Executors.newCachedThreadPool(r -> {
        Thread t = new Thread(r, "sandbox4j-local-open");
        t.setDaemon(true);
        return t;
    });
    /** Opens given up on that have not returned yet (each holds a thread); past the cap, reads are refused. */
    private static final java.util.concurrent.atomic.AtomicInteger STUCK = new java.util.concurrent.atomic.AtomicInteger();
    private static final int MAX_STUCK = 32;
    private static final ScheduledExecutorService WATCHDOG = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "sandbox4j-local-read-watchdog");
        t.setDaemon(true);
        return t;
    });

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
        AtomicBoolean stalled = new AtomicBoolean();
        try {
            SecureDirectoryStream<Path> dir = walk(work, parts, parts.length - 1, opened, path, stalled);
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
            final SecureDirectoryStream<Path> parent = dir;
            try (SeekableByteChannel ch = bounded(() -> parent.newByteChannel(name, READ_NOFOLLOW), path, stalled)) {
                try {
                    // what was opened may not be what was checked: a seek fails on a FIFO (ESPIPE)
                    ch.position(0);
                } catch (IOException e) {
                    throw new Refused(path + ": not a regular file (it was replaced while being read)");
                }
                ScheduledFuture<?> watchdog = WATCHDOG.schedule(() -> closeQuietly(ch), READ_MILLIS, TimeUnit.MILLISECONDS);
                try {
                    return readAll(ch, path, maxBytes, a.size());
                } catch (java.nio.channels.ClosedChannelException e) {
                    throw new Refused(path + ": reading took longer than " + READ_MILLIS / 1000 + " s (not read)");
                } finally {
                    watchdog.cancel(false);
                }
            } catch (FileSystemException e) {
                throw new Refused(path + ": could not be opened without following links (" + e.getReason() + ")");
            }
        } finally {
            close(opened, stalled);
        }
    }

    private static SandboxFile readAll(SeekableByteChannel ch, String path, long maxBytes, long checkedSize) throws IOException {
        int cap = (int) Math.min(maxBytes, Integer.MAX_VALUE - 16);
        ByteArrayOutputStream out = new ByteArrayOutputStream((int) Math.min(cap, Math.min(checkedSize, 1 << 20)));
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
    }

    /**
     * Runs one open on a helper thread and waits at most {@link #OPEN_MILLIS} for it. Given up, it
     * is refused; if it returns later, what it opened is closed at once.
     */
    static <T extends java.io.Closeable> T bounded(Callable<T> open, String path, AtomicBoolean stalled) throws IOException {
        if (STUCK.get() >= MAX_STUCK) {
            stalled.set(true);
            throw new Refused(path + ": not read (" + MAX_STUCK + " earlier opens still wait on FIFOs put in their place)");
        }
        AtomicBoolean abandoned = new AtomicBoolean();
        Future<T> f = OPENER.submit(() -> {
            T t;
            try {
                t = open.call();
            } finally {
                if (abandoned.get()) {
                    STUCK.decrementAndGet();
                }
            }
            if (abandoned.get()) {
                closeQuietly(t);
            }
            return t;
        });
        try {
            return f.get(OPEN_MILLIS, TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            // the open holds its directory handle's lock: the handles are closed once it returns, not here
            stalled.set(true);
            if (!f.isDone()) {
                STUCK.incrementAndGet();
            }
            abandoned.set(true);
            // a race with a just-finished open: close what it returned
            if (f.isDone()) {
                try {
                    closeQuietly(f.get());
                } catch (ExecutionException | InterruptedException ignored) {
                    // nothing was opened
                }
            }
            throw new Refused(path + ": did not open within " + OPEN_MILLIS + " ms (a FIFO or another special file"
                    + " was put there while it was being read; not read)");
        } catch (ExecutionException e) {
            Throwable c = e.getCause();
            if (c instanceof IOException io) {
                throw io;
            }
            if (c instanceof RuntimeException re) {
                throw re;
            }
            throw new IOException(c);
        } catch (InterruptedException e) {
            stalled.set(true);
            STUCK.incrementAndGet();
            abandoned.set(true);
            Thread.currentThread().interrupt();
            throw new java.io.InterruptedIOException(path + ": interrupted while opening");
        }
    }

    private static void closeQuietly(java.io.Closeable c) {
        try {
            if (c != null) {
                c.close();
            }
        } catch (IOException ignored) {
            // read-only handle
        }
    }

    static List<FileEntry> list(Path work, String directory) throws IOException {
        String[] parts = directory.isEmpty() ? new String[0] : directory.split("/");
        List<SecureDirectoryStream<Path>> opened = new ArrayList<>();
        AtomicBoolean stalled = new AtomicBoolean();
        try {
            SecureDirectoryStream<Path> dir = walk(work, parts, parts.length, opened, directory.isEmpty() ? "." : directory,
                    stalled);
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
            close(opened, stalled);
        }
    }

    /** Opens {@code parts[0..n)} below {@code work}, each relative to its parent, following no link. */
    private static SecureDirectoryStream<Path> walk(Path work, String[] parts, int n, List<SecureDirectoryStream<Path>> opened,
            String path, AtomicBoolean stalled) throws IOException {
        DirectoryStream<Path> ds = java.nio.file.Files.newDirectoryStream(work);
        if (!(ds instanceof SecureDirectoryStream<Path> top)) {
            ds.close();
            throw new IOException("no SecureDirectoryStream on this platform: cannot read a sandbox's files safely");
        }
        opened.add(top);
        SecureDirectoryStream<Path> dir = top;
        for (int i = 0; i < n; i++) {
            final SecureDirectoryStream<Path> parent = dir;
            final Path name = Path.of(parts[i]);
            try {
                // the JDK opens a directory without O_DIRECTORY: a FIFO put there would block the open
                dir = bounded(() -> parent.newDirectoryStream(name, LinkOption.NOFOLLOW_LINKS), path, stalled);
            } catch (NoSuchFileException e) {
                throw new Refused(path + ": no such file or directory");
            } catch (FileSystemException e) {
                throw new Refused(path + ": '" + parts[i] + "' is not a directory (a symbolic link or a file; not followed)");
            }
            opened.add(dir);
        }
        return dir;
    }

    /** Closes the handles; after a stalled open, on a helper thread (the close waits for that open to return). */
    private static void close(List<SecureDirectoryStream<Path>> opened, AtomicBoolean stalled) {
        if (stalled.get()) {
            OPENER.execute(() -> closeAll(opened));
        } else {
            closeAll(opened);
        }
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
