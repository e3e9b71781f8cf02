package dev.sandbox4j.modal.internal;

import com.google.protobuf.ByteString;
import dev.sandbox4j.api.Execution;
import dev.sandbox4j.api.InputFile;
import dev.sandbox4j.api.exception.SandboxException;
import dev.sandbox4j.api.exception.SandboxNotFoundException;
import dev.sandbox4j.spi.Backoff;
import dev.sandbox4j.spi.CodeCommand;
import dev.sandbox4j.spi.ExecOutcome;
import dev.sandbox4j.spi.OutputSink;
import dev.sandbox4j.spi.Secret;
import dev.sandbox4j.modal.internal.proto.ModalApi;
import dev.sandbox4j.modal.internal.proto.ModalClientGrpc;
import dev.sandbox4j.modal.internal.proto.ModalRouterApi;
import dev.sandbox4j.modal.internal.proto.TaskCommandRouterGrpc;
import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.ClientCalls;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Modal's per-task command router ({@code modal.task_command_router.TaskCommandRouter}) for
 * {@link ModalDriver}: files written with fixed scripts, and each exec as {@code TaskExecStart}, two
 * concurrent {@code TaskExecStdioRead} streams and {@code TaskExecWait}, with the kill by marker.
 * The control-plane calls (create, list, terminate) stay in {@link ModalDriver}.
 */
final class ModalExec {
    private static final Logger log = LoggerFactory.getLogger(ModalDriver.class);
    private static final String PROVIDER = ModalDriver.PROVIDER;
    private static final Set<Status.Code> NEVER_STARTED = Set.of(Status.Code.INVALID_ARGUMENT,
            Status.Code.FAILED_PRECONDITION, Status.Code.NOT_FOUND, Status.Code.PERMISSION_DENIED,
            Status.Code.UNAUTHENTICATED, Status.Code.ALREADY_EXISTS, Status.Code.UNIMPLEMENTED,
            Status.Code.OUT_OF_RANGE);
    private static final SecureRandom RANDOM = new SecureRandom();

    private final ModalSettings settings;
    private final ModalRpc rpc;
    private final ModalChannels channels;
    private final Backoff streamBackoff;
    private final ExecutorService io;
    private final AtomicInteger routerCalls = new AtomicInteger();

