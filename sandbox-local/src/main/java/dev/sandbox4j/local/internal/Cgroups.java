package dev.sandbox4j.local.internal;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.concurrent.TimeUnit;

/**
 * Whole-sandbox limits through cgroup v1 (as root): a memory and (with a vCPU limit) a cpu cgroup per
 * sandbox, made under the JVM's own cgroup of each controller (so any limit placed on the
 * JVM still holds), in a {@code sandbox4j} directory. The launcher writes its pid into their
 * {@code tasks} before it execs bwrap, so every process of the sandbox is inside from the start. It
 * writes {@code 0} (itself) to {@code tasks} rather than its pid to {@code cgroup.procs}: moving the
 * calling thread skips the kernel's global threadgroup lock, whose write side waits for an RCU grace
 * period (milliseconds on a busy machine); the launcher is single-threaded, so it is the same move.
 * cgroup v2 is not used yet: without a v1 hierarchy the runner keeps its per-process limits only.
 * Processes are not put in a pids cgroup: RLIMIT_NPROC already counts them per sandbox (it is counted
 * per user namespace), and every cgroup joined costs the launcher an RCU grace period (milliseconds).
 */
final class Cgroups {
    static final String PARENT = "sandbox4j";
    private static final Path MOUNT = Path.of("/sys/fs/cgroup");
    private static final long EMPTY_WAIT_MILLIS = 5_000;

    /** The usable controllers, each with the directory sandbox cgroups are made in. */
    private final Map<String, Path> parents;

    private Cgroups(Map<String, Path> parents) {
        this.parents = parents;
    }

    /**
     * The v1 controllers this (root) JVM can use, or empty. Nothing is made here: the {@code sandbox4j}
     * parent directories come with the first sandbox and go with the last.
     */
    static Optional<Cgroups> detect() {
        Map<String, String> own = ownPaths();
        Map<String, Path> usable = new LinkedHashMap<>();
        for (String[] c : new String[][] {{"memory", "memory.limit_in_bytes"}, {"cpu", "cpu.cfs_quota_us"}}) {
            String rel = own.get(c[0]);
            if (rel == null) {
                continue;
            }
            Path mine = MOUNT.resolve(c[0]).resolve(rel.substring(1));
            if (Files.isRegularFile(mine.resolve(c[1])) && Files.isWritable(mine.resolve("tasks")) && Files.isWritable(mine)) {
                usable.put(c[0], mine.resolve(PARENT));
            }
        }
        return usable.containsKey("memory") ? Optional.of(new Cgroups(usable)) : Optional.empty();
    }

    /** Controller to path, from /proc/self/cgroup ("4:memory:/a/b"; "1:cpu,cpuacct:/" lists several). */
    private static Map<String, String> ownPaths() {
        Map<String, String> m = new LinkedHashMap<>();
        try {
            for (String line : Files.readAllLines(Path.of("/proc/self/cgroup"), StandardCharsets.UTF_8)) {
                String[] f = line.split(":", 3);
                if (f.length == 3 && !f[1].isEmpty()) {
                    for (String ctrl : f[1].split(",")) {
                        m.put(ctrl, f[2]);
                    }
                }
            }
        } catch (IOException e) {
            return Map.of();
        }
        return m;
    }

    boolean cpu() {
        return parents.containsKey("cpu");
    }

    /**
     * Makes the sandbox's cgroups.
     *
     * @param memoryBytes memory.limit_in_bytes (and memsw, so swap cannot extend it)
     * @param vcpus a CPU quota in whole CPUs, or empty for none
     */
    Group create(String name, long memoryBytes, OptionalInt vcpus) throws IOException {
        Group g = new Group();
        try {
            g.dirs.add(make("memory", name));
            write(g.dirs.get(0), "memory.limit_in_bytes", memoryBytes);
            if (Files.exists(g.dirs.get(0).resolve("memory.memsw.limit_in_bytes"))) {
                write(g.dirs.get(0), "memory.memsw.limit_in_bytes", memoryBytes);
            }
            if (vcpus.isPresent()) {
                Path cpu = make("cpu", name);
                g.dirs.add(cpu);
                write(cpu, "cpu.cfs_period_us", 100_000);
                write(cpu, "cpu.cfs_quota_us", 100_000L * vcpus.getAsInt());
            }
            return g;
        } catch (IOException | RuntimeException e) {
            g.remove();
            throw e;
        }
    }

