package dev.sandbox4j.spi.lifecycle;

import dev.sandbox4j.api.Execution;
import dev.sandbox4j.api.InputFile;
import dev.sandbox4j.api.exception.SandboxException;
import dev.sandbox4j.policy.Capabilities;
import dev.sandbox4j.policy.EgressPolicy;
import dev.sandbox4j.policy.Language;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import dev.sandbox4j.spi.Attachable;
import dev.sandbox4j.spi.CreateRequest;
import dev.sandbox4j.spi.ExecOutcome;
import dev.sandbox4j.spi.Labelled;
import dev.sandbox4j.spi.OutputSink;
import dev.sandbox4j.spi.SandboxDriver;
import dev.sandbox4j.spi.SandboxHandle;

/**
 * A driver whose provider is a map in memory and whose failures are scripted per call: no network, no
 * processes. It keeps a "server-side" set of live sandboxes, so a test can check that nothing leaked.
 */
public final class ScriptedDriver implements SandboxDriver<ScriptedDriver.Handle> {

    /** A sandbox as the scripted provider knows it. */
    public static final class Handle implements SandboxHandle {
        private final String id;
        private final String runId;
        private final Map<String, String> labels;

        Handle(String id, String runId) {
            this(id, runId, Map.of(CreateRequest.RUN_ID_LABEL, runId));
        }

        Handle(String id, String runId, Map<String, String> labels) {
            this.id = id;
            this.runId = runId;
            this.labels = Map.copyOf(labels);
        }

        public Map<String, String> labels() {
            return labels;
        }

        @Override
        public String id() {
            return id;
        }

        public String runId() {
            return runId;
        }

        @Override
        public String toString() {
            return "Handle[" + id + "]";
        }
    }

    @FunctionalInterface
    public interface CreateStep {
        Handle create(ScriptedDriver driver, CreateRequest request) throws InterruptedException;
    }

    @FunctionalInterface
    public interface ExecStep {
        ExecOutcome exec(Handle handle, Execution execution, OutputSink sink) throws InterruptedException;
    }

    @FunctionalInterface
    public interface HandleStep {
        /** For destroy: true destroyed, false already gone. For other calls the result is ignored. */
        boolean apply(ScriptedDriver driver, Handle handle) throws InterruptedException;
    }

    private final String provider;
    private final Capabilities capabilities;
    private final AtomicInteger ids = new AtomicInteger();
    private final Deque<CreateStep> creates = new ArrayDeque<>();
    private final Deque<HandleStep> destroys = new ArrayDeque<>();
    private volatile HandleStep destroyAlways;
    private final Deque<HandleStep> egressUpdates = new ArrayDeque<>();
    private volatile ExecStep exec = ScriptedDriver::echo;
    private volatile ExecStep setupExec = (h, e, s) -> ExecOutcome.exited(0);
    private final Map<String, Handle> live = new ConcurrentHashMap<>();
    private final List<String> calls = new CopyOnWriteArrayList<>();
    private final List<CreateRequest> createRequests = new CopyOnWriteArrayList<>();
    private final List<Boolean> interruptedDuringDestroy = new CopyOnWriteArrayList<>();
    private volatile boolean closed;

    public ScriptedDriver(String provider, Capabilities capabilities) {
        this.provider = provider;
        this.capabilities = capabilities;
    }

    /** A driver that can enforce every policy, limit and feature. */
    public ScriptedDriver(String provider) {
        this(provider, everything(provider));
    }

    public static Capabilities everything(String provider) {
        return Capabilities.builder(provider)
                .egress(Capabilities.Egress.values())
                .limits(Capabilities.Limit.values())
                .features(Capabilities.Feature.values())
                .languages(Language.values())
                .build();
    }

    // ---- scripting ----

    /** The next create calls, in order; once they are used up, creates succeed. */
    public synchronized ScriptedDriver onCreate(CreateStep... steps) {
        creates.addAll(List.of(steps));
        return this;
    }

