package dev.sandbox4j.local.internal;

import java.io.IOException;
import java.nio.charset.Charset;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Objects;

/** The local runner's configuration, fixed at build time. Internal: configure through {@code LocalSandboxRunner.builder()}. */
public final class LocalSettings {
    /** The uid and gid code has inside the sandbox (mapped to the host's drop uid, or to the JVM's own uid). */
    public static final int SANDBOX_UID = 1000;
    public static final long MIB = 1024L * 1024;

    private final Path bwrap;
    private final Path prlimit;
    private final Path setpriv;
    private final Path python;
    private final Path node;
    private final Path bash;
    private final Path sh;
    private final Path mount;
    private final Path umount;
    private final Path workRoot;
    private final long tmpSizeBytes;
    private final long addressSpaceBytes;
    private final long fileSizeBytes;
    private final int maxProcesses;
    private final int maxOpenFiles;
    private final long diskBytes;
    private final long memoryBytes;
    private final boolean boundDisk;
    private final boolean cgroups;
    private final int dropUid;
    private final int dropGid;
    private final boolean dropPrivileges;
    private final boolean mergedUsr;
    private final boolean argvIsUtf8;
    private final EgressGateway.Factory egressGateways;

    private LocalSettings(Builder b) {
        this.egressGateways = b.egressGateways;
        this.bwrap = b.bwrap;
        this.prlimit = b.prlimit;
        this.setpriv = b.setpriv;
        this.python = b.python;
        this.node = b.node;
        this.bash = b.bash;
        this.sh = b.sh;
        this.mount = b.mount;
        this.umount = b.umount;
        this.workRoot = b.workRoot != null ? b.workRoot : Path.of(System.getProperty("java.io.tmpdir"));
        this.tmpSizeBytes = b.tmpSizeBytes;
        this.addressSpaceBytes = b.addressSpaceBytes;
        this.fileSizeBytes = b.fileSizeBytes;
        this.maxProcesses = b.maxProcesses;
        this.maxOpenFiles = b.maxOpenFiles;
        this.diskBytes = b.diskBytes;
        this.memoryBytes = b.memoryBytes;
        this.dropUid = b.dropUid;
        this.dropGid = b.dropGid;
        this.dropPrivileges = b.dropPrivileges != null ? b.dropPrivileges : jvmIsRoot();
        this.mergedUsr = b.mergedUsr != null ? b.mergedUsr : Files.isSymbolicLink(Path.of("/bin"));
        this.argvIsUtf8 = b.argvIsUtf8 != null ? b.argvIsUtf8 : jnuIsUtf8();
        // both need root: mount(2) on the host, and writing cgroup.procs of a v1 hierarchy
        boolean root = jvmIsRoot();
        this.boundDisk = b.boundDisk != null ? b.boundDisk && root : root && Files.isExecutable(mount) && Files.isExecutable(umount);
        this.cgroups = b.cgroups != null ? b.cgroups && root : root;
    }

    public static Builder builder() {
        return new Builder();
    }

    public Path bwrap() {
        return bwrap;
    }

    public Path prlimit() {
        return prlimit;
    }

    public Path setpriv() {
        return setpriv;
    }

    public Path python() {
        return python;
    }

    public Path node() {
        return node;
    }

    public Path bash() {
        return bash;
    }

    /** The shell that runs the fixed launch script (see {@code BwrapCommand.LAUNCH_SCRIPT}). */
    public Path sh() {
        return sh;
    }

    public Path mount() {
        return mount;
    }

    public Path umount() {
        return umount;
    }

    /** The default bound on what a sandbox can write (work directory, /tmp, /dev/shm together). */
    public long diskBytes() {
        return diskBytes;
    }

    /** The default memory limit of a whole sandbox (its processes and its files, which are in memory). */
    public long memoryBytes() {
        return memoryBytes;
    }

    /** True when each sandbox gets its own size- and inode-limited file system (needs root). */
    public boolean boundDisk() {
        return boundDisk;
    }

    /** True when whole-sandbox memory, process and CPU limits go through cgroup v1 (needs root). */
    public boolean cgroups() {
        return cgroups;
    }

