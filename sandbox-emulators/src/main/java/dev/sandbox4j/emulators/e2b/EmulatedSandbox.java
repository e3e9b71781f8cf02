package dev.sandbox4j.emulators.e2b;

import dev.sandbox4j.emulators.Machine;

import java.time.Instant;
import java.util.Comparator;
import java.util.Map;
import java.util.NavigableSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentSkipListSet;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.ReentrantLock;

/** One emulated E2B sandbox: what it was created with, its clock, and its running commands. */
final class EmulatedSandbox {
    /** Opens the machine of a sandbox with the network and environment it starts with. */
    @FunctionalInterface
    interface Opener {
        Machine open(dev.sandbox4j.policy.EgressPolicy egress, Map<String, String> env);
    }

    final String id;
    final String templateId;
    final String alias;
    /** Null for a v1 create without {@code secure}: envd then checks nothing. */
    final String accessToken;
    /** Replaced whole, never changed in place ({@link E2bEmulator#alterLabel}). */
    volatile Map<String, String> metadata;
    final Map<String, String> envVars;
    final Instant startedAt;
    final int cpuCount;
    final int memoryMb;
    final int diskMb;
    private final Object lock = new Object();
    /** Held while a killed command's files are carried over, so no request sees the gap. */
    private final ReentrantLock killing = new ReentrantLock();
    private Machine workspace;
    private Egress egress;
    private Instant endAt;
    private ScheduledFuture<?> expiry;
    private boolean killed;
    /** Running commands by pid. */
    final Map<Integer, Command> processes = new ConcurrentHashMap<>();
    final AtomicInteger nextPid = new AtomicInteger(400);
    final AtomicInteger executions = new AtomicInteger();
    /** Absolute paths outside the home written through /files, longest first, for rewriting commands. */
    final NavigableSet<String> writtenOutside = new ConcurrentSkipListSet<>(
            Comparator.comparingInt(String::length).reversed().thenComparing(Comparator.naturalOrder()));

    EmulatedSandbox(String id, String templateId, String alias, String accessToken, Map<String, String> metadata,
                    Map<String, String> envVars, Egress egress, Machine workspace, Instant startedAt, Instant endAt) {
        this.id = id;
        this.templateId = templateId;
        this.alias = alias;
        this.accessToken = accessToken;
        this.metadata = Map.copyOf(metadata);
        this.envVars = Map.copyOf(envVars);
        this.egress = egress;
        this.workspace = workspace;
        this.startedAt = startedAt;
        this.endAt = endAt;
        this.cpuCount = 2;
        this.memoryMb = 512;
        this.diskMb = 1024;
    }

    Egress egress() {
        synchronized (lock) {
            return egress;
        }
    }

    /** Replaces the egress; it applies to the next command. */
    void egress(Egress egress) {
        synchronized (lock) {
            this.egress = egress;
            if (workspace != null && !workspace.isClosed()) {
                workspace.setEgress(egress.localPolicy());
            }
        }
    }

    Instant endAt() {
        synchronized (lock) {
            return endAt;
        }
    }

    /** Sets a new expiry, cancelling the previous one. */
    void expiry(Instant endAt, ScheduledFuture<?> expiry) {
        synchronized (lock) {
            if (this.expiry != null) {
                this.expiry.cancel(false);
            }
            this.endAt = endAt;
            this.expiry = expiry;
        }
    }

    /**
     * The workspace for the next command. A workspace torn down by a killed command (a local sandbox
     * tears itself down when its exec is interrupted) is replaced by a fresh one with the same network.
     */
    Machine workspace(Opener factory) {
        killing.lock();
        try {
            return currentWorkspace(factory);
        } finally {
            killing.unlock();
        }
    }

    private Machine currentWorkspace(Opener factory) {
        synchronized (lock) {
            if (killed) {
                throw new IllegalStateException("sandbox " + id + " was killed");
            }
            if (workspace == null || workspace.isClosed()) {
                workspace = factory.open(egress.localPolicy(), envVars);
            }
            return workspace;
        }
    }

    /** Starts a command on a worker thread and keeps it by pid until it ends. */
    Command startCommand(int pid, Machine w, dev.sandbox4j.api.Execution execution, java.util.concurrent.Executor executor) {
        Command[] self = new Command[1];
        Command c = new Command(pid, w, execution, () -> processes.remove(pid, self[0]));
        self[0] = c;
        processes.put(pid, c);
        c.start(executor);
        return c;
    }

    /**
     * Kills one command, as envd's SIGKILL does, and keeps the sandbox's files: a local sandbox tears
     * itself down when its exec is interrupted, so the working directory is copied first and restored
     * into the fresh workspace that replaces it. False when no such command runs.
     */
    boolean killCommand(int pid, Opener factory) throws InterruptedException {
        Command c = processes.get(pid);
        if (c == null) {
            return false;
        }
        killing.lock();
        Machine before;
        synchronized (lock) {
            before = workspace;
        }
        Snapshot snapshot = null;
        try {
            snapshot = before == null || before.isClosed() ? null : Snapshot.of(before.workDirectory());
            c.kill();
            c.awaitEnd(java.time.Duration.ofSeconds(30));
            synchronized (lock) {
                if (!killed && workspace == before && before != null && before.isClosed() && snapshot != null) {
                    Machine fresh = factory.open(egress.localPolicy(), envVars);
                    snapshot.restoreInto(fresh);
                    workspace = fresh;
                }
            }
        } finally {
            if (snapshot != null) {
                snapshot.delete();
            }
            killing.unlock();
        }
        return true;
    }

    /** Rewrites sandbox paths in a command for this workspace (see {@link Paths}). */
    String rewritePaths(String s, Machine w) {
        return Paths.rewrite(s, writtenOutside, w.workPath());
    }

    /** Marks it killed, stops its commands and tears its workspace down. False if already killed. */
    boolean kill() {
        Machine w;
        synchronized (lock) {
            if (killed) {
                return false;
            }
            killed = true;
            if (expiry != null) {
                expiry.cancel(false);
            }
            w = workspace;
            workspace = null;
        }
        processes.values().forEach(Command::kill);
        processes.clear();
        if (w != null) {
            w.close();
        }
        return true;
    }

    boolean isKilled() {
        synchronized (lock) {
            return killed;
        }
    }
}
