package dev.sandbox4j.local;

import dev.sandbox4j.api.Sandbox;
import dev.sandbox4j.api.SandboxConfigurationException;
import dev.sandbox4j.api.SandboxInterruptedException;
import dev.sandbox4j.api.SandboxRunner;
import dev.sandbox4j.api.SandboxSpec;
import dev.sandbox4j.api.spi.ManagedSandboxRunner;
import dev.sandbox4j.local.internal.LocalDriver;
import dev.sandbox4j.local.internal.LocalHandle;
import dev.sandbox4j.local.internal.LocalSettings;
import dev.sandbox4j.policy.Capabilities;
import java.nio.file.Path;
import java.time.Duration;

/**
 * Runs untrusted code on this Linux machine, each execution in a fresh
 * <a href="https://github.com/containers/bubblewrap">bubblewrap</a> sandbox. The embedded default:
 * no account, no network round trip, about 5 to 15 ms added to an interpreter's start.
 *
 * <pre>{@code
 * try (SandboxRunner runner = LocalSandboxRunner.create()) {
 *     RunResult r = runner.run(RunRequest.python("print(6 * 7)"));
 * }
 * }</pre>
 *
 * <h2>What one sandbox is</h2>
 * A per-sandbox host directory, bound read-write at {@code /sandbox} (the working directory and
 * {@code HOME}) and kept across {@link Sandbox#exec} calls until {@link Sandbox#close()} (or until its
 * lifetime elapses: a timer destroys a sandbox the client forgot to close). Each execution starts a new
 * process tree with:
 * <ul>
 *   <li>new user, PID, mount, IPC, UTS, cgroup and network namespaces; creating further user
 *       namespaces is disabled ({@code --disable-userns}); no capabilities; a new session;</li>
 *   <li>a root file system holding only {@code /usr} (read-only, so installed packages, the JDK
 *       under {@code /usr/lib/jvm} included, are visible), a synthetic {@code /etc} (passwd,
 *       group, hosts, nsswitch.conf and a few public files such as CA certificates), a fresh
 *       {@code /proc} and {@code /dev}, size-limited tmpfs {@code /tmp} and {@code /dev/shm}, and
 *       {@code /sandbox}. The host's home directories, Maven and cloud credentials, {@code /etc/shadow}
 *       and the JVM's files are not there;</li>
 *   <li>an environment of {@code PATH}, {@code HOME}, {@code LANG}, {@code TMPDIR} and the spec's
 *       variables only. bwrap itself starts with an empty environment, so nothing of the JVM's
 *       environment is readable, not even through {@code /proc/1/environ};</li>
 *   <li>uid 1000 inside, which is the host's {@code nobody} (65534) when the JVM runs as root (bwrap
 *       is started through {@code setpriv}: as host root, RLIMIT_NPROC would not be enforced);</li>
 *   <li>resource limits set by {@code prlimit} inside the sandbox: CPU time, address space (4 GiB by
 *       default: Node needs 2 GiB or more just to start), file size, processes (counted per sandbox),
 *       open files, no core dumps;</li>
 *   <li>the budget on the wall clock: at the end of it the sandbox's PID 1 is killed with SIGKILL, so
 *       the kernel kills every process in its PID namespace, daemons included; the result is
 *       {@code TIMED_OUT} with the output so far;</li>
 *   <li>output read by two threads into bounded buffers; at the hard byte cap the tree is killed
 *       ({@code OUTPUT_LIMIT}).</li>
 * </ul>
 * Code never passes through a shell: it is an argument ({@code python3 -c CODE}, {@code node -e CODE},
 * {@code bash -c CODE}), or, when it holds a NUL byte or exceeds 100 KiB, a file in {@code /sandbox} run
 * by the interpreter.
 *
 * <h2>Egress</h2>
 * Exactly two modes: deny-all (the default; an empty network namespace with only its own loopback:
 * no DNS, no host services, no host abstract sockets) and allow-all (the host's network namespace,
 * <em>including services listening on the host's loopback, its abstract Unix sockets, its private
 * networks and any cloud metadata endpoint</em>; meant for trusted setup commands and for tests). Domain and CIDR rules cannot be enforced here and are refused before anything runs.
 * Because every execution is a new process, the egress can be narrowed after trusted setup commands.
 *
 * <h2>How strong this is, honestly</h2>
 * This is namespace isolation on the host's own kernel, roughly the class of a default Docker
 * container (tighter in places: no root inside, a minimal file system, no new user namespaces).
 * It stops what over-eager or confused AI code typically does: reading secrets and host files,
 * exfiltrating over the network, touching host processes, writing outside its directory, fork bombs,
 * runaway CPU, output floods and surviving its budget. It does not stop an exploit of a Linux kernel
 * bug reachable through ordinary system calls, and there is no seccomp filter yet: a kernel
 * vulnerability means the host is compromised. It also does not bound total memory (RLIMIT_AS limits
 * each process's address space, not the sum over processes) or total disk use of the work directory
 * (RLIMIT_FSIZE limits each file), and it leaks harmless facts about the host (kernel version, CPU,
 * the contents of {@code /usr}). MicroVM providers (E2B, Vercel Sandbox) put a separate guest kernel
 * between the code and the host; use one of them for multi-tenant or deliberately hostile code.
 *
 * <h2>Requirements</h2>
 * Linux with unprivileged user namespaces, bubblewrap ({@code apt-get install -y bubblewrap}),
 * util-linux ({@code prlimit}, {@code setpriv}), and interpreters under {@code /usr} (only {@code /usr}
 * is visible in the sandbox: a pyenv shim or an nvm node under a home directory will not work).
 * The first sandbox checks this once with a smoke run and otherwise throws
 * {@link SandboxConfigurationException} explaining what to install; there is never an unsandboxed
 * fallback.
 */
