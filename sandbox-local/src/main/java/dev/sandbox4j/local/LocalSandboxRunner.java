package dev.sandbox4j.local;

import dev.sandbox4j.api.Sandbox;
import dev.sandbox4j.api.exception.SandboxConfigurationException;
import dev.sandbox4j.api.exception.SandboxInterruptedException;
import dev.sandbox4j.api.ForwardingSandboxRunner;
import dev.sandbox4j.api.LifecycleListener;
import dev.sandbox4j.api.SandboxRunner;
import dev.sandbox4j.api.SandboxSpec;
import dev.sandbox4j.spi.lifecycle.ManagedSandboxRunner;
import dev.sandbox4j.local.internal.LocalDriver;
import dev.sandbox4j.local.internal.LocalHandle;
import dev.sandbox4j.local.internal.LocalSettings;
import dev.sandbox4j.policy.Capabilities;
import java.nio.file.Path;
import java.time.Duration;

/**
 * Runs untrusted code on this Linux machine, each execution in a fresh
 * <a href="https://github.com/containers/bubblewrap">bubblewrap</a> sandbox. The embedded default:
 * no account, no network round trip, about 10 to 15 ms added to an interpreter's start per exec, and
 * about 10 ms more per sandbox as root (mounting and unmounting its file system, making its cgroup).
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
 * lifetime elapses: a timer destroys a sandbox the client forgot to close). When the JVM runs as root
 * (and may mount: a root without CAP_SYS_ADMIN, as in an unprivileged container, falls back to the
 * per-process limits), it is a size- and inode-limited tmpfs mounted for the sandbox's life ({@code Limits.diskMib}, default
 * {@link Builder#diskMib 1 GiB}, one inode per 16 KiB) that also holds {@code /tmp} and {@code /dev/shm}
 * (so those are kept across execs too), and the sandbox has its own cgroup v1 memory group
 * ({@code Limits.memoryMib}, default {@link Builder#memoryMib 2 GiB}, its files included) and, with
 * {@code Limits.vcpus}, a CPU quota; processes are bounded per sandbox by RLIMIT_NPROC. {@link #enforcement()} says
 * which limit is enforced how on this machine, and {@link #capabilities()} declares DISK, MEMORY and
 * VCPUS only when they are. Each execution starts a new process tree with:
 * <ul>
 *   <li>new user, PID, mount, IPC, UTS, cgroup and network namespaces; creating further user
 *       namespaces is disabled ({@code --disable-userns}); no capabilities; a new session;</li>
 *   <li>a seccomp filter (classic BPF written by this library, tables for x86_64 and aarch64; on any
 *       other architecture the runner refuses to start): the keyring calls ({@code keyctl},
 *       {@code add_key}, {@code request_key}), {@code io_uring_*}, {@code ptrace},
 *       {@code process_vm_readv/writev}, {@code perf_event_open}, {@code bpf}, {@code userfaultfd},
 *       {@code kexec_*}, module loading, the mount family, {@code pivot_root}, {@code swapon/off},
 *       {@code reboot}, {@code acct}, {@code open_by_handle_at}, {@code unshare}, {@code setns}, {@code clone}
 *       with a namespace flag and every call of another ABI (32-bit x86, x32) fail with EPERM;
 *       {@code clone3} fails with ENOSYS (its flags cannot be inspected; libraries fall back to clone);
 *       {@code /proc/keys} and {@code /proc/key-users} read as empty;</li>
 *   <li>a root file system holding only {@code /usr} (read-only, so installed packages, the JDK
 *       under {@code /usr/lib/jvm} included, are visible), a synthetic {@code /etc} (passwd,
 *       group, hosts, nsswitch.conf and a few public files such as CA certificates), a fresh
 *       {@code /proc} and {@code /dev}, size-limited {@code /tmp} and {@code /dev/shm}, and
 *       {@code /sandbox}; {@code /} and {@code /dev} are read-only, so only {@code /sandbox}, {@code /tmp}
 *       and {@code /dev/shm} are writable, each bounded. The host's home directories, Maven and cloud
 *       credentials, {@code /etc/shadow} and the JVM's files are not there;</li>
 *   <li>stdin is {@code /dev/null}: reading it gives end of file at once, in every language;</li>
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
 * How it starts: the JVM runs {@code sh -c SCRIPT} where SCRIPT is a constant (nothing from a request
 * is spliced into it; paths are positional arguments): it moves itself into the sandbox's
 * cgroups (writing 0 to their {@code tasks} files), then execs {@code [setpriv ...] bwrap --args 3 --seccomp 4} with the
 * options pipe (the JVM writes the NUL-separated options to its stdin) moved to fd 3, the compiled filter
 * (a file in the sandbox's host directory) opened on fd 4, and {@code /dev/null} as stdin.
 * Code never passes through a shell: it is an argument ({@code python3 -c CODE}, {@code node -e CODE},
 * {@code bash -c CODE}), or, when it holds a NUL byte or exceeds 100 KiB, a file in {@code /sandbox} run
 * by the interpreter.
 *
 * <h2>Files back</h2>
 * {@link Sandbox#readFile}, {@link Sandbox#listFiles} and {@code Execution.collect} read the host
 * directory behind {@code /sandbox} from the JVM, between execs (no sandboxed process is alive then:
 * each exec's PID namespace dies with it), without following a symbolic link anywhere: every directory
 * is opened relative to its parent's handle with {@code O_NOFOLLOW}, the file is checked through that
 * handle and opened with {@code O_NOFOLLOW}, so a link planted by the code, in the path or at its end,
 * is refused; reads stop at the caller's cap. Should anything still change the tree while it is read
 * (a FIFO put in a file's place after the check), no read can stall: every open is given up after 2 s,
 * what was opened is checked again (a FIFO is refused), and one file's read is bounded by 10 s, each
 * ending in a typed refusal. Files in {@code /tmp} are not reachable this way.
 *
 * <h2>Egress</h2>
 * Three modes: deny-all (the default; an empty network namespace with only its own loopback:
 * no DNS, no host services, no host abstract sockets), allow-all (the host's network namespace,
 * <em>including services listening on the host's loopback, its abstract Unix sockets, its private
 * networks and any cloud metadata endpoint</em>; meant for trusted setup commands and for tests), and a
 * list (domains, {@code *.x} patterns, CIDRs, denied CIDRs, header rules; deny by default): the same empty
 * network namespace, whose only way out is an {@code EgressProxy} (module {@code sandbox-egress}) this
 * runner starts for the sandbox in the JVM, listening on a unix socket in the sandbox's host directory
 * (in a directory only the sandbox's user and root can enter), bound read-only at
 * {@code /sandbox4j-egress}. The sandbox's PID 1 starts a small forwarder before the code's first line:
 * it listens on {@code 127.0.0.1:3128} inside the sandbox and relays each connection to that socket;
 * {@code HTTP_PROXY}, {@code HTTPS_PROXY}, {@code ALL_PROXY} and their lower-case forms point at it,
 * {@code NO_PROXY} is empty. The proxy enforces the list (names, the addresses names resolve to, IP
 * literals, the TLS server name) and answers each refusal with a 403 the code can read; with header
 * rules it terminates TLS for the brokered hosts with a CA of its own, whose certificate (never its key)
 * is in {@code /sandbox4j-egress} with {@code SSL_CERT_FILE}, {@code REQUESTS_CA_BUNDLE},
 * {@code CURL_CA_BUNDLE} (the system CAs followed by it) and {@code NODE_EXTRA_CA_CERTS} pointing there.
 * The forwarder is not a security boundary: code can kill or replace it, which only cuts its own route;
 * everything is decided by the proxy on the host. A client that ignores the proxy variables gets no
 * route at all (no DNS, no interface but loopback): an error, never a way around the proxy. The proxy
 * is replaced when the egress changes and closed, its connections with it, when the sandbox closes;
 * {@link Builder#egressProxy} sets its resolver, limits and upstream trust. Allow lists need Python
 * ({@link Builder#python}) for the forwarder; without it they are refused before anything runs, as is a
 * default-allow policy with denied CIDRs (behind a proxy, what is not HTTP cannot leave at all).
 * Because every execution is a new process, the egress can be narrowed after trusted setup commands.
 * A network allowance ({@code Limits.networkMib}, {@code Limit.NETWORK}, declared with the proxy) is
 * counted in these proxies over the sandbox's life: at an egress change the old proxy is closed and
 * counted first, and the next relays at most what is left (nothing left: no proxy, no route). Allow-all,
 * which goes past the proxy, is refused with it, as the code's egress or the setup's.
 *
 * <h2>Files from the JVM</h2>
 * Input files, code files and {@link LocalSandbox#writeFile} are written so that code running at the
 * same time cannot redirect them: each directory is opened relative to its parent's handle without
 * following symlinks, and each new file or directory is made in a staging directory the sandbox cannot
 * see, given its owner and mode through its own handle there, then renamed into the opened directory.
 *
 * <h2>Detach and attach</h2>
 * {@link Sandbox#detach()} hands a sandbox to a registry of this JVM; {@link #attach} on any local
 * runner of the same JVM takes it back after the usual checks and a comparison of what the runner knows
 * for sure (the egress in effect, disk, memory and vCPU bounds, env names, the host user); see the
 * package documentation. Local sandboxes cannot be attached from another JVM. A detached sandbox still
 * ends at its lifetime and at the JVM's exit; it runs no process while detached.
 *
 * <h2>After a crash</h2>
 * Each sandbox directory names its JVM (pid and start time). The first {@link #open} or {@link #verify}
 * of a runner removes, once per JVM and work root, the sandboxes whose JVM is gone (a JVM killed with
 * SIGKILL runs no shutdown hook): processes left in their cgroups are killed, their file systems
 * unmounted, their directories deleted with the handle-relative delete.
 *
 * <h2>How strong this is, honestly</h2>
 * This is namespace isolation on the host's own kernel, roughly the class of a default Docker
 * container (tighter in places: no root inside, a minimal file system, no new user namespaces).
 * It stops what over-eager or confused AI code typically does: reading secrets and host files,
 * exfiltrating over the network, touching host processes, writing outside its directory, fork bombs,
 * runaway CPU, output floods and surviving its budget. It does not stop an exploit of a Linux kernel
 * bug reachable through the system calls the filter allows: a kernel vulnerability there means the
 * host is compromised. When the JVM is not root (or {@link Builder#kernelLimits kernelLimits(false)}),
 * total memory and disk are not bounded per sandbox: RLIMIT_AS limits each process's address space,
 * RLIMIT_FSIZE each file, the tmpfs {@code /tmp} and {@code /dev/shm} their own size, and the work
 * directory lies on the host's disk. It leaks harmless facts about the host (kernel version, CPU,
 * the contents of {@code /usr}). MicroVM providers (E2B, Vercel Sandbox) put a separate guest kernel
 * between the code and the host; use one of them for multi-tenant or deliberately hostile code.
 *
 * <h2>Requirements</h2>
 * Linux on x86_64 or aarch64 with unprivileged user namespaces, bubblewrap
 * ({@code apt-get install -y bubblewrap}), {@code /bin/sh}, util-linux ({@code prlimit}, {@code setpriv},
 * {@code mount} as root), and interpreters under {@code /usr} (only {@code /usr}
 * is visible in the sandbox: a pyenv shim or an nvm node under a home directory will not work).
 * The first sandbox checks this once with a smoke run and otherwise throws
 * {@link SandboxConfigurationException} explaining what to install; there is never an unsandboxed
 * fallback.
 *
 * @since 0.1.0
 */
