package dev.sandbox4j.emulators.modal.internal;

import dev.sandbox4j.api.Execution;
import dev.sandbox4j.api.OutputListener;
import dev.sandbox4j.api.RunResult;
import dev.sandbox4j.api.RunStatus;
import dev.sandbox4j.emulators.Machine;
import dev.sandbox4j.emulators.modal.internal.proto.ModalApi;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * One Modal sandbox and the local sandbox it really runs in. Execs run one after another on the
 * sandbox's own thread (the local sandbox runs one command at a time); the result future completes
 * once, when the sandbox is terminated or its {@code timeout_secs} runs out. On an instant machine
 * (instant mode) every exec ends at once with exit 0 and no output.
 */
public final class EmulatedSandbox {
    private final String id;
    private final boolean v2;
    private final String taskId;
    private final String appId;
    private final ModalApi.Sandbox definition;
    private volatile List<ModalApi.SandboxTag> tags;
    private volatile WireNetwork network;
    private volatile boolean hostNetwork;
    private final double createdAt;
    private final long deadlineNanos;
    private final Machine machine;
    private final ExecutorService worker;
    private final Map<String, Exec> execs = java.util.Collections.synchronizedMap(new java.util.LinkedHashMap<>());
    private final CompletableFuture<ModalApi.GenericResult> result = new CompletableFuture<>();
    private final AtomicBoolean ended = new AtomicBoolean();
    private volatile ScheduledFuture<?> expiry;
    private final AtomicInteger taskPolls = new AtomicInteger();