public final class LocalSandboxRunner implements SandboxRunner {
    private final LocalDriver driver;
    private final ManagedSandboxRunner<LocalHandle> delegate;

    private LocalSandboxRunner(Builder b) {
        this.driver = new LocalDriver(b.settings.build());
        ManagedSandboxRunner.Builder<LocalHandle> mb = ManagedSandboxRunner.builder(driver).maxCreateAttempts(1);
        if (b.teardownTimeout != null) {
            mb.teardownTimeout(b.teardownTimeout);
        }
        this.delegate = mb.build();
    }

    /** A runner with the defaults: {@code /usr/bin/bwrap}, {@code /usr/bin/python3}, {@code /usr/bin/node}, {@code /usr/bin/bash}. */
    public static LocalSandboxRunner create() {
        return builder().build();
    }

    public static Builder builder() {
        return new Builder();
    }

    @Override
    public String name() {
        return delegate.name();
    }

    /**
     * Deny-all, allow-all and live egress updates; a lifetime limit; separate stderr, sessions, setup
     * commands, input files and env; the languages whose interpreter is installed.
     */
    @Override
    public Capabilities capabilities() {
        return delegate.capabilities();
    }

    /**
     * @throws dev.sandbox4j.policy.UnsupportedPolicyException for domain or CIDR rules, header rules,
     *         and vCPU, memory or disk limits, before anything is created
     * @throws SandboxConfigurationException when bubblewrap is missing or cannot create a sandbox here
     * @throws SandboxInterruptedException when the calling thread is interrupted
     */
    @Override
    public Sandbox open(SandboxSpec spec) {
        return delegate.open(spec);
    }

    /**
     * Checks now, instead of at the first {@link #open}, that bubblewrap works here (once per runner).
     *
     * @throws SandboxConfigurationException saying what is missing and how to install it
     */
    public LocalSandboxRunner verify() {
        try {
            driver.verify();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new SandboxInterruptedException("interrupted while checking bubblewrap");
        }
        return this;
    }

    /**
     * Opens a sandbox whose files and egress can be changed while it is open. Meant for provider
     * emulators and tests, which must apply what a client sends mid-session (an upload, a network
     * update); applications should fix both in the {@link SandboxSpec} instead.
     */
    public LocalSandbox openLocal(SandboxSpec spec) {
        Sandbox sandbox = delegate.open(spec);
        LocalHandle handle = driver.handle(sandbox.id()).orElse(null);
        if (handle == null) {
            sandbox.close();
            throw new IllegalStateException("local sandbox " + sandbox.id() + " vanished while opening");
        }
        return new LocalSandbox(sandbox, handle, driver);
    }