    /** Where per-sandbox directories are created; must be traversable by the drop uid when the JVM is root. */
    public Path workRoot() {
        return workRoot;
    }

    public long tmpSizeBytes() {
        return tmpSizeBytes;
    }

    public long addressSpaceBytes() {
        return addressSpaceBytes;
    }

    public long fileSizeBytes() {
        return fileSizeBytes;
    }

    public int maxProcesses() {
        return maxProcesses;
    }

    public int maxOpenFiles() {
        return maxOpenFiles;
    }

    public int dropUid() {
        return dropUid;
    }

    public int dropGid() {
        return dropGid;
    }

    /** True when bwrap is started through setpriv as the drop uid (the JVM runs as root). */
    public boolean dropPrivileges() {
        return dropPrivileges;
    }

    /** True when /bin, /lib, ... are symlinks into /usr (Debian 12, Fedora, Arch, Ubuntu). */
    public boolean mergedUsr() {
        return mergedUsr;
    }

    /**
     * True when the JVM encodes process arguments as UTF-8. Otherwise (e.g. a JVM started without a
     * UTF-8 locale) non-ASCII code would be mangled in argv, so such code goes by file.
     */
    public boolean argvIsUtf8() {
        return argvIsUtf8;
    }

    /** Whether this JVM runs as root (effective uid 0). */
    public static boolean jvmIsRoot() {
        try {
            // /proc/self belongs to the process's effective uid
            Object uid = Files.getAttribute(Path.of("/proc/self"), "unix:uid");
            return uid instanceof Integer i && i == 0;
        } catch (IOException | UnsupportedOperationException | IllegalArgumentException e) {
            return false;
        }
    }

    private static boolean jnuIsUtf8() {
        String jnu = System.getProperty("sun.jnu.encoding");
        try {
            return jnu != null && Charset.forName(jnu).equals(StandardCharsets.UTF_8);
        } catch (RuntimeException e) {
            return false;
        }
    }

    /** Starts the host proxy of a sandbox whose egress is a list; null when lists are not enforced here. */
    public EgressGateway.Factory egressGateways() {
        return egressGateways;
    }

    @Override
    public String toString() {
        return "LocalSettings[bwrap=" + bwrap + ", workRoot=" + workRoot + ", dropPrivileges=" + dropPrivileges
                + (dropPrivileges ? " (uid " + dropUid + ")" : "") + ", tmp=" + tmpSizeBytes / MIB + " MiB, as="
                + addressSpaceBytes / MIB + " MiB, fsize=" + fileSizeBytes / MIB + " MiB, nproc=" + maxProcesses
                + ", nofile=" + maxOpenFiles + ", disk=" + (boundDisk ? diskBytes / MIB + " MiB" : "per file only")
                + ", cgroups=" + cgroups + "]";
    }

    public static final class Builder {
        private Path bwrap = Path.of("/usr/bin/bwrap");
        private Path prlimit = Path.of("/usr/bin/prlimit");
        private Path setpriv = Path.of("/usr/bin/setpriv");
        private Path python = Path.of("/usr/bin/python3");
        private Path node = Path.of("/usr/bin/node");
        private Path bash = Path.of("/usr/bin/bash");
        private Path sh = Path.of("/bin/sh");
        private Path mount = Path.of("/usr/bin/mount");
        private Path umount = Path.of("/usr/bin/umount");
        private Path workRoot;
        private long tmpSizeBytes = 64 * MIB;
        private long addressSpaceBytes = 4096 * MIB;
        private long fileSizeBytes = 256 * MIB;
        private int maxProcesses = 128;
        private int maxOpenFiles = 1024;
        private long diskBytes = 1024 * MIB;
        private long memoryBytes = 2048 * MIB;
        private Boolean boundDisk;
        private Boolean cgroups;
        private int dropUid = 65534;
        private int dropGid = 65534;
        private Boolean dropPrivileges;
        private Boolean mergedUsr;
        private Boolean argvIsUtf8;
        private EgressGateway.Factory egressGateways;