    /**
     * The group of a sandbox named {@code name}, wherever it is (for the stale sweep): a JVM makes its
     * sandboxes' cgroups under its own cgroup, and the JVM that made this one may have run in another
     * (another service, another container of the host), so every {@code sandbox4j/<name>} of each
     * controller's hierarchy is found, not only the one under this JVM's cgroup.
     */
    Group existing(String name) {
        Group g = new Group();
        for (String ctrl : parents.keySet()) {
            Path d = parents.get(ctrl).resolve(name);
            if (Files.isDirectory(d, java.nio.file.LinkOption.NOFOLLOW_LINKS)) {
                try {
                    g.dirs.add(d.toRealPath());
                } catch (IOException e) {
                    // removed meanwhile
                }
            }
            Path top;
            try {
                top = MOUNT.resolve(ctrl).toRealPath();
            } catch (IOException e) {
                continue;
            }
            try (java.util.stream.Stream<Path> found = Files.find(top, SEARCH_DEPTH, (p, a) -> a.isDirectory()
                    && p.getFileName() != null && p.getFileName().toString().equals(name)
                    && p.getParent() != null && p.getParent().getFileName() != null
                    && p.getParent().getFileName().toString().equals(PARENT))) {
                found.filter(p -> !g.dirs.contains(p)).forEach(g.dirs::add);
            } catch (IOException | java.io.UncheckedIOException e) {
                // a cgroup removed while walking: what was found is swept
            }
        }
        return g;
    }

    /** How deep the stale sweep looks for {@code sandbox4j} directories in a controller's hierarchy. */
    private static final int SEARCH_DEPTH = 16;

    private Path make(String ctrl, String name) throws IOException {
        Path parent = parents.get(ctrl);
        if (parent == null) {
            throw new IOException("no usable " + ctrl + " cgroup");
        }
        // the parent goes when its last sandbox does (see Group.remove); another JVM may just have removed it
        for (int attempt = 0; ; attempt++) {
            try {
                Files.createDirectories(parent);
            } catch (java.nio.file.FileAlreadyExistsException e) {
                // it existed when createDirectories looked and was gone when it checked it: removed in between
                if (attempt == 19) {
                    throw e;
                }
                continue;
            }
            try {
                return Files.createDirectory(parent.resolve(name));
            } catch (NoSuchFileException e) {
                if (attempt == 19) {
                    throw e;
                }
            }
        }
    }

    private static void write(Path dir, String file, long value) throws IOException {
        Files.writeString(dir.resolve(file), Long.toString(value), StandardCharsets.US_ASCII);
    }

    /** One sandbox's cgroups. */
    static final class Group {
        private final List<Path> dirs = new ArrayList<>();

        /** The files the launcher writes {@code 0} (itself) into. */
        List<Path> tasksFiles() {
            List<Path> l = new ArrayList<>();
            dirs.forEach(d -> l.add(d.resolve("tasks")));
            return l;
        }

        /** The memory cgroup's directory (for tests and diagnostics). */
        Optional<Path> memory() {
            return dirs.stream().filter(d -> d.startsWith(MOUNT.resolve("memory"))).findFirst();
        }

        /**
         * SIGKILLs every process still in the group (the kernel may still be tearing down the PID
         * namespace after bwrap returned) and waits, bounded, until the group is empty.
         */
        void killAll() {
            long until = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(EMPTY_WAIT_MILLIS);
            for (Path d : dirs) {
                while (true) {
                    List<Long> pids = pids(d);
                    if (pids.isEmpty() || System.nanoTime() > until) {
                        break;
                    }
                    pids.forEach(pid -> ProcessHandle.of(pid).ifPresent(ProcessHandle::destroyForcibly));
                    // SIGKILLed processes leave within milliseconds; do not spin a core meanwhile
                    java.util.concurrent.locks.LockSupport.parkNanos(200_000);
                }
            }
        }

        /**
         * Kills what is left and removes the directories, and the {@code sandbox4j} parent when no other
         * sandbox uses it (so nothing is left in the JVM's cgroup); what cannot be removed is left for the
         * next sweep.
         */
        void remove() {
            killAll();
            for (int i = dirs.size() - 1; i >= 0; i--) {
                try {
                    Files.deleteIfExists(dirs.get(i));
                    // fails while another sandbox's cgroup is in it, which is the point
                    Files.deleteIfExists(dirs.get(i).getParent());
                } catch (IOException e) {
                    // busy: a process is still exiting, or the parent is in use
                }
            }
        }

        private static List<Long> pids(Path dir) {
            List<Long> l = new ArrayList<>();
            try {
                for (String line : Files.readAllLines(dir.resolve("cgroup.procs"), StandardCharsets.US_ASCII)) {
                    if (!line.isBlank()) {
                        l.add(Long.parseLong(line.strip()));
                    }
                }
            } catch (NoSuchFileException e) {
                return l;
            } catch (IOException | NumberFormatException e) {
                return l;
            }
            return l;
        }
    }

    /** Names of the sandbox cgroups present under the parents (for the stale sweep). */
    List<String> names() {
        List<String> l = new ArrayList<>();
        for (Path p : parents.values()) {
            try (DirectoryStream<Path> ds = Files.newDirectoryStream(p)) {
                for (Path d : ds) {
                    if (Files.isDirectory(d) && !l.contains(d.getFileName().toString())) {
                        l.add(d.getFileName().toString());
                    }
                }
            } catch (IOException e) {
                // nothing to sweep there
            }
        }
        return l;
    }
}
