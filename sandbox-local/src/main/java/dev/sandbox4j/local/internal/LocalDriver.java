package dev.sandbox4j.local.internal;

import dev.sandbox4j.api.Execution;
import dev.sandbox4j.api.FileEntry;
import dev.sandbox4j.api.InputFile;
import dev.sandbox4j.api.exception.SandboxConfigurationException;
import dev.sandbox4j.api.exception.SandboxException;
import dev.sandbox4j.api.exception.SandboxInterruptedException;
import dev.sandbox4j.api.SandboxFile;
import dev.sandbox4j.api.exception.SandboxNotFoundException;
import dev.sandbox4j.api.exception.AttachRefusedException;
import dev.sandbox4j.api.SandboxSpec;
import dev.sandbox4j.spi.Attachable;
import dev.sandbox4j.spi.CreateRequest;
import dev.sandbox4j.spi.ExecOutcome;
import dev.sandbox4j.spi.OutputSink;
import dev.sandbox4j.spi.RunIds;
import dev.sandbox4j.spi.SandboxDriver;
import dev.sandbox4j.policy.Capabilities;
import dev.sandbox4j.policy.EgressPolicy;
import dev.sandbox4j.policy.Language;
import dev.sandbox4j.policy.UnsupportedPolicyException;
import java.io.ByteArrayOutputStream;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.ReentrantLock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The bubblewrap driver: a sandbox is a host directory; each exec is a fresh bwrap process over it,
 * so egress can change between execs (the lock-down after setup is just the next exec's flags).
 *
 * <p>What ends an exec's processes, on each path (every process of an exec is in one PID namespace,
 * whose PID 1 is the execute-only init of {@link BwrapCommand}, which the code can neither write nor
 * signal; when that PID 1 exits the kernel SIGKILLs the rest of the namespace):
 * <ul>
 *   <li>the code exits: the init exits with its status, the kernel empties the namespace, and bwrap
 *       returns only after reaping the init, so nothing is left when {@code exec} returns;</li>
 *   <li>budget, output cap, interrupt, {@code close()}, lifetime, JVM shutdown hook: the JVM SIGKILLs
 *       the init from the host ({@link ProcessTree}; bwrap's {@code --die-with-parent} backs it) and
 *       waits until bwrap has reaped it;</li>
 *   <li>then, with kernel limits (root, cgroup v1), every process still in the sandbox's cgroup is
 *       SIGKILLed until it is empty, after every exec and at teardown.</li>
 * </ul>
 * The same holds without root and without cgroups: nothing of it depends on a cgroup.
 */
public final class LocalDriver implements SandboxDriver<LocalHandle> {
    private static final Logger log = LoggerFactory.getLogger(LocalDriver.class);
    public static final String PROVIDER = "local";
    static final String INSTALL_HINT = "install it with `apt-get install -y bubblewrap` (`sudo apt-get install -y bubblewrap` when not root)";
    private static final int MAX_ENV_VALUE_BYTES = 100 * 1024;
    private static final int MAX_ENV_TOTAL_BYTES = 512 * 1024;
    private static final long DRAIN_WAIT_SECONDS = 10;

    private static final ExecutorService IO = Executors.newCachedThreadPool(daemon("sandbox4j-local-io"));
    private static final ScheduledExecutorService EXPIRY = expiryScheduler();
    /** Every open local sandbox in this JVM, for the shutdown hook. */
    private static final Map<LocalHandle, LocalSettings> ALL = new ConcurrentHashMap<>();

    static {
        Runtime.getRuntime().addShutdownHook(new Thread(LocalDriver::destroyAllAtExit, "sandbox4j-local-shutdown"));
    }

    /**
     * Detached sandboxes of this JVM by id, owned by no runner until one attaches it. Only this JVM can
     * attach them: a local sandbox's egress proxy, lifetime timer and teardown live in the JVM that made it.
     */
    private static final Map<String, LocalHandle> DETACHED = new ConcurrentHashMap<>();

    /** Work roots already swept for stale sandbox directories in this JVM. */
    private static final Set<Path> SWEPT = ConcurrentHashMap.newKeySet();

    /**
     * What the host egress proxy enforces, declared when one is configured and Python (which runs the
     * in-sandbox forwarder) is installed. Not DEFAULT_ALLOW_WITH_DENIES: behind a proxy, what is not
     * HTTP or a CONNECT tunnel cannot leave at all, which is not "everything but these ranges".
     */
    static final List<Capabilities.Egress> PROXIED_EGRESS = List.of(Capabilities.Egress.DEFAULT_DENY_WITH_RULES,
            Capabilities.Egress.ALLOW_DOMAINS, Capabilities.Egress.ALLOW_WILDCARD_DOMAINS,
            Capabilities.Egress.ALLOW_CIDRS_IPV4, Capabilities.Egress.ALLOW_CIDRS_IPV6,
            Capabilities.Egress.DENY_CIDRS_IPV4, Capabilities.Egress.DENY_CIDRS_IPV6,
            Capabilities.Egress.DENY_INSIDE_ALLOWED_CIDR, Capabilities.Egress.DENY_OVER_DOMAINS,
            Capabilities.Egress.DOMAINS_WITH_CIDRS, Capabilities.Egress.HEADER_RULES, Capabilities.Egress.HEADER_RULE_SCOPES);

    private final LocalSettings settings;
    private final Capabilities capabilities;
    /** The compiled seccomp program, or null on an architecture without a table (then nothing runs). */
    private final byte[] seccomp;
    private final java.util.Optional<Cgroups> cgroups;
    /** True when each sandbox gets its own bounded file system (root, and a mount works here). */
    private final boolean boundDisk;
    private final Set<LocalHandle> live = ConcurrentHashMap.newKeySet();
    /** How long {@link #close()} waits for creates in flight before it tears down what is registered. */
    static final Duration CREATE_DRAIN = Duration.ofSeconds(30);
    // the closed flag and the creates in flight, under one lock: a lock, not a monitor (close() waits under it)
    private final ReentrantLock gate = new ReentrantLock();
    private final java.util.concurrent.locks.Condition createsDone = gate.newCondition();
    private boolean closed;
    private int creating;
    // a lock, not a monitor: the probe starts and waits for processes (no pinned virtual thread on Java 21)
    private final ReentrantLock probeLock = new ReentrantLock();
    private volatile boolean probed;

    public LocalDriver(LocalSettings settings) {
        this.settings = settings;
        this.seccomp = SeccompFilter.Arch.of(System.getProperty("os.arch", "")).map(SeccompFilter::compile).orElse(null);
        this.cgroups = settings.cgroups() ? Cgroups.detect() : java.util.Optional.empty();
        this.boundDisk = settings.boundDisk() && DiskMount.works(settings);
        List<Capabilities.Limit> limits = new ArrayList<>(List.of(Capabilities.Limit.LIFETIME));
        if (boundDisk) {
            limits.add(Capabilities.Limit.DISK);
        }
        if (cgroups.isPresent()) {
            limits.add(Capabilities.Limit.MEMORY);
            if (cgroups.get().cpu()) {
                limits.add(Capabilities.Limit.VCPUS);
            }
        }
        Capabilities.Builder caps = Capabilities.builder(PROVIDER)
                .egress(Capabilities.Egress.DENY_ALL, Capabilities.Egress.ALLOW_ALL, Capabilities.Egress.LIVE_UPDATE);
        if (proxies(settings)) {
            caps.egress(PROXIED_EGRESS.toArray(new Capabilities.Egress[0]));
            limits.add(Capabilities.Limit.NETWORK); // counted by the sandbox's proxies; allow-all is refused with it
        }
        caps
                .limits(limits.toArray(new Capabilities.Limit[0]))
                .features(Capabilities.Feature.OUTPUT_ON_TIMEOUT, Capabilities.Feature.SEPARATE_STDERR, Capabilities.Feature.SESSIONS,
                        Capabilities.Feature.SETUP_COMMANDS, Capabilities.Feature.INPUT_FILES, Capabilities.Feature.ENV,
                        Capabilities.Feature.READ_FILES, Capabilities.Feature.LIST_FILES, Capabilities.Feature.STREAMING,
                        Capabilities.Feature.ATTACH);
        for (Language l : Language.values()) {
            // declared only when the interpreter is installed
            if (Files.isExecutable(BwrapCommand.interpreterPath(settings, l))) {
                caps.languages(l);
            }
        }
        this.capabilities = caps.build();
    }

    public LocalSettings settings() {
        return settings;
    }

    @Override
    public String provider() {
        return PROVIDER;
    }

    @Override
    public Capabilities capabilities() {
        return capabilities;
    }

    /**
     * How each limit is enforced on this machine, one line per limit, for {@code LocalSandboxRunner.enforcement()}.
     * Only what is listed here as enforced by the kernel for the whole sandbox is declared in {@link #capabilities()}.
     */
    public List<String> enforcement() {
        List<String> l = new ArrayList<>();
        l.add("system calls: seccomp filter denying " + SeccompFilter.DENIED.size() + " calls, clone with namespace flags"
                + " and other ABIs (EPERM), clone3 (ENOSYS), sockets of a family other than "
                + String.join(", ", SeccompFilter.ALLOWED_SOCKET_FAMILIES.keySet()) + " (EAFNOSUPPORT)" + (seccomp == null ? " [NO TABLE FOR "
                + System.getProperty("os.arch") + ": the runner refuses to start]" : ""));
        l.add(boundDisk
                ? "disk: per sandbox, a tmpfs of " + settings.diskBytes() / LocalSettings.MIB + " MiB by default (Limits.diskMib),"
                        + " one inode per 16 KiB, holding /sandbox, /tmp and /dev/shm"
                : "disk: not bounded per sandbox (needs root); RLIMIT_FSIZE " + settings.fileSizeBytes() / LocalSettings.MIB
                        + " MiB per file, /tmp and /dev/shm tmpfs of " + settings.tmpSizeBytes() / LocalSettings.MIB
                        + " MiB each, /sandbox on the host's disk");
        if (cgroups.isPresent()) {
            l.add("memory: cgroup v1 memory limit per sandbox, " + settings.memoryBytes() / LocalSettings.MIB
                    + " MiB by default (Limits.memoryMib), files in its file system included; RLIMIT_AS "
                    + settings.addressSpaceBytes() / LocalSettings.MIB + " MiB per process");
            l.add("processes: RLIMIT_NPROC " + settings.maxProcesses() + " (counted per sandbox user namespace)");
            l.add(cgroups.get().cpu() ? "vCPUs: cgroup v1 CPU quota when Limits.vcpus is set" : "vCPUs: not enforced");
        } else {
            l.add("memory: not bounded per sandbox (no usable cgroup v1 hierarchy as root); RLIMIT_AS "
                    + settings.addressSpaceBytes() / LocalSettings.MIB + " MiB per process");
            l.add("processes: RLIMIT_NPROC " + settings.maxProcesses() + " (counted per sandbox user namespace)");
            l.add("vCPUs: not enforced; RLIMIT_CPU per process as a backstop of the budget");
        }
        return l;
    }

    /** The sandbox's memory cgroup directory, when there is one (for tests). */
    public java.util.Optional<Path> memoryCgroup(LocalHandle h) {
        return h.cgroup() == null ? java.util.Optional.empty() : h.cgroup().memory();
    }

    /** Sandboxes of this driver not yet removed: the open ones and the creates in flight. */
    public int openSandboxes() {
        gate.lock();
        try {
            return live.size() + creating;
        } finally {
            gate.unlock();
        }
    }

    /** Refuses every create from now on ({@link #close()} does it too); creates in flight go on. */
    public void refuseCreates() {
        gate.lock();
        try {
            closed = true;
        } finally {
            gate.unlock();
        }
    }

    /**
     * Refuses new creates, waits up to {@link #CREATE_DRAIN} for the creates in flight (each one that
     * finishes now removes its sandbox itself and fails), then tears down every sandbox still registered.
     * Idempotent. A create still in flight after the wait is logged; it removes its own sandbox when it
     * finishes, and {@link #openSandboxes()} counts it until then.
     */
    @Override
    public void close() {
        boolean interrupted = false;
        gate.lock();
        try {
            closed = true;
            long deadline = System.nanoTime() + CREATE_DRAIN.toNanos();
            while (creating > 0) {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    log.warn("local runner closed with {} create(s) still in flight after {}; each removes its sandbox when"
                            + " it finishes", creating, CREATE_DRAIN);
                    break;
                }
                try {
                    createsDone.awaitNanos(left);
                } catch (InterruptedException e) {
                    interrupted = true; // the bound stays the bound; the flag is restored below
                }
            }
        } finally {
            gate.unlock();
        }
        for (LocalHandle h : List.copyOf(live)) {
            try {
                destroy(h, "the runner was closed");
            } catch (RuntimeException e) {
                log.warn("local sandbox {} could not be removed at the runner's close: {}", h.id(), e.getMessage());
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    /** The open sandbox with this id, if it is one of this driver's. */
    public java.util.Optional<LocalHandle> handle(String id) {
        return live.stream().filter(h -> h.id().equals(id)).findFirst();
    }

    /**
     * Called when the lifecycle is done with a handle: after its teardown (nothing to do), on a
     * {@code detach()} and on a refused attach. A sandbox still open then is handed to the JVM-wide
     * registry of detached sandboxes: no runner counts it or tears it down at its close; its lifetime
     * timer and the JVM's shutdown hook still do, and {@link #attach} hands it to the runner that takes it.
     */
    @Override
    public void release(LocalHandle h) {
        synchronized (h) {
            // under the handle's lock: a destroy that began first has it DESTROYING, one that begins later
            // finds it in the registry and removes it from there
            if (h.state() != LocalHandle.State.OPEN) {
                return;
            }
            LocalDriver owner = h.owner();
            if (owner != null) {
                owner.live.remove(h);
            }
            h.owner(null);
            DETACHED.put(h.id(), h);
        }
        log.debug("local sandbox {} detached (lifetime {})", h.id(), h.lifetime());
    }

    /**
     * Takes a detached sandbox of this JVM (from any local runner) for this runner, with its labels and
     * what the runner knows for sure about it: its egress now (after any lock-down), the disk, memory and
     * vCPU bounds its create applied against those a create for {@code expected} would apply here, its
     * environment (names only in messages) and the user its processes run as. The lifecycle refuses on
     * any difference and the sandbox goes back to the registry ({@link #release}).
     *
     * @throws SandboxNotFoundException when no sandbox of this JVM has that id (closed, expired, never
     *         created here: local sandboxes cannot be attached from another JVM)
     * @throws AttachRefusedException when the sandbox is open in a runner that has not detached it
     */
    @Override
    public Attachable<LocalHandle> attach(String sandboxId, SandboxSpec expected) {
        LocalHandle h;
        gate.lock();
        try {
            if (closed) {
                throw SandboxException.builder("the local runner is closed: it attaches no more sandboxes ("
                        + sandboxId + " stays detached)").provider(PROVIDER).codeMayHaveRun(false).build();
            }
            h = DETACHED.get(sandboxId);
            if (h != null) {
                synchronized (h) {
                    if (h.state() != LocalHandle.State.OPEN || !DETACHED.remove(sandboxId, h)) {
                        h = null; // being destroyed (its lifetime ended), or another runner took it meanwhile
                    } else {
                        h.owner(this);
                        live.add(h);
                    }
                }
            }
        } finally {
            gate.unlock();
        }
        if (h == null) {
            boolean open = ALL.keySet().stream().anyMatch(o -> o.id().equals(sandboxId) && o.state() == LocalHandle.State.OPEN
                    && !DETACHED.containsKey(sandboxId));
            if (open) {
                throw new AttachRefusedException(PROVIDER, sandboxId, List.of("state: the sandbox is open in a local runner"
                        + " that has not detached it"));
            }
            String shown = sandboxId.length() > 80 ? sandboxId.substring(0, 80) + "..." : sandboxId;
            throw new SandboxNotFoundException(SandboxException.builder("local: no detached sandbox " + shown + " in this JVM"
                    + " (closed, expired, taken by another runner, or never made here: a local sandbox can be attached only in"
                    + " the JVM that created it)").provider(PROVIDER));
        }
        Attachable.Builder<LocalHandle> b = Attachable.builder(h).labels(h.applied().labels).state("open", true);
        compare(h, expected, b);
        return b.build();
    }

    /** What this runner knows of the sandbox against what a create for {@code expected} would make here. */
    private void compare(LocalHandle h, SandboxSpec expected, Attachable.Builder<LocalHandle> b) {
        EgressPolicy now = h.egress();
        EgressPolicy want = expected.egress();
        b.compare("egress: default", want.defaultAction(), now.defaultAction());
        b.compare("egress: allowed domains", want.allowedDomains(), now.allowedDomains());
        b.compare("egress: allowed CIDRs", want.allowedCidrs(), now.allowedCidrs());
        b.compare("egress: denied CIDRs", want.deniedCidrs(), now.deniedCidrs());
        b.compare("egress: header rules", want.headerRules(), now.headerRules());
        LocalHandle.Applied a = h.applied();
        dev.sandbox4j.policy.Limits limits = expected.limits();
        if (h.diskBounded()) {
            b.compare("disk bytes", boundDisk ? diskBytes(limits) : "not bounded", a.diskBytes);
        } else if (boundDisk) {
            b.compare("disk bytes", diskBytes(limits), "not bounded");
        }
        if (h.cgroup() != null) {
            b.compare("memory bytes", cgroups.isPresent() ? memoryBytes(limits) : "not bounded", a.memoryBytes);
        } else if (cgroups.isPresent()) {
            b.compare("memory bytes", memoryBytes(limits), "not bounded");
        }
        b.compare("vCPUs", limits.vcpus(), a.vcpus);
        b.compare("network bytes", networkBytes(limits), a.networkBytes);
        java.util.TreeSet<String> env = new java.util.TreeSet<>();
        expected.env().forEach((k, v) -> {
            if (!v.equals(h.env().get(k))) {
                env.add(k);
            }
        });
        h.env().keySet().stream().filter(k -> !expected.env().containsKey(k)).forEach(env::add);
        if (!env.isEmpty()) {
            b.difference("env: the sandbox's environment differs from the expected spec's in " + env + " (values not shown)");
        }
        LocalSettings theirs = h.settings();
        b.compare("host user of its processes", settings.dropPrivileges() ? settings.dropUid() + ":" + settings.dropGid() : "the JVM's",
                theirs.dropPrivileges() ? theirs.dropUid() + ":" + theirs.dropGid() : "the JVM's");
    }

    /**
     * Creates one sandbox. It is counted ({@link #openSandboxes()}) from before its first side effect (the
     * probe's directory, then its own directory) until it is registered or has removed everything it made,
     * so a {@link #close()} running meanwhile waits for it. A failure part way undoes what was made, in the
     * teardown's order. A create that finishes after {@link #close()} began tears its sandbox down itself
     * and throws: nothing of it is left.
     *
     * @throws SandboxException when the runner is closed, or was closed while this sandbox was being
     *         made (not retriable; nothing was created, no code ran)
     */
    @Override
    public LocalHandle create(CreateRequest request) throws InterruptedException {
        beginCreate(request.runId());
        LocalHandle h;
        try {
            h = make(request);
        } catch (Throwable t) {
            // make() removed what it had made before it threw
            endCreate();
            throw t;
        }
        gate.lock();
        try {
            if (!closed) {
                live.add(h);
                // the timer starts once it is registered: an expiry then finds it where a teardown removes it from
                long lifetimeMs = Math.max(1, request.lifetime().toMillis());
                LocalHandle expiring = h;
                h.expiry(EXPIRY.schedule(() -> expire(expiring), lifetimeMs, TimeUnit.MILLISECONDS));
                creating--;
                createsDone.signalAll();
                log.debug("local sandbox {} created in {} (lifetime {})", h.id(), h.root(), request.lifetime());
                return h;
            }
        } finally {
            gate.unlock();
        }
        // close() began while this one was made and will not see it: remove it here, still counted
        String failed = null;
        try {
            destroy(h, "the runner was closed while it was being created");
        } catch (RuntimeException e) {
            failed = e.getMessage();
        } finally {
            endCreate();
        }
        throw SandboxException.builder("the local runner was closed while sandbox " + h.id() + " was being created; "
                + (failed == null ? "it was removed again and nothing of it is left"
                        : "it could not all be removed (" + failed + ")"))
                .provider(PROVIDER).codeMayHaveRun(false).build();
    }

    /** Counts a create in flight, or refuses it when the runner is closed. */
    private void beginCreate(String runId) {
        gate.lock();
        try {
            if (closed) {
                throw SandboxException.builder("the local runner is closed: it creates no more sandboxes (run id " + runId
                        + " was not created)").provider(PROVIDER).codeMayHaveRun(false).build();
            }
            creating++;
        } finally {
            gate.unlock();
        }
    }

    private void endCreate() {
        gate.lock();
        try {
            creating--;
            createsDone.signalAll();
        } finally {
            gate.unlock();
        }
    }

    private long diskBytes(dev.sandbox4j.policy.Limits limits) {
        return limits.diskMib().isPresent() ? limits.diskMib().getAsInt() * LocalSettings.MIB : settings.diskBytes();
    }

    private long memoryBytes(dev.sandbox4j.policy.Limits limits) {
        return limits.memoryMib().isPresent() ? limits.memoryMib().getAsInt() * LocalSettings.MIB : settings.memoryBytes();
    }

    /** Makes the sandbox; on any failure removes what it made before it throws. Not yet registered. */
    private LocalHandle make(CreateRequest request) throws InterruptedException {
        try {
            verify();
        } catch (InterruptedException e) {
            // The probe runs in this JVM and removes what it made before it returns, and nothing of this
            // sandbox exists yet: the create's outcome is known (nothing), so it is not left to the
            // lifecycle's background lookup of ambiguous creates (which would wait out its window).
            Thread.currentThread().interrupt();
            throw new SandboxInterruptedException(SandboxException.builder(
                    "interrupted while checking that bubblewrap works, before the sandbox was created; nothing was created")
                    .provider(PROVIDER).codeMayHaveRun(false));
        }
        shareNet(request.initialEgress());
        checkEnv(request.spec().env());
        dev.sandbox4j.policy.Limits limits = request.spec().limits();
        if (limits.networkMib().isPresent()) {
            networkCounted(request.spec().egress());
            networkCounted(request.initialEgress());
            if (!request.spec().setupCommands().isEmpty()) {
                networkCounted(request.spec().setupEgress());
            }
        }
        Path root;
        try {
            root = SandboxDirs.create(settings, request.runId(), seccomp);
        } catch (IOException e) {
            throw config("could not create the sandbox directory under " + settings.workRoot() + ": " + e.getMessage(), e);
        }
        Cgroups.Group group = null;
        LocalHandle h = null;
        boolean made = false;
        String step = "set up the limits of";
        try {
            long disk = 0;
            if (boundDisk) {
                disk = diskBytes(limits);
                DiskMount.mount(settings, root.resolve(SandboxDirs.FS), disk);
            }
            SandboxDirs.prepareFs(settings, root);
            long memory = 0;
            if (cgroups.isPresent()) {
                memory = memoryBytes(limits);
                group = cgroups.get().create(root.getFileName().toString(), memory, limits.vcpus());
            }
            LocalHandle.Applied applied = new LocalHandle.Applied(settings, request.labels(), disk, memory,
                    group == null ? java.util.OptionalInt.empty() : limits.vcpus(), networkBytes(limits));
            h = new LocalHandle("local-" + request.runId(), request.runId(), root, request.initialEgress(),
                    request.spec().env(), request.lifetime(), boundDisk, group, applied, this);
            if (proxied(request.initialEgress())) {
                step = "start the egress proxy of";
                h.swapChannel(EgressChannel.open(settings, root, h.nextSocketName(), request.initialEgress(), h.networkLeft()));
            }
            step = "register";
            ALL.put(h, settings);
            made = true;
            return h;
        } catch (IOException | RuntimeException e) {
            throw config("could not " + step + " local sandbox in " + root + ": " + e.getMessage(), e);
        } finally {
            if (!made) {
                // any failure, an Error included: nothing of a sandbox that was not made is left
                if (h != null) {
                    h.beginDestroy("its create failed");
                    closeChannel(h);
                    ALL.remove(h);
                    h.gone();
                }
                release(root, group);
            }
        }
    }

    @Override
    public void writeFiles(LocalHandle h, List<InputFile> files) {
        ensureOpen(h);
        try {
            SandboxDirs.writeFiles(settings, h.work(), h.stage(), files);
        } catch (IOException e) {
            throw SandboxException.builder("could not write input files into local sandbox " + h.id() + ": " + e.getMessage())
                    .provider(PROVIDER).cause(e).build();
        }
    }

    @Override
    public SandboxFile readFile(LocalHandle h, String path, long maxBytes) {
        ensureOpen(h);
        try {
            return SandboxFiles.read(h.work(), path, maxBytes);
        } catch (IOException e) {
            throw fileError(h, e);
        }
    }

    @Override
    public List<FileEntry> listFiles(LocalHandle h, String directory) {
        ensureOpen(h);
        try {
            return SandboxFiles.list(h.work(), directory);
        } catch (IOException e) {
            throw fileError(h, e);
        }
    }

    private static SandboxException fileError(LocalHandle h, IOException e) {
        String m = e instanceof SandboxFiles.Refused ? e.getMessage() : "could not read: " + e.getMessage();
        return SandboxException.builder("local sandbox " + h.id() + ": " + m).provider(PROVIDER).cause(e).build();
    }

    @Override
    public void updateEgress(LocalHandle h, EgressPolicy egress) {
        shareNet(egress);
        ensureOpen(h);
        if (h.networkLimited()) {
            networkCounted(egress);
            updateCountedEgress(h, egress);
            return;
        }
        EgressChannel next = null;
        if (proxied(egress)) {
            try {
                next = EgressChannel.open(settings, h.root(), h.nextSocketName(), egress);
            } catch (IOException e) {
                throw SandboxException.builder("could not start the egress proxy of local sandbox " + h.id() + ": "
                        + e.getMessage()).provider(PROVIDER).cause(e).build();
            }
        }
        EgressChannel old;
        synchronized (h) {
            if (h.state() != LocalHandle.State.OPEN) {
                if (next != null) {
                    next.close();
                }
                ensureOpen(h);
            }
            old = h.swapChannel(next);
            h.egress(egress);
        }
        if (old != null) {
            old.close();
        }
    }

    /**
     * The egress change of a sandbox with a network allowance: the proxy in place is closed first and
     * what it relayed counted, then the next one gets what is left (none when nothing is: no proxy, so no
     * route out), so no two proxies of the sandbox relay at once and the allowance holds across them.
     */
    private void updateCountedEgress(LocalHandle h, EgressPolicy egress) {
        EgressChannel old;
        synchronized (h) {
            ensureOpen(h);
            old = h.swapChannel(null);
            h.egress(egress);
        }
        if (old != null) {
            h.retire(old);
        }
        long left = h.networkLeft();
        if (!proxied(egress) || left <= 0) {
            return;
        }
        EgressChannel next;
        try {
            next = EgressChannel.open(settings, h.root(), h.nextSocketName(), egress, left);
        } catch (IOException e) {
            throw SandboxException.builder("could not start the egress proxy of local sandbox " + h.id() + ": "
                    + e.getMessage()).provider(PROVIDER).cause(e).build();
        }
        synchronized (h) {
            if (h.state() != LocalHandle.State.OPEN) {
                next.close();
                ensureOpen(h);
            }
            h.swapChannel(next);
        }
    }

    /** Refuses an egress a network allowance cannot be counted under: allow-all shares the host's network, past the proxy. */
    private static void networkCounted(EgressPolicy egress) {
        dev.sandbox4j.egress.NetworkAllowance.requireCountable(egress, PROVIDER, "shares the host's network");
    }

    /** The network allowance in bytes, or {@link LocalHandle.Applied#NO_NETWORK_LIMIT}. */
    private static long networkBytes(dev.sandbox4j.policy.Limits limits) {
        return dev.sandbox4j.egress.NetworkAllowance.bytes(limits);
    }

    /** Closes the sandbox's host proxy, if any, and with it every connection it holds. */
    private static void closeChannel(LocalHandle h) {
        EgressChannel c = h.swapChannel(null);
        if (c != null) {
            try {
                c.close();
            } catch (RuntimeException e) {
                log.warn("local sandbox {}: could not close its egress proxy: {}", h.id(), e.toString());
            }
        }
    }

    /**
     * Kills the process tree of the exec in progress, if any, and leaves the sandbox open: that exec
     * returns as its process died. False when nothing was running.
     */
    public boolean killRunning(LocalHandle h) {
        Process p = h.running();
        if (p == null || !p.isAlive()) {
            return false;
        }
        ProcessTree.kill(p);
        return true;
    }

    @Override
    public ExecOutcome exec(LocalHandle h, Execution e, OutputSink sink) throws InterruptedException {
        Language language = e.language();
        if (!capabilities.supports(language)) {
            throw config(language.id() + " is not available: " + BwrapCommand.interpreterPath(settings, language)
                    + " is not installed (set its path on LocalSandboxRunner.builder())", null);
        }
        long start = System.nanoTime();
        String code = e.code();
        Path codeFile = null;
        List<String> interpreter;
        if (BwrapCommand.needsFile(settings, code)) {
            String name = BwrapCommand.codeFileName(language, RunIds.next().substring(0, 10));
            codeFile = h.work().resolve(name);
            try {
                SandboxDirs.writeFiles(settings, h.work(), h.stage(), List.of(InputFile.of(name, code.getBytes(StandardCharsets.UTF_8))));
            } catch (IOException ex) {
                ensureOpen(h);
                throw SandboxException.builder("could not write the code file into local sandbox " + h.id() + ": "
                        + ex.getMessage()).provider(PROVIDER).cause(ex).build();
            }
            interpreter = BwrapCommand.fileCode(settings, language, BwrapCommand.SANDBOX_DIR + "/" + name);
        } else {
            interpreter = BwrapCommand.inlineCode(settings, language, code);
        }
        try {
            return run(h, e, sink, interpreter, start);
        } finally {
            if (codeFile != null) {
                try {
                    Files.deleteIfExists(codeFile);
                } catch (IOException ignored) {
                    // the directory goes with the sandbox
                }
            }
        }
    }

    private ExecOutcome run(LocalHandle h, Execution e, OutputSink sink, List<String> interpreter, long start)
            throws InterruptedException {
        List<String> argv = new ArrayList<>(BwrapCommand.launcher(settings, h.root().resolve(SandboxDirs.SECCOMP),
                h.cgroup() == null ? List.of() : h.cgroup().tasksFiles()));
        argv.add("--");
        EgressChannel channel = h.channel();
        argv.addAll(BwrapCommand.command(settings, cpuSeconds(e.budget()), interpreter,
                channel == null ? null : channel.sandboxSocket()));
        byte[] options = BwrapCommand.encode(BwrapCommand.options(settings, h.root(), channel == null && shareNet(h.egress()),
                h.env(), h.diskBounded(), channel == null ? null : channel.hostDir(),
                channel != null && channel.hasCa()));

        Process p;
        synchronized (h) {
            // started under the handle's lock so a concurrent destroy either sees it or refuses it
            ensureOpen(h);
            try {
                p = start(argv);
            } catch (IOException ex) {
                throw SandboxException.builder("could not start bubblewrap (" + settings.bwrap() + "): " + ex.getMessage())
                        .provider(PROVIDER).cause(ex).build();
            }
            h.attach(p);
        }
        AtomicBoolean capped = new AtomicBoolean();
        Future<?> out = null;
        Future<?> err = null;
        try {
            try (OutputStream stdin = p.getOutputStream()) {
                stdin.write(options);
            } catch (IOException ex) {
                // bwrap exited before reading its options; its exit code and stderr say why
                log.debug("local sandbox {}: could not pass options to bwrap: {}", h.id(), ex.getMessage());
            }
            out = IO.submit(new Drainer(p.getInputStream(), sink::stdout, capped, p));
            err = IO.submit(new Drainer(p.getErrorStream(), sink::stderr, capped, p));
            long left = e.budget().toNanos() - (System.nanoTime() - start);
            boolean exited = p.waitFor(Math.max(0, left), TimeUnit.NANOSECONDS);
            if (!exited) {
                ProcessTree.kill(p);
            }
            awaitDrainer(h, out);
            awaitDrainer(h, err);
            int exit = p.exitValue();
            if (capped.get()) {
                return ExecOutcome.outputLimit();
            }
            if (!exited) {
                return ExecOutcome.timedOut();
            }
            if (h.state() != LocalHandle.State.OPEN) {
                return ExecOutcome.killed(exit);
            }
            return ExecOutcome.exited(exit);
        } catch (InterruptedException ie) {
            ProcessTree.kill(p);
            throw ie;
        } finally {
            if (p.isAlive()) {
                ProcessTree.kill(p);
            }
            if (h.cgroup() != null) {
                // a second net where there is one: the exec's processes are all in the sandbox's cgroup
                h.cgroup().killAll();
            }
            h.detach(p);
            closeQuietly(p.getInputStream());
            closeQuietly(p.getErrorStream());
        }
    }

    static Process start(List<String> argv) throws IOException {
        ProcessBuilder pb = new ProcessBuilder(argv).directory(new File("/"));
        // an empty environment for bwrap itself: its PID 1 would otherwise expose the JVM's env in /proc/1/environ
        pb.environment().clear();
        return pb.start();
    }

    private static void awaitDrainer(LocalHandle h, Future<?> f) throws InterruptedException {
        try {
            f.get(DRAIN_WAIT_SECONDS, TimeUnit.SECONDS);
        } catch (ExecutionException ex) {
            log.warn("local sandbox {}: output reader failed: {}", h.id(), ex.getCause().toString());
        } catch (TimeoutException ex) {
            // cannot happen once the process tree is gone; never hang the caller on it
            log.warn("local sandbox {}: output reader did not finish", h.id());
        }
    }

    /** Reads one stream into the sink; kills the tree when the sink reports the hard cap. */
    private static final class Drainer implements Runnable {
        interface Target {
            boolean accept(byte[] b, int off, int len);
        }

        private final InputStream in;
        private final Target target;
        private final AtomicBoolean capped;
        private final Process process;

        Drainer(InputStream in, Target target, AtomicBoolean capped, Process process) {
            this.in = in;
            this.target = target;
            this.capped = capped;
            this.process = process;
        }

        @Override
        public void run() {
            // 4 KiB, growing (x4, to 64 KiB, a pipe's capacity) while reads fill it: a print(1) costs 4 KiB
            // per stream, not 64
            byte[] buf = new byte[4 * 1024];
            try {
                int n;
                while ((n = in.read(buf)) != -1) {
                    if (!target.accept(buf, 0, n)) {
                        capped.set(true);
                        ProcessTree.kill(process);
                        return;
                    }
                    if (n == buf.length && buf.length < 64 * 1024) {
                        buf = new byte[buf.length * 4];
                    }
                }
            } catch (IOException e) {
                // the stream was closed: the process is gone
            }
        }
    }

    @Override
    public boolean destroy(LocalHandle h) {
        return destroy(h, "closed");
    }

    /**
     * Tears the sandbox down once: a second caller (close() racing the lifetime timer, the runner's close
     * racing the opener's) waits for the first one's teardown and returns false, or tries again after a
     * failed one.
     */
    private boolean destroy(LocalHandle h, String reason) {
        h.teardownLock().lock();
        try {
            Process p;
            synchronized (h) {
                if (h.state() == LocalHandle.State.GONE) {
                    return false;
                }
                p = h.beginDestroy(reason);
            }
            if (p != null) {
                ProcessTree.kill(p);
            }
            closeChannel(h);
            try {
                teardown(h.settings(), h.root(), h.cgroup(), h.diskBounded());
            } catch (IOException e) {
                throw SandboxException.builder("could not delete local sandbox directory " + h.root() + ": " + e.getMessage())
                        .provider(PROVIDER).retriable(true).cause(e).build();
            }
            h.gone();
            // whichever runner holds it now (it may have been attached by another), or the detached registry
            LocalDriver owner = h.owner();
            if (owner != null) {
                owner.live.remove(h);
            }
            live.remove(h);
            DETACHED.remove(h.id(), h);
            ALL.remove(h);
            return true;
        } finally {
            h.teardownLock().unlock();
        }
    }

    /**
     * Removes what a sandbox holds, in the order that keeps it contained: every process still in its
     * cgroups is killed first, then its file system is unmounted and its directory deleted, then the
     * cgroups are removed.
     */
    private static void teardown(LocalSettings s, Path root, Cgroups.Group group, boolean mounted) throws IOException {
        if (group != null) {
            group.killAll();
        }
        if (mounted) {
            DiskMount.unmount(s, root.resolve(SandboxDirs.FS));
        }
        SandboxDirs.delete(root);
        if (group != null) {
            group.remove();
        }
    }

    /** Removes a half-made sandbox (whatever of it exists: a missing mount or cgroup is skipped). */
    private void release(Path root, Cgroups.Group group) {
        try {
            teardown(settings, root, group, true);
        } catch (IOException | RuntimeException e) {
            log.warn("could not remove the half-made local sandbox {}: {}", root, e.getMessage());
        }
    }

    /**
     * Removes sandbox directories under the work root whose owning JVM is gone (killed with SIGKILL,
     * so its shutdown hook never ran): their processes are killed, file systems unmounted, directories
     * deleted with the same handle-relative delete, cgroups removed. A directory without an owner file
     * (an older version's, or one being created right now) is left alone. Once per JVM and work root.
     */
    void sweepStale() {
        if (!SWEPT.add(settings.workRoot())) {
            return;
        }
        int uid;
        try {
            uid = (Integer) Files.getAttribute(Path.of("/proc/self"), "unix:uid");
        } catch (IOException | RuntimeException e) {
            return;
        }
        List<Path> stale = new ArrayList<>();
        try (java.nio.file.DirectoryStream<Path> ds = Files.newDirectoryStream(settings.workRoot(), "sandbox4j-*")) {
            for (Path d : ds) {
                if (!Files.isDirectory(d, java.nio.file.LinkOption.NOFOLLOW_LINKS)
                        || !Integer.valueOf(uid).equals(Files.getAttribute(d, "unix:uid", java.nio.file.LinkOption.NOFOLLOW_LINKS))) {
                    continue;
                }
                Path owner = d.resolve(SandboxDirs.OWNER);
                if (Files.isRegularFile(owner, java.nio.file.LinkOption.NOFOLLOW_LINKS)
                        && !Owner.alive(Files.readString(owner, StandardCharsets.UTF_8))) {
                    stale.add(d);
                }
            }
        } catch (IOException | RuntimeException e) {
            log.debug("could not look for stale sandboxes under {}: {}", settings.workRoot(), e.toString());
            return;
        }
        for (Path d : stale) {
            try {
                teardown(settings, d, cgroups.map(c -> c.existing(d.getFileName().toString())).orElse(null), true);
                log.info("removed stale local sandbox {} (its JVM is gone)", d);
            } catch (IOException | RuntimeException e) {
                log.warn("could not remove stale local sandbox {}: {}", d, e.getMessage());
            }
        }
    }

    private void expire(LocalHandle h) {
        try {
            if (destroy(h, "expired after its lifetime of " + h.lifetime())) {
                log.info("local sandbox {} destroyed: its lifetime of {} elapsed before close()", h.id(), h.lifetime());
            }
        } catch (RuntimeException e) {
            log.warn("local sandbox {} expired but could not be destroyed: {}", h.id(), e.getMessage());
        }
    }

    private static void ensureOpen(LocalHandle h) {
        if (h.state() != LocalHandle.State.OPEN) {
            String reason = h.goneReason();
            throw new SandboxNotFoundException(SandboxException.builder("local sandbox " + h.id() + " is gone"
                    + (reason == null ? "" : " (" + reason + ")")).provider(PROVIDER));
        }
    }

    /**
     * Deny-all is an empty network namespace; allow-all shares the host's; a list is an empty network
     * namespace whose only way out is the host proxy (when one is configured). Anything else is refused.
     */
    boolean shareNet(EgressPolicy egress) {
        if (egress.isDenyAll()) {
            return false;
        }
        if (egress.isAllowAll()) {
            return true;
        }
        if (proxies(settings)) {
            List<String> v = capabilities.violations(egress, dev.sandbox4j.policy.Limits.defaults());
            if (v.isEmpty()) {
                return false;
            }
            throw new UnsupportedPolicyException(PROVIDER, v);
        }
        throw new UnsupportedPolicyException(PROVIDER, List.of(egress
                + " (the local runner enforces only deny-all and allow-all here: no egress proxy is configured,"
                + " or " + settings.python() + " is missing)"));
    }

    /** True when the egress is neither deny-all nor allow-all: it goes through the host proxy. */
    static boolean proxied(EgressPolicy egress) {
        return !egress.isDenyAll() && !egress.isAllowAll();
    }

    private static boolean proxies(LocalSettings s) {
        return s.egressGateways() != null && Files.isExecutable(s.python());
    }

    private static void checkEnv(Map<String, String> env) {
        long total = 0;
        for (Map.Entry<String, String> en : env.entrySet()) {
            String v = en.getValue();
            if (v.indexOf('\0') >= 0) {
                throw new IllegalArgumentException("environment variable " + en.getKey() + " contains a NUL character");
            }
            int bytes = v.getBytes(StandardCharsets.UTF_8).length;
            if (bytes > MAX_ENV_VALUE_BYTES) {
                throw new IllegalArgumentException("environment variable " + en.getKey() + " is " + bytes
                        + " bytes; at most " + MAX_ENV_VALUE_BYTES + " fit a process environment (use an input file)");
            }
            total += bytes + en.getKey().length() + 2;
        }
        if (total > MAX_ENV_TOTAL_BYTES) {
            throw new IllegalArgumentException("the environment is " + total + " bytes; at most " + MAX_ENV_TOTAL_BYTES
                    + " fit a process environment (use input files)");
        }
    }

    /** RLIMIT_CPU as a backstop behind the wall-clock budget: generous enough for every core busy all along. */
    static long cpuSeconds(Duration budget) {
        long seconds = Math.max(1, (budget.toMillis() + 999) / 1000);
        return seconds * Runtime.getRuntime().availableProcessors() + 1;
    }

    /**
     * Checks once, with a smoke run of the real command line, that bubblewrap can make a sandbox here.
     *
     * @throws SandboxConfigurationException saying what is missing and how to install it
     */
    public void verify() throws InterruptedException {
        if (probed) {
            return;
        }
        probeLock.lock();
        try {
            if (probed) {
                return;
            }
            String os = System.getProperty("os.name", "").toLowerCase(Locale.ROOT);
            if (!os.contains("linux")) {
                throw config("the local runner needs Linux (bubblewrap and user namespaces); this is "
                        + System.getProperty("os.name") + ". Use the Docker runner instead (SandboxRunners.auto() picks it: start"
                        + " Docker Desktop, Colima or Podman and pull its image once), or a cloud provider (e2b, vercel, daytona, modal)", null);
            }
            if (!Files.isRegularFile(settings.bwrap()) || !Files.isExecutable(settings.bwrap())) {
                throw config("bubblewrap (bwrap) was not found at " + settings.bwrap() + ". The local runner never runs"
                        + " code without a sandbox: " + INSTALL_HINT + ", or set its path with LocalSandboxRunner.builder().bwrap(path)"
                        + " (SandboxRunners.auto() falls back to the Docker runner where no bubblewrap works)", null);
            }
            if (!Files.isExecutable(settings.prlimit())) {
                throw config("prlimit was not found at " + settings.prlimit() + ": install util-linux", null);
            }
            if (seccomp == null) {
                throw config("the local runner has no seccomp table for this architecture (" + System.getProperty("os.arch")
                        + "; there are tables for x86_64 and aarch64) and never runs code without its filter", null);
            }
            if (!Files.isExecutable(settings.sh())) {
                throw config("no shell at " + settings.sh() + " (it runs the fixed launch script)", null);
            }
            if (settings.dropPrivileges() && !Files.isExecutable(settings.setpriv())) {
                throw config("setpriv was not found at " + settings.setpriv() + " (needed to leave root before bwrap):"
                        + " install util-linux", null);
            }
            sweepStale();
            SmokeRun.check(settings, seccomp, IO, LocalDriver::start);
            probed = true;
        } finally {
            probeLock.unlock();
        }
    }

    static SandboxConfigurationException config(String message, Throwable cause) {
        return new SandboxConfigurationException(SandboxException.builder(message).provider(PROVIDER).cause(cause));
    }

    private static void closeQuietly(InputStream in) {
        try {
            in.close();
        } catch (IOException ignored) {
            // nothing to do
        }
    }

    private static void destroyAllAtExit() {
        for (Map.Entry<LocalHandle, LocalSettings> en : ALL.entrySet()) {
            LocalHandle h = en.getKey();
            Process p = h.beginDestroy("JVM shutdown");
            if (p != null) {
                // wait for the namespace to be empty before deleting what its processes could still change
                ProcessTree.kill(p);
            }
            closeChannel(h);
            try {
                teardown(en.getValue(), h.root(), h.cgroup(), h.diskBounded());
            } catch (IOException | RuntimeException e) {
                // best effort at exit
            }
        }
    }

    private static ThreadFactory daemon(String prefix) {
        AtomicInteger n = new AtomicInteger();
        return r -> {
            Thread t = new Thread(r, prefix + "-" + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        };
    }

    private static ScheduledExecutorService expiryScheduler() {
        ScheduledThreadPoolExecutor s = new ScheduledThreadPoolExecutor(1, daemon("sandbox4j-local-lifetime"));
        s.setRemoveOnCancelPolicy(true);
        return s;
    }
}