    /** The next destroy calls, in order; once used up, destroy removes the sandbox (true) or finds it gone (false). */
    public synchronized ScriptedDriver onDestroy(HandleStep... steps) {
        destroys.addAll(List.of(steps));
        return this;
    }

    /** Every destroy call from now on (after the queued ones). */
    public ScriptedDriver onEveryDestroy(HandleStep step) {
        this.destroyAlways = step;
        return this;
    }

    public synchronized ScriptedDriver onUpdateEgress(HandleStep... steps) {
        egressUpdates.addAll(List.of(steps));
        return this;
    }

    /** How untrusted code runs (Python and JavaScript executions). Default: echoes the code to stdout, exit 0. */
    public ScriptedDriver onExec(ExecStep step) {
        this.exec = step;
        return this;
    }

    /** How setup commands (Bash executions) run. Default: exit 0. */
    public ScriptedDriver onSetup(ExecStep step) {
        this.setupExec = step;
        return this;
    }

    public static CreateStep created() {
        return (d, r) -> d.createLive(r);
    }

    public static CreateStep failing(SandboxException e) {
        return (d, r) -> {
            throw e;
        };
    }

    /** The provider creates the sandbox but the answer is lost: the sandbox exists, the caller gets {@code e}. */
    public static CreateStep lostResponse(SandboxException e) {
        return (d, r) -> {
            d.createLive(r);
            throw e;
        };
    }

    public static CreateStep interrupted() {
        return (d, r) -> {
            throw new InterruptedException("scripted");
        };
    }

    public static HandleStep throwing(SandboxException e) {
        return (d, h) -> {
            throw e;
        };
    }

    public static ExecOutcome echo(Handle h, Execution e, OutputSink sink) {
        sink.stdout(e.code());
        return ExecOutcome.exited(0);
    }

    // ---- observations ----

    /** Every call in order: create, find:RUNID, writeFiles:ID, setup:ID, updateEgress:ID, exec:ID, destroy:ID. */
    public List<String> calls() {
        return List.copyOf(calls);
    }

    public long count(String call) {
        return calls.stream().filter(c -> c.equals(call) || c.startsWith(call + ":")).count();
    }

    public List<CreateRequest> createRequests() {
        return List.copyOf(createRequests);
    }

    /** Sandboxes the "provider" still holds: must be empty after every test. */
    public List<String> live() {
        return new ArrayList<>(live.keySet());
    }

    /** For each destroy call, whether the calling thread's interrupt flag was set at that moment. */
    public List<Boolean> interruptedDuringDestroy() {
        return List.copyOf(interruptedDuringDestroy);
    }

    public boolean isClosed() {
        return closed;
    }

    // ---- the driver ----

    Handle createLive(CreateRequest r) {
        Handle h = new Handle(provider + "-" + ids.incrementAndGet(), r.runId(), r.labels());
        live.put(h.id(), h);
        return h;
    }

    /** A sandbox that appears on the provider now, with these labels (a late create, or a planted orphan). */
    public Handle plant(Map<String, String> labels) {
        Handle h = new Handle(provider + "-" + ids.incrementAndGet(), labels.get(CreateRequest.RUN_ID_LABEL), labels);
        live.put(h.id(), h);
        return h;
    }

    /** How a lookup by run id answers; the default lists the live sandboxes with that run id. */
    public interface FindStep {
        List<Handle> find(ScriptedDriver driver, String runId) throws InterruptedException;
    }

    private volatile FindStep findStep = (d, runId) -> d.liveWith(runId);
    private final AtomicInteger finds = new AtomicInteger();

    public ScriptedDriver onFind(FindStep step) {
        this.findStep = step;
        return this;
    }

    /** Lookups by run id so far. */
    public int finds() {
        return finds.get();
    }

    public List<Handle> liveWith(String runId) {
        return live.values().stream().filter(h -> runId.equals(h.runId())).toList();
    }

    @Override
    public List<Labelled<Handle>> listLabelled(String owner) {
        calls.add("list:" + owner);
        return live.values().stream()
                .filter(h -> owner == null || owner.equals(h.labels().get(CreateRequest.OWNER_LABEL)))
                .map(h -> new Labelled<>(h, h.labels())).toList();
    }

