package dev.sandbox4j.local.internal;

import dev.sandbox4j.spi.SandboxHandle;
import dev.sandbox4j.policy.EgressPolicy;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ScheduledFuture;

/**
 * One local sandbox: a directory on the host ({@code root}) holding the work dir bound at /sandbox and
 * the synthetic /etc files. No process lives between executions; each exec is a fresh bwrap.
 */
public final class LocalHandle implements SandboxHandle {
    enum State { OPEN, DESTROYING, GONE }

    private final String id;
    private final String runId;
    private final Path root;
    private final Map<String, String> env;
    private final Duration lifetime;
    private volatile EgressPolicy egress;
    private final boolean diskBounded;
    private final Cgroups.Group cgroup;
    /** Held through a teardown, so a second one waits for the first (a lock: it is held while processes are waited for). */
    private final java.util.concurrent.locks.ReentrantLock teardownLock = new java.util.concurrent.locks.ReentrantLock();

    // guarded by this
    private State state = State.OPEN;
    private Process current;
    private ScheduledFuture<?> expiry;
    private String goneReason;
    private EgressChannel channel;
    private int channels;

    /** What was applied for the whole sandbox at its create, for an attach's comparison. */
    static final class Applied {
        final LocalSettings settings;
        final Map<String, String> labels;
        final long diskBytes;
        final long memoryBytes;
        final java.util.OptionalInt vcpus;
        /** The sandbox's network allowance in bytes (sent and received together), or {@link #NO_NETWORK_LIMIT}. */
        final long networkBytes;

        static final long NO_NETWORK_LIMIT = dev.sandbox4j.egress.NetworkAllowance.NONE;

        Applied(LocalSettings settings, Map<String, String> labels, long diskBytes, long memoryBytes, java.util.OptionalInt vcpus,
                long networkBytes) {
            this.settings = settings;
            this.labels = Map.copyOf(labels);
            this.diskBytes = diskBytes;
            this.memoryBytes = memoryBytes;
            this.vcpus = vcpus;
            this.networkBytes = networkBytes;
        }
    }

    private final Applied applied;
    /** {@link Applied#networkBytes}, less what the proxies already closed relayed for this sandbox. */
    private final dev.sandbox4j.egress.NetworkAllowance network;
    /** The driver whose sandbox this is (it counts it and its close tears it down); null while detached. */
    private volatile LocalDriver owner;

    LocalHandle(String id, String runId, Path root, EgressPolicy egress, Map<String, String> env, Duration lifetime,
            boolean diskBounded, Cgroups.Group cgroup, Applied applied, LocalDriver owner) {
        this.diskBounded = diskBounded;
        this.cgroup = cgroup;
        this.id = id;
        this.runId = runId;
        this.root = root;
        this.egress = egress;
        this.env = Map.copyOf(env);
        this.lifetime = lifetime;
        this.applied = applied;
        this.network = dev.sandbox4j.egress.NetworkAllowance.ofBytes(applied.networkBytes);
        this.owner = owner;
    }

    /** The settings it was created with (its mount and cgroup are removed with them) and what its create applied. */
    Applied applied() {
        return applied;
    }

    /** The settings of the runner that created it. */
    LocalSettings settings() {
        return applied.settings;
    }

    LocalDriver owner() {
        return owner;
    }

    void owner(LocalDriver owner) {
        this.owner = owner;
    }

    @Override
    public String id() {
        return id;
    }

    public String runId() {
        return runId;
    }

    /** The host directory of this sandbox (0700, or 0711 when the JVM is root). */
    public Path root() {
        return root;
    }

    /** The host directory bound read-write at /sandbox. */
    public Path work() {
        return root.resolve(SandboxDirs.FS).resolve(SandboxDirs.WORK);
    }

    /** Where files are made before they are renamed into {@link #work()}; not visible in the sandbox. */
    Path stage() {
        return root.resolve(SandboxDirs.FS).resolve(SandboxDirs.STAGE);
    }

    /** True when {@code root/fs} is the sandbox's own bounded file system. */
    boolean diskBounded() {
        return diskBounded;
    }

    /** The sandbox's cgroups, or null when whole-sandbox limits are not available. */
    Cgroups.Group cgroup() {
        return cgroup;
    }

    /** The host directory holding the synthetic passwd, group, hosts and nsswitch.conf. */
    public Path etc() {
        return root.resolve("etc");
    }

    public EgressPolicy egress() {
        return egress;
    }

    void egress(EgressPolicy egress) {
        this.egress = egress;
    }

    public Map<String, String> env() {
        return env;
    }

    public Duration lifetime() {
        return lifetime;
    }

    java.util.concurrent.locks.ReentrantLock teardownLock() {
        return teardownLock;
    }

    synchronized State state() {
        return state;
    }

    synchronized String goneReason() {
        return goneReason;
    }

    synchronized void expiry(ScheduledFuture<?> f) {
        this.expiry = f;
    }

    /** Registers the running process; false when the sandbox is no longer open. */
    synchronized boolean attach(Process p) {
        if (state != State.OPEN) {
            return false;
        }
        current = p;
        return true;
    }

    /** The process of the exec in progress, or null. */
    synchronized Process running() {
        return current;
    }

    synchronized void detach(Process p) {
        if (current == p) {
            current = null;
        }
    }

    /**
     * Moves an open sandbox to DESTROYING (cancelling its lifetime timer) and returns the running
     * process, or null. The caller kills the process and deletes the directory, then calls {@link #gone()}.
     */
    synchronized Process beginDestroy(String reason) {
        if (state == State.OPEN) {
            state = State.DESTROYING;
            goneReason = reason;
            if (expiry != null) {
                expiry.cancel(false);
            }
        }
        return current;
    }

    /** The host proxy the next exec goes through, or null (deny-all or allow-all). */
    synchronized EgressChannel channel() {
        return channel;
    }

    /** True when the sandbox has a network allowance of its own ({@code Limits.networkMib}). */
    boolean networkLimited() {
        return network.limited();
    }

    /**
     * What is left of the sandbox's network allowance for its next proxy: the allowance less what its
     * closed proxies relayed ({@link #retire}); asked only while no proxy is in place (at the create, and
     * after the old one is retired at an egress change). {@link Applied#NO_NETWORK_LIMIT} without one.
     */
    synchronized long networkLeft() {
        if (!networkLimited()) {
            return Applied.NO_NETWORK_LIMIT;
        }
        if (channel != null) {
            throw new IllegalStateException("the network allowance is counted only between proxies");
        }
        return network.left();
    }

    /** Closes a proxy taken out of place ({@link #swapChannel}) and counts what it relayed. */
    void retire(EgressChannel old) {
        old.close();
        network.count(old.bytesRelayed());
    }

    /** A new name for the next proxy socket (a replaced proxy's socket is not reused). */
    synchronized String nextSocketName() {
        return "proxy-" + (++channels) + ".sock";
    }

    /** Puts {@code next} (may be null) in place and returns the channel it replaces, for the caller to close. */
    synchronized EgressChannel swapChannel(EgressChannel next) {
        EgressChannel old = channel;
        channel = next;
        return old;
    }

    synchronized void gone() {
        state = State.GONE;
    }

    @Override
    public String toString() {
        return "LocalHandle[" + id + "]";
    }
}