public final class LocalSandboxRunner extends ForwardingSandboxRunner<SandboxRunner> {
    private final LocalDriver driver;

    private LocalSandboxRunner(Builder b) {
        this(new LocalDriver(b.settings.build()), b);
    }

    private LocalSandboxRunner(LocalDriver driver, Builder b) {
        super(lifecycle(driver, b)); // typed as a plain SandboxRunner: the public signature names no internal handle
        this.driver = driver;
    }

    private static ManagedSandboxRunner<LocalHandle> lifecycle(LocalDriver driver, Builder b) {
        ManagedSandboxRunner.Builder<LocalHandle> mb = ManagedSandboxRunner.builder(driver).maxCreateAttempts(1)
                .lifecycleListener(b.lifecycleListener);
        if (b.teardownTimeout != null) {
            mb.teardownTimeout(b.teardownTimeout);
        }
        return mb.build();
    }

    /**
     * {@return a runner with the defaults: {@code /usr/bin/bwrap}, {@code /usr/bin/python3}, {@code /usr/bin/node}, {@code /usr/bin/bash}}
     */
    public static LocalSandboxRunner create() {
        return builder().build();
    }

    /** {@return a new builder; every value has a default that works on Debian and Ubuntu} */
    public static Builder builder() {
        return new Builder();
    }