    private final List<String> released = new CopyOnWriteArrayList<>();

    @Override
    public void release(Handle h) {
        released.add(h.id());
    }

    /** Handles the lifecycle said it was done with. */
    public List<String> released() {
        return released;
    }

    @Override
    public String provider() {
        return provider;
    }

    @Override
    public Capabilities capabilities() {
        return capabilities;
    }

    @Override
    public Handle create(CreateRequest request) throws InterruptedException {
        calls.add("create");
        createRequests.add(request);
        CreateStep step;
        synchronized (this) {
            step = creates.poll();
        }
        return (step == null ? created() : step).create(this, request);
    }

    @Override
    public List<Handle> findByRunId(String runId) throws InterruptedException {
        calls.add("find:" + runId);
        finds.incrementAndGet();
        return findStep.find(this, runId);
    }

    @Override
    public void writeFiles(Handle sandbox, List<InputFile> files) {
        calls.add("writeFiles:" + sandbox.id());
    }

    @Override
    public void updateEgress(Handle sandbox, EgressPolicy egress) throws InterruptedException {
        calls.add("updateEgress:" + sandbox.id());
        HandleStep step;
        synchronized (this) {
            step = egressUpdates.poll();
        }
        if (step != null) {
            step.apply(this, sandbox);
        }
    }

    @Override
    public ExecOutcome exec(Handle sandbox, Execution execution, OutputSink sink) throws InterruptedException {
        boolean setup = execution.language() == Language.BASH;
        calls.add((setup ? "setup:" : "exec:") + sandbox.id());
        if (!live.containsKey(sandbox.id())) {
            throw SandboxException.builder("sandbox " + sandbox.id() + " is gone").provider(provider).httpStatus(404).build();
        }
        return (setup ? setupExec : exec).exec(sandbox, execution, sink);
    }

    @Override
    public boolean destroy(Handle sandbox) throws InterruptedException {
        calls.add("destroy:" + sandbox.id());
        interruptedDuringDestroy.add(Thread.currentThread().isInterrupted());
        HandleStep step;
        synchronized (this) {
            step = destroys.poll();
        }
        if (step == null) {
            step = destroyAlways;
        }
        if (step != null) {
            return step.apply(this, sandbox);
        }
        return live.remove(sandbox.id()) != null;
    }

    private final java.util.Set<String> stopped = ConcurrentHashMap.newKeySet();
    private final Map<String, EgressPolicy> reportedEgress = new ConcurrentHashMap<>();

    /** The sandbox stays known to the provider but no longer runs (attach must refuse it). */
    public void stop(String id) {
        stopped.add(id);
    }

    /** The provider reports this egress for the sandbox (the driver compares it on attach); default: not reported. */
    public void reportEgress(String id, EgressPolicy egress) {
        reportedEgress.put(id, egress);
    }

    @Override
    public Attachable<Handle> attach(String sandboxId, dev.sandbox4j.api.SandboxSpec expected) {
        calls.add("attach:" + sandboxId);
        Handle h = live.get(sandboxId);
        if (h == null) {
            throw new dev.sandbox4j.api.exception.SandboxNotFoundException(SandboxException.builder("sandbox " + sandboxId
                    + " not found").provider(provider).httpStatus(404));
        }
        boolean running = !stopped.contains(sandboxId);
        Attachable.Builder<Handle> b = Attachable.builder(h).labels(h.labels()).state(running ? "running" : "stopped", running);
        EgressPolicy reported = reportedEgress.get(sandboxId);
        if (reported != null) {
            b.compare("egress.default", expected.egress().defaultAction(), reported.defaultAction());
            b.compare("egress.allowedDomains", expected.egress().allowedDomains(), reported.allowedDomains());
        }
        return b.build();
    }

    /** Destroys a sandbox behind the lifecycle's back (the provider's clock expired it). */
    public void expire(String id) {
        live.remove(id);
    }

    @Override
    public void close() {
        closed = true;
    }

}