        private Builder() {
        }

        /** How a proxied sandbox's host proxy is started (see {@link EgressGateway}); null: lists are refused. */
        public Builder egressGateways(EgressGateway.Factory f) {
            this.egressGateways = f;
            return this;
        }

        public Builder bwrap(Path p) {
            this.bwrap = absolute(p, "bwrap");
            return this;
        }

        public Builder prlimit(Path p) {
            this.prlimit = underUsr(p, "prlimit");
            return this;
        }

        public Builder setpriv(Path p) {
            this.setpriv = absolute(p, "setpriv");
            return this;
        }

        public Builder python(Path p) {
            this.python = underUsr(p, "python");
            return this;
        }

        public Builder node(Path p) {
            this.node = underUsr(p, "node");
            return this;
        }

        public Builder bash(Path p) {
            this.bash = underUsr(p, "bash");
            return this;
        }

        public Builder sh(Path p) {
            this.sh = absolute(p, "sh");
            return this;
        }

        public Builder mount(Path p) {
            this.mount = absolute(p, "mount");
            return this;
        }

        public Builder umount(Path p) {
            this.umount = absolute(p, "umount");
            return this;
        }

        public Builder diskBytes(long n) {
            this.diskBytes = positive(n, "diskBytes");
            return this;
        }

        public Builder memoryBytes(long n) {
            this.memoryBytes = positive(n, "memoryBytes");
            return this;
        }

        /** Whether to mount a bounded file system per sandbox; only honoured as root. Default: when root. */
        public Builder boundDisk(boolean b) {
            this.boundDisk = b;
            return this;
        }

        /** Whether to use cgroup v1 for whole-sandbox limits; only honoured as root. Default: when root. */
        public Builder cgroups(boolean b) {
            this.cgroups = b;
            return this;
        }

        public Builder workRoot(Path p) {
            this.workRoot = absolute(p, "workRoot");
            return this;
        }

        public Builder tmpSizeBytes(long n) {
            this.tmpSizeBytes = positive(n, "tmpSizeBytes");
            return this;
        }

        public Builder addressSpaceBytes(long n) {
            this.addressSpaceBytes = positive(n, "addressSpaceBytes");
            return this;
        }

        public Builder fileSizeBytes(long n) {
            this.fileSizeBytes = positive(n, "fileSizeBytes");
            return this;
        }

        public Builder maxProcesses(int n) {
            this.maxProcesses = (int) positive(n, "maxProcesses");
            return this;
        }

        public Builder maxOpenFiles(int n) {
            this.maxOpenFiles = (int) positive(n, "maxOpenFiles");
            return this;
        }

        public Builder dropUser(int uid, int gid) {
            if (uid <= 0 || gid <= 0) {
                throw new IllegalArgumentException("the drop uid and gid must not be root (0), were " + uid + ":" + gid);
            }
            this.dropUid = uid;
            this.dropGid = gid;
            return this;
        }

        public Builder dropPrivileges(boolean drop) {
            this.dropPrivileges = drop;
            return this;
        }

        public Builder mergedUsr(boolean merged) {
            this.mergedUsr = merged;
            return this;
        }

        public Builder argvIsUtf8(boolean utf8) {
            this.argvIsUtf8 = utf8;
            return this;
        }

        public LocalSettings build() {
            return new LocalSettings(this);
        }

        private static Path absolute(Path p, String what) {
            Objects.requireNonNull(p, what);
            if (!p.isAbsolute()) {
                throw new IllegalArgumentException(what + " must be an absolute path, was " + p);
            }
            return p.normalize();
        }

        /** Only /usr is visible in the sandbox, so programs run inside must live there. */
        private static Path underUsr(Path p, String what) {
            Path a = absolute(p, what);
            if (!a.startsWith("/usr/")) {
                throw new IllegalArgumentException(what + " must be under /usr (the only host directory the sandbox sees), was " + p);
            }
            return a;
        }

        private static long positive(long n, String what) {
            if (n <= 0) {
                throw new IllegalArgumentException(what + " must be positive, was " + n);
            }
            return n;
        }
    }
}
