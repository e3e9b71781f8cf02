package dev.sandbox4j.emulators.modal.internal;

import com.google.protobuf.ByteString;
import dev.sandbox4j.api.Execution;
import dev.sandbox4j.emulators.Faults;
import dev.sandbox4j.emulators.ShellWords;
import dev.sandbox4j.emulators.modal.internal.proto.RouterApi;
import dev.sandbox4j.emulators.modal.internal.proto.TaskCommandRouterGrpc;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The task command router, {@code modal.task_command_router.TaskCommandRouter}, on its own port
 * (modal.md 3.6-3.9): exec start (idempotent by exec id), stdio reads from an offset per descriptor
 * (the router's own enum, STDOUT 0 and STDERR 1) as the command writes it, stdin (unary and streamed),
 * the filesystem tool the SDKs run ({@link FsTools}), and exit status as a long poll or a poll. Every call
 * carries a JWT for one task ({@link Auth#router}); a request for another task is PERMISSION_DENIED.
 */
public final class Router extends TaskCommandRouterGrpc.TaskCommandRouterImplBase {
    private static final int CHUNK = 64 * 1024;
    private final ControlPlane control;
    private final Faults faults;
    /** Stdio streams and filesystem-tool runs: each blocks a thread while it waits. */
    private final java.util.concurrent.ExecutorService workers = java.util.concurrent.Executors.newCachedThreadPool(r -> {
        Thread t = new Thread(r, "modal-emulator-router");
        t.setDaemon(true);
        return t;
    });

    public Router(ControlPlane control, Faults faults) {
        this.control = control;
        this.faults = faults;
    }

    /** Stops the router's threads (the emulator's close). */
    public void close() {
        workers.shutdownNow();
    }

    private EmulatedSandbox task(String taskId) {
        String allowed = Auth.ROUTER_TASK.get();
        if (!taskId.equals(allowed)) {
            throw Status.PERMISSION_DENIED.withDescription("the JWT is not for task " + taskId).asRuntimeException();
        }
        return control.task(taskId);
    }

    private Exec exec(String taskId, String execId) {
        Exec e = task(taskId).exec(execId);
        if (e == null) {
            throw Status.NOT_FOUND.withDescription("Exec " + execId + " not found").asRuntimeException();
        }
        return e;
    }

    @Override
    public void taskExecStart(RouterApi.TaskExecStartRequest req, StreamObserver<RouterApi.TaskExecStartResponse> out) {
        try {
            EmulatedSandbox sb = task(req.getTaskId());
            if (sb.finished()) {
                throw Status.FAILED_PRECONDITION.withDescription("Task " + req.getTaskId() + " has finished").asRuntimeException();
            }
            if (req.getExecId().isEmpty()) {
                throw ControlPlane.invalid("exec_id is required");
            }
            if (req.getCommandArgsCount() == 0) {
                throw ControlPlane.invalid("command_args must not be empty");
            }
            long argvBytes = 0;
            for (String a : req.getCommandArgsList()) {
                argvBytes += a.getBytes(StandardCharsets.UTF_8).length;
                if (a.indexOf('\0') >= 0) {
                    throw ControlPlane.invalid("command_args must not contain NUL");
                }
            }
            if (argvBytes > Commands.MAX_ARGV_BYTES) {
                throw ControlPlane.invalid("command_args total more than " + Commands.MAX_ARGV_BYTES + " bytes");
            }
            if (req.hasTimeoutSecs() && req.getTimeoutSecs() == 0) {
                throw ControlPlane.invalid("timeout_secs must be positive");
            }
            if (req.hasWorkdir() && !req.getWorkdir().startsWith("/")) {
                throw ControlPlane.invalid("workdir must be an absolute path");
            }
            if (req.getStdoutConfigValue() > 1 || req.getStderrConfigValue() > 2) {
                throw ControlPlane.invalid("unknown stdio config");
            }
            if (!req.getContainerId().isEmpty()) {
                throw Status.NOT_FOUND.withDescription("container " + req.getContainerId() + " not found").asRuntimeException();
            }
            Map<String, String> env = new LinkedHashMap<>(control.resolveSecrets(req.getSecretIdsList(), req.getSecretSourcesList()));
            env.putAll(req.getEnvMap());
            for (String k : env.keySet()) {
                if (!ShellWords.validEnvName(k)) {
                    throw ControlPlane.invalid("invalid environment variable name '" + k + "'");
                }
            }
            String workdir = req.hasWorkdir() ? req.getWorkdir()
                    : sb.definition().hasWorkdir() ? sb.definition().getWorkdir() : null;
            // The exec's own timeout, never beyond the sandbox's remaining lifetime.
            Duration budget = sb.remaining();
            if (req.hasTimeoutSecs() && Duration.ofSeconds(req.getTimeoutSecs()).compareTo(budget) < 0) {
                budget = Duration.ofSeconds(req.getTimeoutSecs());
            }
            boolean tool = FsTools.isTool(req.getCommandArgsList());
            Execution execution = tool ? null
                    : Commands.toExecution(req.getCommandArgsList(), workdir, env, budget, control.outputLimit(),
                            req.getStderrConfigValue() == 2);
            Exec exec = new Exec(req.getExecId(), req.getTaskId(), req.getCommandArgsList(), req.getStdoutConfigValue(),
                    req.getStderrConfigValue(), req.hasTimeoutSecs() ? req.getTimeoutSecs() : null,
                    req.hasWorkdir() ? req.getWorkdir() : null, new ArrayList<>(env.keySet()));
            if (tool && FsTools.readsStdin(req.getCommandArgsList())) {
                exec.takeStdin();
            }
            Exec owner = tool ? sb.startTool(exec, workers) : sb.start(exec, execution, req.getStderrConfigValue() == 2);
            if (owner != exec && !owner.argv().equals(exec.argv())) {
                throw Status.ALREADY_EXISTS.withDescription("exec_id " + req.getExecId() + " is taken by another command")
                        .asRuntimeException();
            }
            if (owner == exec) {
                control.executed(sb, exec.argv()); // a repeated exec_id starts nothing, and is not counted
            }
            out.onNext(RouterApi.TaskExecStartResponse.getDefaultInstance());
            out.onCompleted();
        } catch (StatusRuntimeException e) {
            out.onError(e);
        }
    }

    @Override
    public void taskExecStdioRead(RouterApi.TaskExecStdioReadRequest req, StreamObserver<RouterApi.TaskExecStdioReadResponse> out) {
        Exec exec;
        try {
            if (req.getFileDescriptorValue() > 1) {
                throw ControlPlane.invalid("file_descriptor must be STDOUT (0) or STDERR (1)");
            }
            exec = exec(req.getTaskId(), req.getExecId());
        } catch (StatusRuntimeException e) {
            out.onError(e);
            return;
        }
        if (faults.hostileFraming() && out instanceof ServerCallStreamObserver) {
            endless((ServerCallStreamObserver<RouterApi.TaskExecStdioReadResponse>) out);
            return;
        }
        int fd = req.getFileDescriptorValue();
        long offset = req.getOffset();
        try {
            workers.execute(() -> stream(exec, fd, offset, out));
        } catch (java.util.concurrent.RejectedExecutionException e) {
            out.onError(Status.UNAVAILABLE.withDescription("the router is stopping").asRuntimeException());
        }
    }

    /**
     * Sends {@code fd} from {@code offset} as the command writes it, and ends the stream once the exec
     * ended and everything was sent (modal.md 3.8). An offset past the end of a finished exec's output is
     * OUT_OF_RANGE. The dropped-stream fault sends half of the first data it sees, then fails as a broken
     * connection would.
     */
    private void stream(Exec exec, int fd, long offset, StreamObserver<RouterApi.TaskExecStdioReadResponse> out) {
        ServerCallStreamObserver<?> call = out instanceof ServerCallStreamObserver ? (ServerCallStreamObserver<?>) out : null;
        long pos = offset;
        boolean first = true;
        try {
            while (true) {
                if (call != null && call.isCancelled()) {
                    return;
                }
                byte[] data = exec.read(fd, pos, 1000);
                if (data == null) {
                    break;
                }
                if (data.length == 0) {
                    continue;
                }
                int until = data.length;
                boolean drop = first && faults.takeDroppedStream();
                first = false;
                if (drop) {
                    until = Math.max(1, data.length / 2);
                }
                for (int i = 0; i < until; i += CHUNK) {
                    out.onNext(RouterApi.TaskExecStdioReadResponse.newBuilder()
                            .setData(ByteString.copyFrom(data, i, Math.min(CHUNK, until - i))).build());
                }
                pos += until;
                if (drop) {
                    control.fired().droppedStreams.incrementAndGet();
                    out.onError(Status.UNAVAILABLE.withDescription("emulated: stream dropped mid-run").asRuntimeException());
                    return;
                }
            }
            long total = exec.output(fd).length;
            if (offset > total) {
                out.onError(Status.OUT_OF_RANGE.withDescription("offset " + offset + " is past the end (" + total + ")")
                        .asRuntimeException());
                return;
            }
            out.onCompleted();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (RuntimeException cancelled) {
            // the client went away
        }
    }

    @Override
    public void taskExecStdinWrite(RouterApi.TaskExecStdinWriteRequest req, StreamObserver<RouterApi.TaskExecStdinWriteResponse> out) {
        try {
            Exec exec = exec(req.getTaskId(), req.getExecId());
            stdin(exec, req.getOffset(), req.getData().toByteArray(), req.getEof());
            out.onNext(RouterApi.TaskExecStdinWriteResponse.getDefaultInstance());
            out.onCompleted();
        } catch (StatusRuntimeException e) {
            out.onError(e);
        }
    }

    /**
     * Takes stdin for an exec that reads it: the filesystem tool's WriteFile (its content). The
     * emulator's commands run with stdin at its end (the local runner gives them no input), so for
     * them only an empty write with {@code eof} is taken (closing what is closed), and data is
     * FAILED_PRECONDITION, which the SDK also gets from a command that already exited.
     */
    private static void stdin(Exec exec, long offset, byte[] data, boolean eof) {
        if (!exec.takesStdin() && (data.length > 0 || !eof)) {
            throw Status.FAILED_PRECONDITION.withDescription("stdin of exec " + exec.execId() + " is closed").asRuntimeException();
        }
        if (exec.done().isDone() && data.length > 0) {
            throw Status.FAILED_PRECONDITION.withDescription("exec " + exec.execId() + " has finished").asRuntimeException();
        }
        String refused = exec.writeStdin(offset, data, eof);
        if (refused != null) {
            throw Status.FAILED_PRECONDITION.withDescription(refused).asRuntimeException();
        }
    }

    /** First message {@code start}, then {@code data}, then {@code end} (EOF); answered when the client half-closes. */
    @Override
    public StreamObserver<RouterApi.TaskExecStdinWriteStreamRequest> taskExecStdinWriteStream(
            StreamObserver<RouterApi.TaskExecStdinWriteStreamResponse> out) {
        String allowed = Auth.ROUTER_TASK.get();
        return new StreamObserver<>() {
            Exec exec;
            long offset;
            boolean failed;

            @Override
            public void onNext(RouterApi.TaskExecStdinWriteStreamRequest m) {
                if (failed) {
                    return;
                }
                try {
                    switch (m.getPayloadCase()) {
                        case START:
                            if (exec != null) {
                                throw ControlPlane.invalid("start must come once, first");
                            }
                            if (!m.getStart().getTaskId().equals(allowed)) {
                                throw Status.PERMISSION_DENIED.withDescription("the JWT is not for task " + m.getStart().getTaskId())
                                        .asRuntimeException();
                            }
                            Exec e = control.task(m.getStart().getTaskId()).exec(m.getStart().getExecId());
                            if (e == null) {
                                throw Status.NOT_FOUND.withDescription("Exec " + m.getStart().getExecId() + " not found").asRuntimeException();
                            }
                            exec = e;
                            offset = m.getStart().getOffset();
                            break;
                        case DATA:
                        case END:
                            if (exec == null) {
                                throw ControlPlane.invalid("the first message must be start");
                            }
                            byte[] data = m.getPayloadCase() == RouterApi.TaskExecStdinWriteStreamRequest.PayloadCase.DATA
                                    ? m.getData().toByteArray() : new byte[0];
                            stdin(exec, offset, data, m.getPayloadCase() == RouterApi.TaskExecStdinWriteStreamRequest.PayloadCase.END);
                            offset += data.length;
                            break;
                        default:
                            throw ControlPlane.invalid("empty message");
                    }
                } catch (StatusRuntimeException e) {
                    failed = true;
                    out.onError(e);
                }
            }

            @Override
            public void onError(Throwable t) {
                failed = true;
            }

            @Override
            public void onCompleted() {
                if (!failed) {
                    out.onNext(RouterApi.TaskExecStdinWriteStreamResponse.getDefaultInstance());
                    out.onCompleted();
                }
            }
        };
    }

    @Override
    public void taskExecStdinStatus(RouterApi.TaskExecStdinStatusRequest req, StreamObserver<RouterApi.TaskExecStdinStatusResponse> out) {
        try {
            Exec exec = exec(req.getTaskId(), req.getExecId());
            out.onNext(RouterApi.TaskExecStdinStatusResponse.newBuilder().setNumBytesWritten(exec.stdinWritten())
                    .setClosed(exec.stdinClosed() || !exec.takesStdin()).build());
            out.onCompleted();
        } catch (StatusRuntimeException e) {
            out.onError(e);
        }
    }

    /**
     * Replaces a running sandbox's network policy ({@link WireNetwork#parseLive}): the local sandbox's
     * commands from now on run under the egress {@link WireNetwork#localPolicy} makes of it, the same
     * mapping as at create ({@link EmulatedSandbox#network(WireNetwork, dev.sandbox4j.policy.EgressPolicy)}).
     * A finished task is FAILED_PRECONDITION, an invalid policy INVALID_ARGUMENT. Answered once the switch
     * is made.
     */
    @Override
    public void taskSetNetworkAccess(RouterApi.TaskSetNetworkAccessRequest req,
            StreamObserver<RouterApi.TaskSetNetworkAccessResponse> out) {
        try {
            EmulatedSandbox sb = task(req.getTaskId());
            if (sb.finished()) {
                throw Status.FAILED_PRECONDITION.withDescription("Task " + req.getTaskId() + " has finished").asRuntimeException();
            }
            if (!req.hasNetworkAccess()) {
                throw ControlPlane.invalid("network_access is required");
            }
            WireNetwork next;
            try {
                next = WireNetwork.parseLive(req.getNetworkAccess());
            } catch (IllegalArgumentException e) {
                throw ControlPlane.invalid(e.getMessage());
            }
            try {
                sb.network(next, control.localPolicy(next));
            } catch (RuntimeException e) {
                // ended meanwhile (terminate, expiry): the local sandbox is gone
                throw Status.FAILED_PRECONDITION.withDescription("Task " + req.getTaskId() + " has finished").asRuntimeException();
            }
            out.onNext(RouterApi.TaskSetNetworkAccessResponse.getDefaultInstance());
            out.onCompleted();
        } catch (StatusRuntimeException e) {
            out.onError(e);
        }
    }

    /** Past this much the hostile stream ends anyway (a client without a cap would still see an end). */
    private static final long HOSTILE_LIMIT = 4L << 30;

    /**
     * The hostile-framing fault: one endless line of output, sent as fast as the client reads (flow
     * control bounds the emulator's own memory), until the client cancels or {@link #HOSTILE_LIMIT}.
     */
    private void endless(ServerCallStreamObserver<RouterApi.TaskExecStdioReadResponse> out) {
        control.fired().hostileStreams.incrementAndGet();
        byte[] line = new byte[CHUNK];
        java.util.Arrays.fill(line, (byte) 'A');
        RouterApi.TaskExecStdioReadResponse chunk = RouterApi.TaskExecStdioReadResponse.newBuilder()
                .setData(ByteString.copyFrom(line)).build();
        long[] sent = {0};
        boolean[] ended = {false};
        out.setOnCancelHandler(() -> { });
        out.setOnReadyHandler(() -> {
            synchronized (sent) {
                try {
                    while (!ended[0] && out.isReady() && !out.isCancelled()) {
                        if (sent[0] >= HOSTILE_LIMIT) {
                            ended[0] = true;
                            out.onCompleted();
                            return;
                        }
                        out.onNext(chunk);
                        sent[0] += CHUNK;
                    }
                } catch (RuntimeException cancelled) {
                    ended[0] = true;
                }
            }
        });
    }

    @Override
    public void taskExecWait(RouterApi.TaskExecWaitRequest req, StreamObserver<RouterApi.TaskExecWaitResponse> out) {
        Exec exec;
        try {
            exec = exec(req.getTaskId(), req.getExecId());
        } catch (StatusRuntimeException e) {
            out.onError(e);
            return;
        }
        // A long poll with no server-side cap: the client's call deadline (60 s in the SDK) ends it.
        exec.done().whenComplete((exit, error) -> {
            RouterApi.TaskExecWaitResponse.Builder b = RouterApi.TaskExecWaitResponse.newBuilder();
            if (exit.isSignal()) {
                b.setSignal(exit.value());
            } else {
                b.setCode(exit.value());
            }
            try {
                out.onNext(b.build());
                out.onCompleted();
            } catch (RuntimeException cancelled) {
                // the client's deadline passed first
            }
        });
    }

    @Override
    public void taskExecPoll(RouterApi.TaskExecPollRequest req, StreamObserver<RouterApi.TaskExecPollResponse> out) {
        try {
            Exec exec = exec(req.getTaskId(), req.getExecId());
            RouterApi.TaskExecPollResponse.Builder b = RouterApi.TaskExecPollResponse.newBuilder();
            Exec.Exit exit = exec.done().getNow(null);
            if (exit != null) {
                if (exit.isSignal()) {
                    b.setSignal(exit.value());
                } else {
                    b.setCode(exit.value());
                }
            }
            out.onNext(b.build());
            out.onCompleted();
        } catch (StatusRuntimeException e) {
            out.onError(e);
        }
    }
}