    /**
     * Deny-all, allow-all, lists through the egress proxy (where Python is installed) and live egress
     * updates; a lifetime limit, and disk, memory and vCPU limits
     * where the kernel enforces them for the whole sandbox here (as root); separate stderr, sessions,
     * setup commands, input files and env; attach within this JVM; the languages whose interpreter is installed.
     */
    @Override
    public Capabilities capabilities() {
        return super.capabilities();
    }

    /**
     * @throws dev.sandbox4j.policy.UnsupportedPolicyException for default allow with denied CIDRs, lists
     *         where no Python is installed, and vCPU, memory or disk limits this machine does not enforce (see {@link #enforcement()}),
     *         before anything is created
     * @throws SandboxConfigurationException when bubblewrap is missing or cannot create a sandbox here
     * @throws SandboxInterruptedException when the calling thread is interrupted
     */
    @Override
    public Sandbox open(SandboxSpec spec) {
        return super.open(spec);
    }

    /**
     * Checks now, instead of at the first {@link #open}, that bubblewrap works here (once per runner).
     *
     * @return this runner
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
     *
     * @param spec the sandbox's egress, limits, files, env and setup
     * @return the open sandbox; close it
     * @throws IllegalStateException when the sandbox vanished while opening
     */
    public LocalSandbox openLocal(SandboxSpec spec) {
        Sandbox sandbox = delegate().open(spec);
        LocalHandle handle = driver.handle(sandbox.id()).orElse(null);
        if (handle == null) {
            sandbox.close();
            throw new IllegalStateException("local sandbox " + sandbox.id() + " vanished while opening");
        }
        return new LocalSandbox(sandbox, handle, driver);
    }