    ModalExec(ModalSettings settings, ModalRpc rpc, ModalChannels channels) {
        this.settings = settings;
        this.channels = channels;
        this.rpc = rpc;
        // the JS SDK resumes a dropped stdio stream after 10 ms, doubling
        this.streamBackoff = settings.backoff.toBuilder().base(Duration.ofMillis(10)).max(Duration.ofSeconds(1)).build();
        AtomicInteger n = new AtomicInteger();
        this.io = Executors.newCachedThreadPool(r -> {
            Thread t = new Thread(r, "sandbox4j-modal-io-" + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        });
    }

    /** The router calls sent so far, every retry counted. */
    int routerCalls() {
        return routerCalls.get();
    }

    // ---------------------------------------------------------------- router

    /** The sandbox's view of its router's shared channel: its own JWT on each call. */
    private Channel router(ModalHandle h) {
        return h.router(this::leaseRouter);
    }

    private ModalChannels.Lease leaseRouter(String url) {
        URI u;
        try {
            u = URI.create(url);
        } catch (IllegalArgumentException e) {
            throw SandboxException.builder("modal: the command router URL is not a URL").provider(PROVIDER).build();
        }
        String scheme = u.getScheme() == null ? "" : u.getScheme().toLowerCase(Locale.ROOT);
        if (u.getHost() == null || !(scheme.equals("https") || settings.plaintext && scheme.equals("http"))) {
            // TLS always, unless the control plane itself is plaintext (a local server), as the SDKs do
            throw SandboxException.builder("modal: the command router URL must be https://host[:port]")
                    .provider(PROVIDER).build();
        }
        return channels.leaseRouter(u.getHost(), u.getPort() > 0 ? u.getPort() : 443);
    }

    /** New router access for {@code h}: {@code SandboxGetCommandRouterAccess} (V2) or {@code TaskGetCommandRouterAccess} (V1). */
    private void refreshRouter(ModalHandle h) throws InterruptedException {
        String url;
        String jwt;
        if (h.v2()) {
            ModalApi.SandboxGetCommandRouterAccessResponse r = rpc.unary(ModalClientGrpc.getSandboxGetCommandRouterAccessMethod(),
                    ModalApi.SandboxGetCommandRouterAccessRequest.newBuilder().setSandboxId(h.id()).build(), true);
            url = r.getUrl();
            jwt = r.getJwt();
        } else {
            ModalApi.TaskGetCommandRouterAccessResponse r = rpc.unary(ModalClientGrpc.getTaskGetCommandRouterAccessMethod(),
                    ModalApi.TaskGetCommandRouterAccessRequest.newBuilder().setTaskId(h.taskId()).build(), true);
            url = r.getUrl();
            jwt = r.getJwt();
        }
        if (url.isEmpty() || jwt.isEmpty()) {
            throw SandboxException.builder("modal: command router access for sandbox " + h.id() + " came back empty")
                    .provider(PROVIDER).retriable(true).build();
        }
        h.routerAccess(url, Secret.of(jwt));
    }

    /** One router unary call with a wall-clock deadline; an UNAUTHENTICATED answer (expired JWT) refreshes the access once. */
    private <Q, R> R routerUnary(ModalHandle h, MethodDescriptor<Q, R> method, Q req, Duration deadline)
            throws InterruptedException {
        boolean refreshed = false;
        while (true) {
            routerCalls.incrementAndGet();
            try {
                return ClientCalls.blockingUnaryCall(router(h), method,
                        CallOptions.DEFAULT.withDeadlineAfter(deadline.toNanos(), TimeUnit.NANOSECONDS), req);
            } catch (StatusRuntimeException e) {
                ModalRpc.rethrowInterrupt(e);
                if (e.getStatus().getCode() == Status.Code.UNAUTHENTICATED && !refreshed) {
                    refreshed = true; // refused, so nothing ran: safe to send again
                    refreshRouter(h);
                    continue;
                }
                throw e;
            }
        }
    }

    // ---------------------------------------------------------------- files

    void writeFiles(ModalHandle sandbox, List<InputFile> files) throws InterruptedException {
        for (InputFile f : files) {
            writeFile(sandbox, f.path(), f.content());
        }
    }

    /**
     * Writes a file with fixed scripts, the path and the content (base64, 48 KiB a chunk) as
     * arguments: {@code sh -c ModalDriver.WRITE_SCRIPT sh PATH CHUNK}, then {@code ModalDriver.APPEND_SCRIPT} for the rest.
     * Two RPCs a chunk (start, wait). Arguments rather than {@code TaskExecStdinWrite}, which not
     * every router implementation serves.
     */
    void writeFile(ModalHandle h, String path, byte[] content) throws InterruptedException {
        String what = "modal: writing " + path + " in sandbox " + h.id();
        int off = 0;
        do {
            int n = Math.min(ModalDriver.FILE_CHUNK, content.length - off);
            String chunk = java.util.Base64.getEncoder().encodeToString(java.util.Arrays.copyOfRange(content, off, off + n));
            String execId = UUID.randomUUID().toString();
            ModalRouterApi.TaskExecStartRequest.Builder start = ModalRouterApi.TaskExecStartRequest.newBuilder()
                    .setTaskId(h.taskId()).setExecId(execId)
                    .addAllCommandArgs(List.of("/bin/sh", "-c", off == 0 ? ModalDriver.WRITE_SCRIPT : ModalDriver.APPEND_SCRIPT, "sh", path, chunk))
                    .setTimeoutSecs(ModalPolicy.seconds(settings.requestTimeout));
            if (settings.workdir != null) {
                start.setWorkdir(settings.workdir);
            }
            try {
                routerUnary(h, TaskCommandRouterGrpc.getTaskExecStartMethod(), start.build(), settings.requestTimeout);
                ModalRouterApi.TaskExecWaitResponse r = routerUnary(h, TaskCommandRouterGrpc.getTaskExecWaitMethod(),
                        ModalRouterApi.TaskExecWaitRequest.newBuilder().setTaskId(h.taskId()).setExecId(execId).build(),
                        settings.requestTimeout);
                if (r.getExitStatusCase() != ModalRouterApi.TaskExecWaitResponse.ExitStatusCase.CODE || r.getCode() != 0) {
                    throw SandboxException.builder(what + " failed (" + exitText(r) + ")").provider(PROVIDER).build();
                }
            } catch (StatusRuntimeException e) {
                throw rpc.map(e, what, false);
            }
            off += n;
        } while (off < content.length);
    }

    private static String exitText(ModalRouterApi.TaskExecWaitResponse r) {
        switch (r.getExitStatusCase()) {
            case CODE:
                return "exit code " + r.getCode();
            case SIGNAL:
                return "signal " + r.getSignal();
            default:
                return "no exit status";
        }
    }

    // ---------------------------------------------------------------- exec

    ExecOutcome exec(ModalHandle sandbox, Execution execution, OutputSink sink) throws InterruptedException {
        return run(sandbox, command(sandbox, execution), execution.budget(), sink);
    }

    /** argv for the interpreter; code with a NUL or longer than the argv limit goes by file. */
    private List<String> command(ModalHandle h, Execution execution) throws InterruptedException {
        CodeCommand command = CodeCommand.of(execution.language());
        String code = execution.code();
        byte[] bytes = code.getBytes(StandardCharsets.UTF_8);
        if (bytes.length <= settings.argvLimitBytes && command.fitsInline(code, ModalDriver.MAX_ARGS_BYTES)) {
            return command.inline(code);
        }
        // relative: the working directory outlives one exec where /tmp may not (a tmpfs per command)
        String path = ".sandbox4j/code-" + Long.toUnsignedString(RANDOM.nextLong(), 36) + command.extension();
        writeFile(h, path, bytes);
        return command.file(path);
    }

    private ExecOutcome run(ModalHandle h, List<String> argv, Duration budget, OutputSink sink) throws InterruptedException {
        String execId = UUID.randomUUID().toString();
        Map<String, String> env = new LinkedHashMap<>(h.env());
        env.put(ModalDriver.EXEC_MARKER, execId);
        ModalRouterApi.TaskExecStartRequest.Builder start = ModalRouterApi.TaskExecStartRequest.newBuilder()
                .setTaskId(h.taskId())
                .setExecId(execId)
                .addAllCommandArgs(argv)
                // the proto default DEVNULL would silently drop the output
                .setStdoutConfig(ModalRouterApi.TaskExecStdoutConfig.TASK_EXEC_STDOUT_CONFIG_PIPE)
                .setStderrConfig(ModalRouterApi.TaskExecStderrConfig.TASK_EXEC_STDERR_CONFIG_PIPE)
                .setTimeoutSecs(ModalPolicy.seconds(budget))
                .putAllEnv(env);
        if (settings.workdir != null) {
            start.setWorkdir(settings.workdir);
        }
        long t0 = System.nanoTime();
        try {
            // never retried after an ambiguous failure: the router's deduplication by exec_id is unverified
            routerUnary(h, TaskCommandRouterGrpc.getTaskExecStartMethod(), start.build(), settings.requestTimeout);
        } catch (StatusRuntimeException e) {
            boolean refused = NEVER_STARTED.contains(e.getStatus().getCode());
            SandboxException mapped = rpc.map(e, "modal: TaskExecStart in sandbox " + h.id(), !refused, !refused);
            if (e.getStatus().getCode() == Status.Code.NOT_FOUND) {
                throw new SandboxNotFoundException(mapped.toBuilder());
            }
            throw mapped;
        }
        long deadline = t0 + budget.toNanos() + settings.execGrace.toNanos();
        Exec x = new Exec(h, execId, deadline, sink);
        x.start();
        boolean finished;
        try {
            finished = x.event.await(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            // the lifecycle tears the sandbox down on an interrupt, which ends the command too
            x.cancel();
            throw e;
        }
        if (!finished) {
            x.cancel();
            kill(h, execId);
            return ExecOutcome.timedOut();
        }
        if (x.capped.get()) {
            x.cancel();
            kill(h, execId);
            return ExecOutcome.outputLimit();
        }
        if (x.failure.get() != null) {
            x.cancel();
            kill(h, execId);
            throw x.failure.get();
        }
        ModalRouterApi.TaskExecWaitResponse exit = x.exit.get();
        if (exit == null) {
            x.cancel();
            kill(h, execId);
            return ExecOutcome.timedOut();
        }
        x.drain(deadline);
        if (x.capped.get()) {
            return ExecOutcome.outputLimit();
        }
        if (x.failure.get() != null) {
            throw x.failure.get();
        }
        // Modal's exit status cannot tell its own timeout kill from the command's exit: decide by the clock
        boolean overBudget = System.nanoTime() - t0 >= budget.toNanos();
        if (exit.getExitStatusCase() == ModalRouterApi.TaskExecWaitResponse.ExitStatusCase.SIGNAL) {
            return overBudget ? ExecOutcome.timedOut() : ExecOutcome.killed(128 + exit.getSignal());
        }
        if (exit.getExitStatusCase() != ModalRouterApi.TaskExecWaitResponse.ExitStatusCase.CODE) {
            throw SandboxException.builder("modal: TaskExecWait in sandbox " + h.id() + " answered without an exit status")
                    .provider(PROVIDER).retriable(true).codeMayHaveRun(true).build();
        }
        if (overBudget && exit.getCode() != 0) {
            return ExecOutcome.timedOut();
        }
        return ExecOutcome.exited(exit.getCode());
    }

    /**
     * Best effort, in the background (a router may queue it behind the command it kills): SIGKILL to
     * every process carrying this exec's marker. Modal's timeout_secs kills the command anyway, and a
     * teardown ends everything.
     */
    private void kill(ModalHandle h, String execId) {
        try {
            io.submit(() -> killNow(h, execId));
        } catch (java.util.concurrent.RejectedExecutionException e) {
            log.debug("modal sandbox {}: driver closed, exec {} not killed", h.id(), execId);
        }
    }

    private void killNow(ModalHandle h, String execId) {
        String killId = UUID.randomUUID().toString();
        ModalRouterApi.TaskExecStartRequest req = ModalRouterApi.TaskExecStartRequest.newBuilder()
                .setTaskId(h.taskId()).setExecId(killId)
                .addAllCommandArgs(List.of("/bin/sh", "-c", ModalDriver.KILL_SCRIPT, "sh", ModalDriver.EXEC_MARKER, execId))
                .setTimeoutSecs((int) ModalDriver.KILL_DEADLINE.getSeconds())
                .build();
        try {
            routerUnary(h, TaskCommandRouterGrpc.getTaskExecStartMethod(), req, ModalDriver.KILL_DEADLINE);
            routerUnary(h, TaskCommandRouterGrpc.getTaskExecWaitMethod(),
                    ModalRouterApi.TaskExecWaitRequest.newBuilder().setTaskId(h.taskId()).setExecId(killId).build(), ModalDriver.KILL_DEADLINE);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (RuntimeException e) {
            // also when the sandbox was released (torn down) before the kill went out
            log.debug("modal sandbox {}: could not kill exec {}: {}", h.id(), execId, rpc.redact(String.valueOf(e.getMessage())));
        }
    }

    /** The two stdio streams and the wait of one exec, on the driver's I/O threads. */
    private final class Exec {
        final ModalHandle h;
        final String execId;
        final long deadline;
        final OutputSink sink;
        final CountDownLatch event = new CountDownLatch(1);
        final AtomicReference<ModalRouterApi.TaskExecWaitResponse> exit = new AtomicReference<>();
        final AtomicReference<SandboxException> failure = new AtomicReference<>();
        final java.util.concurrent.atomic.AtomicBoolean capped = new java.util.concurrent.atomic.AtomicBoolean();
        volatile boolean stopped;
        final List<Future<?>> readers = new ArrayList<>();
        Future<?> waiter;

        Exec(ModalHandle h, String execId, long deadline, OutputSink sink) {
            this.h = h;
            this.execId = execId;
            this.deadline = deadline;
            this.sink = sink;
        }

        void start() {
            readers.add(io.submit(() -> read(ModalRouterApi.TaskExecStdioFileDescriptor.TASK_EXEC_STDIO_FILE_DESCRIPTOR_STDOUT)));
            readers.add(io.submit(() -> read(ModalRouterApi.TaskExecStdioFileDescriptor.TASK_EXEC_STDIO_FILE_DESCRIPTOR_STDERR)));
            waiter = io.submit(this::waitExit);
        }

        void cancel() {
            stopped = true;
            readers.forEach(f -> f.cancel(true));
            if (waiter != null) {
                waiter.cancel(true);
            }
        }

        /** After the exit status: the streams end at EOF; wait for them until the deadline. */
        void drain(long until) throws InterruptedException {
            for (Future<?> f : readers) {
                try {
                    f.get(Math.max(0, until - System.nanoTime()), TimeUnit.NANOSECONDS);
                } catch (TimeoutException e) {
                    log.debug("modal sandbox {}: output of exec {} did not end by the deadline", h.id(), execId);
                    cancel();
                    return;
                } catch (ExecutionException e) {
                    fail(SandboxException.builder("modal: reading output failed: " + e.getCause())
                            .provider(PROVIDER).codeMayHaveRun(true).build());
                } catch (InterruptedException e) {
                    cancel();
                    throw e;
                }
            }
        }

        private void fail(SandboxException e) {
            failure.compareAndSet(null, e);
            event.countDown();
        }

        private void read(ModalRouterApi.TaskExecStdioFileDescriptor fd) {
            boolean stdout = fd == ModalRouterApi.TaskExecStdioFileDescriptor.TASK_EXEC_STDIO_FILE_DESCRIPTOR_STDOUT;
            long offset = 0;
            int retries = 0;
            boolean refreshed = false;
            while (!stopped) {
                ModalRouterApi.TaskExecStdioReadRequest req = ModalRouterApi.TaskExecStdioReadRequest.newBuilder()
                        .setTaskId(h.taskId()).setExecId(execId).setOffset(offset).setFileDescriptor(fd).build();
                routerCalls.incrementAndGet();
                try {
                    Iterator<ModalRouterApi.TaskExecStdioReadResponse> it = ClientCalls.blockingServerStreamingCall(
                            router(h), TaskCommandRouterGrpc.getTaskExecStdioReadMethod(),
                            CallOptions.DEFAULT.withDeadlineAfter(Math.max(1, deadline - System.nanoTime()), TimeUnit.NANOSECONDS), req);
                    while (it.hasNext()) {
                        ByteString data = it.next().getData();
                        byte[] b = data.toByteArray();
                        offset += b.length;
                        boolean more = stdout ? sink.stdout(b, 0, b.length) : sink.stderr(b, 0, b.length);
                        if (!more) {
                            capped.set(true);
                            event.countDown();
                            return;
                        }
                    }
                    return; // EOF: the command's stream is closed
                } catch (StatusRuntimeException e) {
                    if (stopped || Thread.currentThread().isInterrupted()) {
                        return;
                    }
                    Status.Code code = e.getStatus().getCode();
                    if (code == Status.Code.DEADLINE_EXCEEDED) {
                        return; // our deadline: the caller decides the timeout
                    }
                    if (code == Status.Code.UNAUTHENTICATED && !refreshed) {
                        refreshed = true;
                        try {
                            refreshRouter(h);
                        } catch (InterruptedException ie) {
                            return;
                        } catch (SandboxException se) {
                            fail(se.toBuilder().codeMayHaveRun(true).build());
                            return;
                        }
                        continue;
                    }
                    if (ModalRpc.RETRIABLE.contains(code) && retries < ModalDriver.STREAM_RETRIES) {
                        retries++;
                        try {
                            streamBackoff.sleep(streamBackoff.delay(retries)); // then resume from the offset
                        } catch (InterruptedException ie) {
                            return;
                        }
                        continue;
                    }
                    fail(rpc.map(e, "modal: reading " + (stdout ? "stdout" : "stderr") + " of sandbox " + h.id(), false, true));
                    return;
                }
            }
        }

        /** {@code TaskExecWait} with a 60 s call deadline, re-issued until the exec deadline, as the JS SDK waits. */
        private void waitExit() {
            ModalRouterApi.TaskExecWaitRequest req = ModalRouterApi.TaskExecWaitRequest.newBuilder()
                    .setTaskId(h.taskId()).setExecId(execId).build();
            int retries = 0;
            while (!stopped) {
                long remaining = deadline - System.nanoTime();
                if (remaining <= 0) {
                    return;
                }
                try {
                    ModalRouterApi.TaskExecWaitResponse r = routerUnary(h, TaskCommandRouterGrpc.getTaskExecWaitMethod(), req,
                            Duration.ofNanos(Math.min(remaining, ModalDriver.WAIT_CALL.toNanos())));
                    exit.set(r);
                    event.countDown();
                    return;
                } catch (InterruptedException e) {
                    return;
                } catch (SandboxException e) {
                    fail(e.toBuilder().codeMayHaveRun(true).build());
                    return;
                } catch (StatusRuntimeException e) {
                    if (stopped) {
                        return;
                    }
                    Status.Code code = e.getStatus().getCode();
                    if (code == Status.Code.DEADLINE_EXCEEDED) {
                        continue; // a long poll that ran out: ask again
                    }
                    if (ModalRpc.RETRIABLE.contains(code) && retries < ModalDriver.STREAM_RETRIES) {
                        retries++;
                        try {
                            streamBackoff.sleep(streamBackoff.delay(retries));
                        } catch (InterruptedException ie) {
                            return;
                        }
                        continue;
                    }
                    fail(rpc.map(e, "modal: TaskExecWait in sandbox " + h.id(), false, true));
                    return;
                }
            }
        }
    }

    void close() {
        io.shutdownNow();
    }
}
