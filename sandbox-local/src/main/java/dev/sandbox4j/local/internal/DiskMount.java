package dev.sandbox4j.local.internal;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The sandbox's own size-limited file system: a tmpfs with {@code size} and {@code nr_inodes}
 * mounted (by the JVM, as root) on the sandbox's {@code fs} directory for as long as the sandbox
 * lives. Work directory, {@code /tmp} and {@code /dev/shm} are directories on it, so one kernel bound
 * covers what the code can write anywhere. Its pages are memory: in the sandbox's memory cgroup they
 * count toward the memory limit too.
 */
final class DiskMount {
    private static final long RUN_SECONDS = 20;

    private DiskMount() {
    }

    private static final java.util.Map<Path, Boolean> WORKS = new java.util.concurrent.ConcurrentHashMap<>();

    /**
     * Whether a tmpfs can be mounted under the work root here (root in a container without
     * CAP_SYS_ADMIN cannot): tried once per JVM and work root with a 1 MiB mount.
     */
    static boolean works(LocalSettings s) {
        return WORKS.computeIfAbsent(s.workRoot(), r -> {
            Path probe = null;
            try {
                probe = Files.createTempDirectory(r, "sandbox4j-mountprobe-");
                mount(s, probe, 1 << 20);
                unmount(s, probe);
                return true;
            } catch (IOException | RuntimeException e) {
                return false;
            } finally {
                if (probe != null) {
                    try {
                        Files.deleteIfExists(probe);
                    } catch (IOException ignored) {
                        // left empty in the work root
                    }
                }
            }
        });
    }

    /** The inode bound for a file system of {@code bytes}: one per 16 KiB, at least 4096. */
    static long inodes(long bytes) {
        return Math.max(4096, bytes / (16 * 1024));
    }

    static void mount(LocalSettings s, Path fs, long bytes) throws IOException {
        run(List.of(s.mount().toString(), "-n", "-t", "tmpfs", "-o",
                "size=" + bytes + ",nr_inodes=" + inodes(bytes) + ",mode=0700,nosuid,nodev", "sandbox4j", fs.toString()));
    }

    /** Unmounts (lazily when busy); nothing when {@code fs} is not, or no longer, a mount point. */
    static void unmount(LocalSettings s, Path fs) throws IOException {
        if (!isMountPoint(fs)) {
            return;
        }
        try {
            run(List.of(s.umount().toString(), "-n", fs.toString()));
        } catch (IOException e) {
            if (!isMountPoint(fs)) {
                return; // a concurrent teardown (close racing the lifetime timer) unmounted it
            }
            try {
                run(List.of(s.umount().toString(), "-n", "-l", fs.toString()));
            } catch (IOException lazy) {
                if (isMountPoint(fs)) {
                    throw lazy;
                }
            }
        }
    }

    /** Whether {@code p} is a mount point in this process's mount namespace (per /proc/self/mountinfo). */
    static boolean isMountPoint(Path p) throws IOException {
        String target = p.toAbsolutePath().normalize().toString();
        for (String line : Files.readAllLines(Path.of("/proc/self/mountinfo"), StandardCharsets.UTF_8)) {
            String[] f = line.split(" ");
            if (f.length > 4 && unescape(f[4]).equals(target)) {
                return true;
            }
        }
        return false;
    }

    /** mountinfo writes space, tab, newline and backslash as octal escapes. */
    private static String unescape(String s) {
        if (s.indexOf('\\') < 0) {
            return s;
        }
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == '\\' && i + 3 < s.length()) {
                b.append((char) Integer.parseInt(s.substring(i + 1, i + 4), 8));
                i += 3;
            } else {
                b.append(c);
            }
        }
        return b.toString();
    }

    private static void run(List<String> argv) throws IOException {
        Process p = new ProcessBuilder(new ArrayList<>(argv)).redirectErrorStream(true).start();
        p.getOutputStream().close();
        boolean interrupted = false;
        try {
            byte[] out = p.getInputStream().readNBytes(4096);
            boolean done;
            while (true) {
                try {
                    done = p.waitFor(RUN_SECONDS, TimeUnit.SECONDS);
                    break;
                } catch (InterruptedException e) {
                    // a half-made or half-removed mount is worse than a late interrupt
                    interrupted = true;
                }
            }
            if (!done) {
                p.destroyForcibly();
                throw new IOException(String.join(" ", argv) + " did not finish in " + RUN_SECONDS + " s");
            }
            if (p.exitValue() != 0) {
                throw new IOException(String.join(" ", argv) + " failed (exit " + p.exitValue() + "): "
                        + new String(out, StandardCharsets.UTF_8).strip());
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