    /**
     * How each limit is enforced on this machine, one sentence per limit (system calls, disk, memory,
     * processes, vCPUs). {@link #capabilities()} declares {@code DISK}, {@code MEMORY} and {@code VCPUS}
     * only when the kernel enforces them for the whole sandbox, as listed here.
     *
     * @return one sentence per limit
     */
    public java.util.List<String> enforcement() {
        return driver.enforcement();
    }

    /**
     * {@return the sandboxes of this runner not yet removed}: those open and those being created (counted from the
     * create's first side effect until it is registered or has removed what it made). Zero once
     * {@link #close()} has returned, unless a create outlived close's wait (then until it has removed itself).
     */
    public int openSandboxes() {
        return driver.openSandboxes();
    }

    /**
     * Refuses new sandboxes at once, tears down those open, waits up to 30 s for creates in flight, then
     * tears down every sandbox registered meanwhile. A create that finishes after close began removes its
     * sandbox itself (directory, mount, cgroup) and throws a {@link dev.sandbox4j.api.exception.SandboxException}
     * (not retriable, no code ran); an {@code open} that starts after close throws
     * {@link IllegalStateException}. When it returns, nothing of any sandbox of this runner is left, unless
     * a create outlived the wait (it is logged and removes itself when it finishes). Idempotent.
     */
    @Override
    public void close() {
        driver.refuseCreates();
        super.close();
    }

    @Override
    public String toString() {
        return "LocalSandboxRunner[" + driver.settings() + "]";
    }

    /**
     * Paths and limits. Every value has a default that works on Debian and Ubuntu.
     *
     * @since 0.1.0
     */
    public static final class Builder {
        private final LocalSettings.Builder settings = LocalSettings.builder();
        private Duration teardownTimeout;
        private LifecycleListener lifecycleListener = LifecycleListener.NONE;
        private java.util.function.Consumer<dev.sandbox4j.egress.EgressProxy.Builder> egressProxy = b -> { };

        private Builder() {
        }

