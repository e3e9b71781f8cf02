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
    private final Path workRoot;
    private final long tmpSizeBytes;
    private final long addressSpaceBytes;
    private final long fileSizeBytes;
    private final int maxProcesses;
    private final int maxOpenFiles;
    private final int dropUid;
    private final int dropGid;
    private final boolean dropPrivileges;
    private final boolean mergedUsr;
    private final boolean argvIsUtf8;

    private LocalSettings(Builder b) {
        this.bwrap = b.bwrap;
        this.prlimit = b.prlimit;
        this.setpriv = b.setpriv;
        this.python = b.python;
        this.node = b.node;
        this.bash = b.bash;
        this.workRoot = b.workRoot != null ? b.workRoot : Path.of(System.getProperty("java.io.tmpdir"));
        this.tmpSizeBytes = b.tmpSizeBytes;
        this.addressSpaceBytes = b.addressSpaceBytes;
        this.fileSizeBytes = b.fileSizeBytes;
        this.maxProcesses = b.maxProcesses;
        this.maxOpenFiles = b.maxOpenFiles;
        this.dropUid = b.dropUid;
        this.dropGid = b.dropGid;
        this.dropPrivileges = b.dropPrivileges != null ? b.dropPrivileges : jvmIsRoot();
        this.mergedUsr = b.mergedUsr != null ? b.mergedUsr : Files.isSymbolicLink(Path.of("/bin"));
        this.argvIsUtf8 = b.argvIsUtf8 != null ? b.argvIsUtf8 : jnuIsUtf8();
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

    static boolean jvmIsRoot() {
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

    @Override
    public String toString() {
        return "LocalSettings[bwrap=" + bwrap + ", workRoot=" + workRoot + ", dropPrivileges=" + dropPrivileges
                + (dropPrivileges ? " (uid " + dropUid + ")" : "") + ", tmp=" + tmpSizeBytes / MIB + " MiB, as="
                + addressSpaceBytes / MIB + " MiB, fsize=" + fileSizeBytes / MIB + " MiB, nproc=" + maxProcesses
                + ", nofile=" + maxOpenFiles + "]";
    }

    public static final class Builder {
        private Path bwrap = Path.of("/usr/bin/bwrap");
        private Path prlimit = Path.of("/usr/bin/prlimit");
        private Path setpriv = Path.of("/usr/bin/setpriv");
        private Path python = Path.of("/usr/bin/python3");
        private Path node = Path.of("/usr/bin/node");
        private Path bash = Path.of("/usr/bin/bash");
        private Path workRoot;
        private long tmpSizeBytes = 64 * MIB;
        private long addressSpaceBytes = 4096 * MIB;
        private long fileSizeBytes = 256 * MIB;
        private int maxProcesses = 128;
        private int maxOpenFiles = 1024;
        private int dropUid = 65534;
        private int dropGid = 65534;
        private Boolean dropPrivileges;
        private Boolean mergedUsr;
        private Boolean argvIsUtf8;

        private Builder() {
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