    public EmulatedSandbox(String id, boolean v2, String taskId, String appId, ModalApi.Sandbox definition,
            List<ModalApi.SandboxTag> tags, WireNetwork network, boolean hostNetwork, double createdAt,
            long deadlineNanos, Machine machine) {
        this.id = id;
        this.v2 = v2;
        this.taskId = taskId;
        this.appId = appId;
        this.definition = definition;
        this.tags = List.copyOf(tags);
        this.network = network;
        this.hostNetwork = hostNetwork;
        this.createdAt = createdAt;
        this.deadlineNanos = deadlineNanos;
        this.machine = machine;
        this.worker = Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, "modal-emulator-" + id);
            t.setDaemon(true);
            return t;
        });
    }

    void expiry(ScheduledFuture<?> f) {
        this.expiry = f;
    }

    /**
     * Starts an exec unless one with this id exists (the exec id makes the start idempotent). Returns the
     * exec that owns the id.
     */
    public Exec start(Exec exec, Execution execution, boolean mergeStderr) {
        Exec existing = execs.putIfAbsent(exec.execId(), exec);
        if (existing != null) {
            return existing;
        }
        if (machine.instant()) {
            exec.finish(new byte[0], new byte[0], Exec.Exit.code(0)); // instant mode: recorded, not run
            return exec;
        }
        try {
            worker.execute(() -> run(exec, execution, mergeStderr));
        } catch (RejectedExecutionException e) {
            exec.finish(new byte[0], new byte[0], Exec.Exit.signal(9));
        }
        return exec;
    }

    /**
     * Starts the filesystem tool's run ({@link FsTools}) unless the exec id is taken, on {@code pool}
     * beside whatever command runs (the tool is a process of its own). Returns the exec that owns the id.
     */
    Exec startTool(Exec exec, java.util.concurrent.Executor pool) {
        Exec existing = execs.putIfAbsent(exec.execId(), exec);
        if (existing != null) {
            return existing;
        }
        try {
            pool.execute(() -> {
                if (ended.get() || machine.instant()) {
                    exec.finish(new byte[0], new byte[0], ended.get() ? Exec.Exit.signal(9) : Exec.Exit.code(0));
                    return;
                }
                try {
                    FsTools.Outcome o = FsTools.run(machine, exec.argv(),
                            () -> exec.awaitStdin(Math.max(1, remaining().toMillis())));
                    exec.finish(exec.stdoutConfig() == 0 ? new byte[0] : o.stdout,
                            exec.stderrConfig() == 0 ? new byte[0] : o.stderr, Exec.Exit.code(o.code));
                } catch (InterruptedException e) {
                    exec.finish(new byte[0], new byte[0], Exec.Exit.signal(9));
                } catch (RuntimeException e) {
                    exec.finish(new byte[0], new byte[0], Exec.Exit.signal(9)); // the machine went away under it
                }
            });
        } catch (RejectedExecutionException e) {
            exec.finish(new byte[0], new byte[0], Exec.Exit.signal(9));
        }
        return exec;
    }

    private void run(Exec exec, Execution execution, boolean mergeStderr) {
        if (ended.get()) {
            exec.finish(new byte[0], new byte[0], Exec.Exit.signal(9));
            return;
        }
        // the router's stdio reads deliver output as the command writes it: the local runner's listener
        // hands each chunk over while the command runs, and merged stderr lands in stdout in arrival order
        boolean keepOut = exec.stdoutConfig() != 0;
        boolean keepErr = exec.stderrConfig() != 0;
        Execution streamed = execution.toBuilder().listener((stream, text) -> {
            boolean err = stream == OutputListener.Stream.STDERR;
            if (err ? keepErr : keepOut) {
                exec.append(err && !mergeStderr ? 1 : 0, text.getBytes(StandardCharsets.UTF_8));
            }
        }).build();
        RunResult r;
        try {
            r = machine.exec(streamed);
        } catch (RuntimeException e) {
            // The sandbox was torn down under the command (terminate, expiry): killed.
            exec.finish(new byte[0], new byte[0], Exec.Exit.signal(9));
            return;
        }
        byte[] out = keepOut ? r.stdout().getBytes(StandardCharsets.UTF_8) : new byte[0];
        byte[] err = keepErr ? r.stderr().getBytes(StandardCharsets.UTF_8) : new byte[0];
        if (mergeStderr) {
            // what the listener did not hand over (a machine without one) follows stdout, not interleaved
            byte[] merged = new byte[out.length + err.length];
            System.arraycopy(out, 0, merged, 0, out.length);
            System.arraycopy(err, 0, merged, out.length, err.length);
            out = merged;
            err = new byte[0];
        }
        exec.finish(out, err, exit(r));
    }

    /**
     * The router's exit status: {@code code}, or {@code signal} for a command a signal killed (modal.md
     * 3.9, recorded {@code signal: 9}). The local runner reports a signal death as 128 + the signal, so
     * an exit code in 129..192 is answered as that signal (an explicit {@code exit 137} reads as signal 9
     * here, where Modal would say code 137: the local runner cannot tell the two apart).
     */
    static Exec.Exit exit(RunResult r) {
        if (r.status() == RunStatus.TIMED_OUT) {
            return Exec.Exit.signal(9); // timeout_secs: "the command will be killed"
        }
        int code = r.exitCode().orElse(137);
        return code > 128 && code <= 128 + 64 ? Exec.Exit.signal(code - 128) : Exec.Exit.code(code);
    }

    /** The machine, for the filesystem tool the SDKs run ({@link FsTools}). */
    Machine machine() {
        return machine;
    }

    /**
     * Ends the sandbox with {@code status} unless it already ended: kills what runs, destroys the local
     * sandbox, runs {@code onEnd} (the ledger), and only then publishes the result, so whoever sees the
     * result sees the teardown done. Returns false when it had already ended.
     */
    public boolean end(ModalApi.GenericResult.GenericStatus status, String exception, Runnable onEnd) {
        if (!ended.compareAndSet(false, true)) {
            return false;
        }
        ModalApi.GenericResult r = ModalApi.GenericResult.newBuilder().setStatus(status).setException(exception)
                .setExitcode(status == ModalApi.GenericResult.GenericStatus.GENERIC_STATUS_TIMEOUT ? 124 : 137).build();
        ScheduledFuture<?> f = expiry;
        if (f != null) {
            f.cancel(false);
        }
        worker.shutdownNow();
        machine.close();
        for (Exec e : execs()) {
            e.finish(new byte[0], new byte[0], Exec.Exit.signal(9));
        }
        onEnd.run();
        result.complete(r);
        return true;
    }

    /** Time left before {@code timeout_secs} ends the sandbox (at least 1 s, for an exec's budget). */
    public Duration remaining() {
        long left = deadlineNanos - System.nanoTime();
        return Duration.ofNanos(Math.max(left, 1_000_000_000L));
    }

    /** SandboxGetTaskId calls so far (V1 scheduling). */
    public AtomicInteger taskPolls() {
        return taskPolls;
    }

    public Exec exec(String execId) {
        return execs.get(execId);
    }

    /** The execs in start order (a copy). */
    public List<Exec> execs() {
        synchronized (execs) {
            return List.copyOf(execs.values());
        }
    }

    public CompletableFuture<ModalApi.GenericResult> result() {
        return result;
    }

    public boolean finished() {
        return result.isDone();
    }

    public String id() {
        return id;
    }

    public boolean v2() {
        return v2;
    }

    public String taskId() {
        return taskId;
    }

    public String appId() {
        return appId;
    }

    public ModalApi.Sandbox definition() {
        return definition;
    }

    /** Sets one tag, replacing the list whole (see {@code ModalEmulator.alterLabel}). */
    public synchronized void tag(String name, String value) {
        List<ModalApi.SandboxTag> t = new java.util.ArrayList<>();
        for (ModalApi.SandboxTag old : tags) {
            if (!old.getTagName().equals(name)) {
                t.add(old);
            }
        }
        t.add(ModalApi.SandboxTag.newBuilder().setTagName(name).setTagValue(value).build());
        tags = List.copyOf(t);
    }

    /** Replaces the tag set whole (SandboxTagsSet). */
    public synchronized void replaceTags(List<ModalApi.SandboxTag> t) {
        tags = List.copyOf(t);
    }

    public List<ModalApi.SandboxTag> tags() {
        return tags;
    }

    /**
     * The router's {@code TaskSetNetworkAccess}: the local sandbox's egress for the commands that start
     * from now on ({@code local}, made of {@code next} by {@link WireNetwork#localPolicy}: the host's
     * network, none, or a list through the local runner's egress proxy), then the recorded policy. A
     * command already running keeps the network it started with (Modal instead drops its connections the
     * new policy forbids).
     *
     * @throws IllegalStateException when the sandbox has ended
     */
    synchronized void network(WireNetwork next, dev.sandbox4j.policy.EgressPolicy local) {
        if (ended.get()) {
            throw new IllegalStateException("sandbox " + id + " has ended");
        }
        if (!machine.instant()) {
            machine.setEgress(local);
        }
        network = next;
        hostNetwork = local.isAllowAll();
    }

    public WireNetwork network() {
        return network;
    }

    public boolean hostNetwork() {
        return hostNetwork;
    }

    public double createdAt() {
        return createdAt;
    }
}