        /**
         * Sets up the egress proxy of each sandbox whose egress is a list: its resolver (default the
         * system's), limits, the trust store that verifies brokered servers, domain ports and, for tests,
         * routes of a {@code host:port} to a loopback listener. Called on a fresh
         * {@code EgressProxy.Builder} for each proxy; the runner sets the policy and the socket afterwards,
         * so nothing here can widen a sandbox's policy. These are the application's settings: code in the
         * sandbox can change none of them. Default: the proxy's defaults.
         *
         * @param setup called on each proxy's builder; not null
         * @return this builder
         */
        public Builder egressProxy(java.util.function.Consumer<dev.sandbox4j.egress.EgressProxy.Builder> setup) {
            this.egressProxy = java.util.Objects.requireNonNull(setup, "setup");
            return this;
        }

        /**
         * Hears every create, exec, teardown and suspected leak of this runner, for metrics and traces
         * (e.g. {@code dev.sandbox4j:sandbox4j-micrometer}). Default none.
         *
         * @param listener not null
         * @return this builder
         */
        public Builder lifecycleListener(LifecycleListener listener) {
            this.lifecycleListener = java.util.Objects.requireNonNull(listener, "listener");
            return this;
        }


        /**
         * The bubblewrap binary. Default {@code /usr/bin/bwrap}.
         *
         * @param path absolute
         * @return this builder
         * @throws IllegalArgumentException when not absolute
         */
        public Builder bwrap(Path path) {
            settings.bwrap(path);
            return this;
        }

        /**
         * The Python interpreter, under {@code /usr}. Default {@code /usr/bin/python3}.
         *
         * @param path absolute, under {@code /usr}
         * @return this builder
         * @throws IllegalArgumentException when not absolute or not under {@code /usr}
         */
        public Builder python(Path path) {
            settings.python(path);
            return this;
        }

        /**
         * The Node.js binary, under {@code /usr}. Default {@code /usr/bin/node}.
         *
         * @param path absolute, under {@code /usr}
         * @return this builder
         * @throws IllegalArgumentException when not absolute or not under {@code /usr}
         */
        public Builder node(Path path) {
            settings.node(path);
            return this;
        }

        /**
         * The bash binary, under {@code /usr}. Default {@code /usr/bin/bash}.
         *
         * @param path absolute, under {@code /usr}
         * @return this builder
         * @throws IllegalArgumentException when not absolute or not under {@code /usr}
         */
        public Builder bash(Path path) {
            settings.bash(path);
            return this;
        }

        /**
         * {@code prlimit} from util-linux, under {@code /usr}. Default {@code /usr/bin/prlimit}.
         *
         * @param path absolute, under {@code /usr}
         * @return this builder
         * @throws IllegalArgumentException when not absolute or not under {@code /usr}
         */
        public Builder prlimit(Path path) {
            settings.prlimit(path);
            return this;
        }

        /**
         * {@code setpriv} from util-linux, used when the JVM runs as root. Default {@code /usr/bin/setpriv}.
         *
         * @param path absolute
         * @return this builder
         * @throws IllegalArgumentException when not absolute
         */
        public Builder setpriv(Path path) {
            settings.setpriv(path);
            return this;
        }

        /**
         * Where per-sandbox directories are created. Default {@code java.io.tmpdir}. When the JVM runs
         * as root it must be traversable by the drop user (as {@code /tmp} is).
         *
         * @param path absolute
         * @return this builder
         * @throws IllegalArgumentException when not absolute
         */
        public Builder workRoot(Path path) {
            settings.workRoot(path);
            return this;
        }

        /**
         * The host user bwrap runs as when the JVM is root. Default 65534:65534 ({@code nobody}).
         *
         * @param uid the user id, not 0
         * @param gid the group id, not 0
         * @return this builder
         * @throws IllegalArgumentException when either is root (0)
         */
        public Builder dropUser(int uid, int gid) {
            settings.dropUser(uid, gid);
            return this;
        }

        /**
         * Size of each of the sandbox's tmpfs mounts ({@code /tmp}, {@code /dev/shm}, fresh for each exec)
         * when the disk is not bounded per sandbox (not root); with a bounded disk they live on the
         * sandbox's own file system under {@link #diskMib}. Default 64 MiB.
         *
         * @param mib in MiB, positive
         * @return this builder
         * @throws IllegalArgumentException when not positive
         */
        public Builder tmpSizeMib(int mib) {
            settings.tmpSizeBytes(mib * LocalSettings.MIB);
            return this;
        }