    /** Sandboxes of this runner not yet closed or expired. */
    public int openSandboxes() {
        return driver.openSandboxes();
    }

    /** Open sandboxes stay usable; there is nothing else to release. */
    @Override
    public void close() {
        delegate.close();
    }

    @Override
    public String toString() {
        return "LocalSandboxRunner[" + driver.settings() + "]";
    }

    /** Paths and limits. Every value has a default that works on Debian and Ubuntu. */
    public static final class Builder {
        private final LocalSettings.Builder settings = LocalSettings.builder();
        private Duration teardownTimeout;

        private Builder() {
        }

        /** The bubblewrap binary. Default {@code /usr/bin/bwrap}. */
        public Builder bwrap(Path path) {
            settings.bwrap(path);
            return this;
        }

        /** The Python interpreter, under {@code /usr}. Default {@code /usr/bin/python3}. */
        public Builder python(Path path) {
            settings.python(path);
            return this;
        }

        /** The Node.js binary, under {@code /usr}. Default {@code /usr/bin/node}. */
        public Builder node(Path path) {
            settings.node(path);
            return this;
        }

        /** The bash binary, under {@code /usr}. Default {@code /usr/bin/bash}. */
        public Builder bash(Path path) {
            settings.bash(path);
            return this;
        }

        /** {@code prlimit} from util-linux, under {@code /usr}. Default {@code /usr/bin/prlimit}. */
        public Builder prlimit(Path path) {
            settings.prlimit(path);
            return this;
        }

        /** {@code setpriv} from util-linux, used when the JVM runs as root. Default {@code /usr/bin/setpriv}. */
        public Builder setpriv(Path path) {
            settings.setpriv(path);
            return this;
        }

        /**
         * Where per-sandbox directories are created. Default {@code java.io.tmpdir}. When the JVM runs
         * as root it must be traversable by the drop user (as {@code /tmp} is).
         */
        public Builder workRoot(Path path) {
            settings.workRoot(path);
            return this;
        }

        /** The host user bwrap runs as when the JVM is root. Default 65534:65534 ({@code nobody}). */
        public Builder dropUser(int uid, int gid) {
            settings.dropUser(uid, gid);
            return this;
        }

        /** Size of each of the sandbox's tmpfs mounts ({@code /tmp}, {@code /dev/shm}). Default 64 MiB. */
        public Builder tmpSizeMib(int mib) {
            settings.tmpSizeBytes(mib * LocalSettings.MIB);
            return this;
        }

        /** RLIMIT_AS per process. Default 4096 MiB; Node fails to start below about 2048. */
        public Builder maxAddressSpaceMib(int mib) {
            settings.addressSpaceBytes(mib * LocalSettings.MIB);
            return this;
        }

        /** RLIMIT_FSIZE: the largest file a process may write. Default 256 MiB. */
        public Builder maxFileSizeMib(int mib) {
            settings.fileSizeBytes(mib * LocalSettings.MIB);
            return this;
        }

        /** RLIMIT_NPROC: processes and threads per sandbox. Default 128. */
        public Builder maxProcesses(int n) {
            settings.maxProcesses(n);
            return this;
        }

        /** RLIMIT_NOFILE. Default 1024. */
        public Builder maxOpenFiles(int n) {
            settings.maxOpenFiles(n);
            return this;
        }

        /** How long close() keeps trying to remove a sandbox. Default 30 s. */
        public Builder teardownTimeout(Duration d) {
            if (d == null || d.isNegative() || d.isZero()) {
                throw new IllegalArgumentException("teardownTimeout must be positive, was " + d);
            }
            this.teardownTimeout = d;
            return this;
        }

        /** Builds the runner; bubblewrap is checked at the first {@link #open} (or by {@link #verify()}). */
        public LocalSandboxRunner build() {
            return new LocalSandboxRunner(this);
        }
    }
}