        /**
         * The default bound on everything a sandbox can write ({@code /sandbox}, {@code /tmp} and
         * {@code /dev/shm} together, one inode per 16 KiB), kept for the sandbox's life; a spec's
         * {@code Limits.diskMib} overrides it. Enforced only when the JVM runs as root (a tmpfs mounted
         * per sandbox); otherwise {@link #tmpSizeMib} and {@link #maxFileSizeMib} are the bounds. Default 1024 MiB.
         *
         * @param mib in MiB, positive
         * @return this builder
         * @throws IllegalArgumentException when not positive
         */
        public Builder diskMib(int mib) {
            settings.diskBytes(mib * LocalSettings.MIB);
            return this;
        }

        /**
         * The default memory limit of a whole sandbox (all its processes, and its files, which live in
         * memory); a spec's {@code Limits.memoryMib} overrides it. Enforced only as root with a cgroup v1
         * memory hierarchy; otherwise only {@link #maxAddressSpaceMib} per process. Default 2048 MiB.
         *
         * @param mib in MiB, positive
         * @return this builder
         * @throws IllegalArgumentException when not positive
         */
        public Builder memoryMib(int mib) {
            settings.memoryBytes(mib * LocalSettings.MIB);
            return this;
        }

        /**
         * Whether to use the kernel's whole-sandbox limits where this machine allows them (a bounded file
         * system and cgroups, both as root). Default true; false keeps only the per-process limits, which
         * is what a JVM that is not root gets, and {@link #capabilities()} then declares neither DISK,
         * MEMORY nor VCPUS.
         *
         * @param enabled false to keep only the per-process limits
         * @return this builder
         */
        public Builder kernelLimits(boolean enabled) {
            settings.boundDisk(enabled);
            settings.cgroups(enabled);
            return this;
        }

        /**
         * RLIMIT_AS per process. Default 4096 MiB; Node fails to start below about 2048.
         *
         * @param mib in MiB, positive
         * @return this builder
         * @throws IllegalArgumentException when not positive
         */
        public Builder maxAddressSpaceMib(int mib) {
            settings.addressSpaceBytes(mib * LocalSettings.MIB);
            return this;
        }

        /**
         * RLIMIT_FSIZE: the largest file a process may write. Default 256 MiB.
         *
         * @param mib in MiB, positive
         * @return this builder
         * @throws IllegalArgumentException when not positive
         */
        public Builder maxFileSizeMib(int mib) {
            settings.fileSizeBytes(mib * LocalSettings.MIB);
            return this;
        }

        /**
         * RLIMIT_NPROC: processes and threads per sandbox. Default 128.
         *
         * @param n positive
         * @return this builder
         * @throws IllegalArgumentException when not positive
         */
        public Builder maxProcesses(int n) {
            settings.maxProcesses(n);
            return this;
        }

        /**
         * RLIMIT_NOFILE. Default 1024.
         *
         * @param n positive
         * @return this builder
         * @throws IllegalArgumentException when not positive
         */
        public Builder maxOpenFiles(int n) {
            settings.maxOpenFiles(n);
            return this;
        }

        /**
         * How long close() keeps trying to remove a sandbox. Default 30 s.
         *
         * @param d positive
         * @return this builder
         * @throws IllegalArgumentException when null, zero or negative
         */
        public Builder teardownTimeout(Duration d) {
            if (d == null || d.isNegative() || d.isZero()) {
                throw new IllegalArgumentException("teardownTimeout must be positive, was " + d);
            }
            this.teardownTimeout = d;
            return this;
        }

        /**
         * Builds the runner; bubblewrap is checked at the first {@link LocalSandboxRunner#open} (or by
         * {@link LocalSandboxRunner#verify()}).
         *
         * @return the runner
         */
        public LocalSandboxRunner build() {
            settings.egressGateways(dev.sandbox4j.local.internal.ProxyGateways.of(egressProxy));
            return new LocalSandboxRunner(this);
        }
    }
}
