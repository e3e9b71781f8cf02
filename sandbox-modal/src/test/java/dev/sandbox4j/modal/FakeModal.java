package dev.sandbox4j.modal;

import com.google.protobuf.ByteString;
import com.google.protobuf.Message;
import dev.sandbox4j.modal.internal.proto.ModalApi;
import dev.sandbox4j.modal.internal.proto.ModalClientGrpc;
import dev.sandbox4j.modal.internal.proto.ModalRouterApi;
import dev.sandbox4j.modal.internal.proto.TaskCommandRouterGrpc;
import io.grpc.Context;
import io.grpc.Contexts;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.Server;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.ServerInterceptors;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.inprocess.InProcessChannelBuilder;
import io.grpc.inprocess.InProcessServerBuilder;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.IntFunction;

/**
 * An in-process Modal: the control plane and the command router on one in-process gRPC server,
 * answering with the ids the shared recordings use, recording every call (method, metadata, request),
 * with per-method faults and a scripted command. Not a Modal emulator: it runs no code.
 */
final class FakeModal implements AutoCloseable {
    static final Context.Key<Metadata> HEADERS = Context.key("headers");
    static final String APP_ID = "ap-MockApp0000000000000001";
    static final String V1_SANDBOX = "sb-MockSandbox00000000000";
    static final String V2_SANDBOX = "sb-v2-mock-0001";
    static final String TASK_V1 = "ta-MockTask000000000000001";
    static final String TASK_V2 = "ta-MockTask000000000000002V";
    static final String ROUTER_URL = "https://127.0.0.1:43192";

    /** One recorded call. */
    static final class Call {
        final String method;
        final Metadata headers;
        final Message request;

        Call(String method, Metadata headers, Message request) {
            this.method = method;
            this.headers = headers;
            this.request = request;
        }

        String header(String name) {
            return headers.get(Metadata.Key.of(name, Metadata.ASCII_STRING_MARSHALLER));
        }

        @Override
        public String toString() {
            return method;
        }
    }

    /** What the next ordinary command does. */
    static final class Script {
        volatile List<byte[]> stdout = List.of("hi\n".getBytes(StandardCharsets.UTF_8));
        volatile List<byte[]> stderr = List.of("err\n".getBytes(StandardCharsets.UTF_8));
        volatile Integer code = 3;
        volatile Integer signal;
        /** The wait does not answer and the streams stay open until the command is killed. */
        volatile boolean hang;
        /** stdout never ends until the command is killed or the read cancelled. */
        volatile boolean endlessStdout;
        /** The first stdout stream sends its first chunk and then fails UNAVAILABLE. */
        volatile boolean dropStdoutOnce;
    }

    static final class Exec {
        final String sandboxTask;
        final List<String> argv;
        final Map<String, String> env;
        final CountDownLatch killed = new CountDownLatch(1);

        Exec(String task, List<String> argv, Map<String, String> env) {
            this.sandboxTask = task;
            this.argv = argv;
            this.env = env;
        }

        boolean isKill() {
            return argv.size() > 2 && argv.get(0).equals("/bin/sh") && argv.get(2).contains("/proc/");
        }

        /** The lock-down's kill of every process carrying an exec marker (one argument: the marker's name). */
        boolean isKillMarked() {
            return isKill() && argv.size() == 5;
        }

        /** The runner's language probe ({@code command -v} of each interpreter). */
        boolean isProbe() {
            return argv.size() == 3 && argv.get(0).equals("/bin/sh") && argv.get(2).contains("command -v");
        }

        boolean isWrite() {
            return argv.size() > 5 && argv.get(0).equals("/bin/sh") && argv.get(2).contains("base64 -d");
        }

        boolean isTool() {
            return argv.size() == 2 && argv.get(0).equals(FS_TOOLS);
        }

        /** The fake filesystem tool over {@link #files} (relative to {@link #TOOL_ROOT}): stdout, stderr, exit code. */
        Object[] tool(Map<String, byte[]> files) {
            com.fasterxml.jackson.databind.JsonNode cmd;
            try {
                cmd = new com.fasterxml.jackson.databind.ObjectMapper().readTree(argv.get(1));
            } catch (java.io.IOException ex) {
                throw new IllegalStateException(ex);
            }
            String op = cmd.fieldNames().next();
            String path = cmd.path(op).path("path").asText();
            String rel = path.equals(TOOL_ROOT) ? "" : path.startsWith(TOOL_ROOT + "/") ? path.substring(TOOL_ROOT.length() + 1) : null;
            byte[] file = rel == null ? null : files.get(rel);
            boolean dir = rel != null && (rel.isEmpty() || files.keySet().stream().anyMatch(k -> k.startsWith(rel + "/")));
            byte[] notFound = "{\"error_kind\":\"NotFound\",\"message\":\"No such file or directory\",\"detail\":\"\"}"
                    .getBytes(StandardCharsets.UTF_8);
            if (file == null && !dir) {
                return new Object[] {new byte[0], notFound, 1};
            }
            switch (op) {
                case "Stat":
                    return new Object[] {("{\"name\":\"x\",\"path\":\"" + path + "\",\"type\":\"" + (dir ? "directory" : "file")
                            + "\",\"size\":" + (dir ? 4096 : file.length) + ",\"symlink_target\":null}").getBytes(StandardCharsets.UTF_8),
                            new byte[0], 0};
                case "ReadFile":
                    return new Object[] {file, new byte[0], 0};
                case "ListFiles": {
                    StringBuilder b = new StringBuilder("[");
                    java.util.TreeSet<String> names = new java.util.TreeSet<>();
                    for (String k : files.keySet()) {
                        if (rel.isEmpty() || k.startsWith(rel + "/")) {
                            String rest = rel.isEmpty() ? k : k.substring(rel.length() + 1);
                            names.add(rest);
                        }
                    }
                    for (String n : names) {
                        boolean sub = n.contains("/");
                        String name = sub ? n.substring(0, n.indexOf('/')) : n;
                        if (b.indexOf("\"name\":\"" + name + "\"") >= 0) {
                            continue;
                        }
                        b.append(b.length() > 1 ? "," : "").append("{\"name\":\"").append(name).append("\",\"type\":\"")
                                .append(sub ? "directory" : "file").append("\",\"size\":")
                                .append(sub ? 4096 : files.get(rel.isEmpty() ? n : rel + "/" + n).length).append(",\"symlink_target\":null}");
                    }
                    return new Object[] {b.append("]").toString().getBytes(StandardCharsets.UTF_8), new byte[0], 0};
                }
                default:
                    return new Object[] {new byte[0], new byte[0], 2};
            }
        }
    }

    static final String FS_TOOLS = "/__modal/.bin/modal-sandbox-fs-tools";
    /** Where the fake tool finds {@link #files}: the workdir the wire tests configure. */
    static final String TOOL_ROOT = "/tmp";

    static final class Sbx {
        final String id;
        final Map<String, String> tags;
        final double createdAt;
        volatile boolean alive = true;

        Sbx(String id, Map<String, String> tags, double createdAt) {
            this.id = id;
            this.tags = tags;
            this.createdAt = createdAt;
        }
    }

    final List<Call> calls = Collections.synchronizedList(new ArrayList<>());
    final Map<String, Queue<StatusRuntimeException>> faults = new ConcurrentHashMap<>();
    final Map<String, Sbx> sandboxes = new ConcurrentHashMap<>();
    final Map<String, Exec> execs = new ConcurrentHashMap<>();
    /** Files written by the adapter's write execs, by path. */
    final Map<String, byte[]> files = new ConcurrentHashMap<>();
    final List<String> channelTargets = Collections.synchronizedList(new ArrayList<>());
    final Script script = new Script();
    volatile boolean loseCreateResponse;
    /** What the language probe prints (the interpreters the fake image has) and its exit code. */
    volatile String probeStdout = "python3\nbash\n";
    volatile int probeCode;
    /** The exit code the lock-down's kill of marked processes answers. */
    volatile int killMarkedCode;
    /** Counted down when a TaskExecWait for an ordinary command arrives. */
    final CountDownLatch waitArrived = new CountDownLatch(1);
    /** Counted down when a kill exec arrives. */
    final CountDownLatch killArrived = new CountDownLatch(1);
    /**
     * The answer to the n-th {@code SandboxGetTaskId} (from 1, over all sandboxes); by default the task on
     * every second one (not scheduled on the first poll, as recorded).
     */
    volatile IntFunction<ModalApi.SandboxGetTaskIdResponse.Builder> taskIdAnswer = n -> n % 2 == 0
            ? ModalApi.SandboxGetTaskIdResponse.newBuilder().setTaskId(TASK_V1) : ModalApi.SandboxGetTaskIdResponse.newBuilder();
    /** The one message of the n-th {@code ImageJoinStreaming} (from 1); by default the build's success. */
    volatile IntFunction<ModalApi.ImageJoinStreamingResponse.Builder> imageJoinAnswer = n -> ModalApi.ImageJoinStreamingResponse
            .newBuilder().setEntryId("1-0")
            .setResult(ModalApi.GenericResult.newBuilder().setStatus(ModalApi.GenericResult.GenericStatus.GENERIC_STATUS_SUCCESS));
    volatile String routerJwt = jwt(3600, "router");
    volatile String authToken = jwt(3600, "auth");
    private final AtomicInteger images = new AtomicInteger();
    private final AtomicInteger created = new AtomicInteger();
    private final AtomicInteger taskPolls = new AtomicInteger();
    private final AtomicInteger imageJoins = new AtomicInteger();
    private final String name = "fake-modal-" + UUID.randomUUID();
    private final ExecutorService pool = Executors.newCachedThreadPool(r -> {
        Thread t = new Thread(r, "fake-modal");
        t.setDaemon(true);
        return t;
    });
    private final Server server;

    FakeModal() throws IOException {
        ServerInterceptor headers = new ServerInterceptor() {
            @Override
            public <Q, R> ServerCall.Listener<Q> interceptCall(ServerCall<Q, R> call, Metadata h, ServerCallHandler<Q, R> next) {
                return Contexts.interceptCall(Context.current().withValue(HEADERS, h), call, h, next);
            }
        };
        server = InProcessServerBuilder.forName(name).executor(pool)
                .addService(ServerInterceptors.intercept(new Control(), headers))
                .addService(ServerInterceptors.intercept(new Router(), headers))
                .build().start();
    }

    /** Every channel the adapter opens, control plane or router, reaches this server. */
    ManagedChannel channel(String host, int port, boolean plaintext) {
        channelTargets.add(host + ":" + port + (plaintext ? " plaintext" : " tls"));
        return InProcessChannelBuilder.forName(name).build();
    }

    static String jwt(long secondsFromNow, String sub) {
        String payload = "{\"exp\":" + (System.currentTimeMillis() / 1000 + secondsFromNow) + ",\"sub\":\"" + sub + "\"}";
        Base64.Encoder b = Base64.getUrlEncoder().withoutPadding();
        return b.encodeToString("{\"alg\":\"none\"}".getBytes(StandardCharsets.UTF_8)) + "."
                + b.encodeToString(payload.getBytes(StandardCharsets.UTF_8)) + ".sig";
    }

    void fail(String method, Status status) {
        fail(method, status.asRuntimeException());
    }

    void fail(String method, StatusRuntimeException e) {
        faults.computeIfAbsent(method, k -> new ConcurrentLinkedQueue<>()).add(e);
    }

    List<String> methods() {
        synchronized (calls) {
            return calls.stream().map(c -> c.method).toList();
        }
    }

    List<Call> calls(String method) {
        synchronized (calls) {
            return calls.stream().filter(c -> c.method.equals(method)).toList();
        }
    }

    long leaks() {
        return sandboxes.values().stream().filter(s -> s.alive).count();
    }

    private boolean record(String method, Message request, StreamObserver<?> obs) {
        calls.add(new Call(method, HEADERS.get(), request));
        Queue<StatusRuntimeException> q = faults.get(method);
        StatusRuntimeException f = q == null ? null : q.poll();
        if (f != null) {
            obs.onError(f);
            return false;
        }
        return true;
    }

    private Sbx newSandbox(String id, List<ModalApi.SandboxTag> tags) {
        Map<String, String> m = new ConcurrentHashMap<>();
        tags.forEach(t -> m.put(t.getTagName(), t.getTagValue()));
        Sbx s = new Sbx(id, m, 1000 + created.incrementAndGet());
        sandboxes.put(id, s);
        return s;
    }

    private final class Control extends ModalClientGrpc.ModalClientImplBase {
        @Override
        public void authTokenGet(ModalApi.AuthTokenGetRequest r, StreamObserver<ModalApi.AuthTokenGetResponse> o) {
            if (record("AuthTokenGet", r, o)) {
                o.onNext(ModalApi.AuthTokenGetResponse.newBuilder().setToken(authToken).build());
                o.onCompleted();
            }
        }

        @Override
        public void appGetOrCreate(ModalApi.AppGetOrCreateRequest r, StreamObserver<ModalApi.AppGetOrCreateResponse> o) {
            if (record("AppGetOrCreate", r, o)) {
                o.onNext(ModalApi.AppGetOrCreateResponse.newBuilder().setAppId(APP_ID).build());
                o.onCompleted();
            }
        }

        @Override
        public void environmentGetOrCreate(ModalApi.EnvironmentGetOrCreateRequest r,
                                           StreamObserver<ModalApi.EnvironmentGetOrCreateResponse> o) {
            if (record("EnvironmentGetOrCreate", r, o)) {
                o.onNext(ModalApi.EnvironmentGetOrCreateResponse.newBuilder().setEnvironmentId("en-MockEnv0000000000000001")
                        .setMetadata(ModalApi.EnvironmentMetadata.newBuilder().setName("main")
                                .setSettings(ModalApi.EnvironmentSettings.newBuilder().setImageBuilderVersion("2025.06")
                                        .setWebhookSuffix("modal.run"))).build());
                o.onCompleted();
            }
        }

        @Override
        public void imageGetOrCreate(ModalApi.ImageGetOrCreateRequest r, StreamObserver<ModalApi.ImageGetOrCreateResponse> o) {
            if (record("ImageGetOrCreate", r, o)) {
                o.onNext(ModalApi.ImageGetOrCreateResponse.newBuilder()
                        .setImageId(String.format("im-MockImage%015d", images.incrementAndGet())).build());
                o.onCompleted();
            }
        }

        @Override
        public void imageJoinStreaming(ModalApi.ImageJoinStreamingRequest r, StreamObserver<ModalApi.ImageJoinStreamingResponse> o) {
            if (record("ImageJoinStreaming", r, o)) {
                o.onNext(imageJoinAnswer.apply(imageJoins.incrementAndGet()).build());
                o.onCompleted();
            }
        }

        @Override
        public void sandboxCreate(ModalApi.SandboxCreateRequest r, StreamObserver<ModalApi.SandboxCreateResponse> o) {
            if (record("SandboxCreate", r, o)) {
                String id = created.get() == 0 ? V1_SANDBOX : String.format("sb-MockSandbox%011d", created.get());
                newSandbox(id, r.getTagsList());
                if (loseCreateResponse) {
                    o.onError(Status.UNAVAILABLE.withDescription("connection reset").asRuntimeException());
                    return;
                }
                o.onNext(ModalApi.SandboxCreateResponse.newBuilder().setSandboxId(id).build());
                o.onCompleted();
            }
        }

        @Override
        public void sandboxCreateV2(ModalApi.SandboxCreateV2Request r, StreamObserver<ModalApi.SandboxCreateV2Response> o) {
            if (record("SandboxCreateV2", r, o)) {
                String id = created.get() == 0 ? V2_SANDBOX : "sb-v2-mock-" + (created.get() + 1);
                newSandbox(id, r.getTagsList());
                if (loseCreateResponse) {
                    o.onError(Status.UNAVAILABLE.withDescription("connection reset").asRuntimeException());
                    return;
                }
                o.onNext(ModalApi.SandboxCreateV2Response.newBuilder().setSandboxId(id).setTaskId(TASK_V2)
                        .setCommandRouterAccess(ModalApi.CommandRouterAccess.newBuilder().setUrl(ROUTER_URL).setJwt(routerJwt))
                        .build());
                o.onCompleted();
            }
        }

        @Override
        public void sandboxGetTaskId(ModalApi.SandboxGetTaskIdRequest r, StreamObserver<ModalApi.SandboxGetTaskIdResponse> o) {
            if (record("SandboxGetTaskId", r, o)) {
                o.onNext(taskIdAnswer.apply(taskPolls.incrementAndGet()).build());
                o.onCompleted();
            }
        }

        @Override
        public void taskGetCommandRouterAccess(ModalApi.TaskGetCommandRouterAccessRequest r,
                                               StreamObserver<ModalApi.TaskGetCommandRouterAccessResponse> o) {
            if (record("TaskGetCommandRouterAccess", r, o)) {
                o.onNext(ModalApi.TaskGetCommandRouterAccessResponse.newBuilder().setJwt(routerJwt).setUrl(ROUTER_URL).build());
                o.onCompleted();
            }
        }

        @Override
        public void sandboxGetCommandRouterAccess(ModalApi.SandboxGetCommandRouterAccessRequest r,
                                                  StreamObserver<ModalApi.SandboxGetCommandRouterAccessResponse> o) {
            if (record("SandboxGetCommandRouterAccess", r, o)) {
                o.onNext(ModalApi.SandboxGetCommandRouterAccessResponse.newBuilder().setJwt(routerJwt).setUrl(ROUTER_URL).build());
                o.onCompleted();
            }
        }

        @Override
        public void sandboxList(ModalApi.SandboxListRequest r, StreamObserver<ModalApi.SandboxListResponse> o) {
            if (record("SandboxList", r, o)) {
                list(r, o);
            }
        }

        @Override
        public void sandboxListV2(ModalApi.SandboxListRequest r, StreamObserver<ModalApi.SandboxListResponse> o) {
            if (record("SandboxListV2", r, o)) {
                list(r, o);
            }
        }

        private void list(ModalApi.SandboxListRequest r, StreamObserver<ModalApi.SandboxListResponse> o) {
            ModalApi.SandboxListResponse.Builder b = ModalApi.SandboxListResponse.newBuilder();
            sandboxes.values().stream()
                    .filter(s -> s.alive && (r.getBeforeTimestamp() == 0 || s.createdAt < r.getBeforeTimestamp()))
                    .filter(s -> r.getTagsList().stream().allMatch(t -> t.getTagValue().equals(s.tags.get(t.getTagName()))))
                    .sorted((a, c) -> Double.compare(c.createdAt, a.createdAt))
                    .forEach(s -> {
                        ModalApi.SandboxInfo.Builder i = ModalApi.SandboxInfo.newBuilder().setId(s.id).setCreatedAt(s.createdAt).setAppId(APP_ID);
                        s.tags.forEach((k, v) -> i.addTags(ModalApi.SandboxTag.newBuilder().setTagName(k).setTagValue(v)));
                        b.addSandboxes(i);
                    });
            o.onNext(b.build());
            o.onCompleted();
        }

        @Override
        public void sandboxTerminate(ModalApi.SandboxTerminateRequest r, StreamObserver<ModalApi.SandboxTerminateResponse> o) {
            if (record("SandboxTerminate", r, o)) {
                terminate(r, o);
            }
        }

        @Override
        public void sandboxTerminateV2(ModalApi.SandboxTerminateRequest r, StreamObserver<ModalApi.SandboxTerminateResponse> o) {
            if (record("SandboxTerminateV2", r, o)) {
                terminate(r, o);
            }
        }

        private void terminate(ModalApi.SandboxTerminateRequest r, StreamObserver<ModalApi.SandboxTerminateResponse> o) {
            Sbx s = sandboxes.get(r.getSandboxId());
            if (s == null) {
                o.onError(Status.NOT_FOUND.withDescription("no such sandbox").asRuntimeException());
                return;
            }
            s.alive = false;
            execs.values().forEach(e -> e.killed.countDown()); // every process of the sandbox ends
            o.onNext(ModalApi.SandboxTerminateResponse.getDefaultInstance());
            o.onCompleted();
        }
    }

    private final class Router extends TaskCommandRouterGrpc.TaskCommandRouterImplBase {
        @Override
        public void taskExecStart(ModalRouterApi.TaskExecStartRequest r, StreamObserver<ModalRouterApi.TaskExecStartResponse> o) {
            if (!record("TaskExecStart", r, o)) {
                return;
            }
            Exec e = new Exec(r.getTaskId(), List.copyOf(r.getCommandArgsList()), Map.copyOf(r.getEnvMap()));
            execs.put(r.getExecId(), e);
            if (e.isKillMarked()) {
                String name = e.argv.get(4);
                execs.values().stream().filter(x -> x.env.containsKey(name)).forEach(x -> x.killed.countDown());
            } else if (e.isKill()) {
                String marker = e.argv.get(5);
                execs.values().stream().filter(x -> marker.equals(x.env.get(e.argv.get(4)))).forEach(x -> x.killed.countDown());
                killArrived.countDown();
            }
            o.onNext(ModalRouterApi.TaskExecStartResponse.getDefaultInstance());
            o.onCompleted();
        }

        @Override
        public void taskExecStdioRead(ModalRouterApi.TaskExecStdioReadRequest r, StreamObserver<ModalRouterApi.TaskExecStdioReadResponse> o) {
            if (!record("TaskExecStdioRead", r, o)) {
                return;
            }
            ServerCallStreamObserver<ModalRouterApi.TaskExecStdioReadResponse> so =
                    (ServerCallStreamObserver<ModalRouterApi.TaskExecStdioReadResponse>) o;
            Exec e = execs.get(r.getExecId());
            boolean stdout = r.getFileDescriptor() == ModalRouterApi.TaskExecStdioFileDescriptor.TASK_EXEC_STDIO_FILE_DESCRIPTOR_STDOUT;
            if (stdout && script.endlessStdout) {
                byte[] chunk = new byte[64 * 1024];
                java.util.Arrays.fill(chunk, (byte) 'x');
                for (int i = 0; i < 100_000 && !so.isCancelled() && e.killed.getCount() > 0; i++) {
                    so.onNext(ModalRouterApi.TaskExecStdioReadResponse.newBuilder().setData(ByteString.copyFrom(chunk)).build());
                }
                so.onCompleted();
                return;
            }
            ByteArrayOutputStream all = new ByteArrayOutputStream();
            if (e.isProbe()) {
                all.writeBytes(stdout ? probeStdout.getBytes(StandardCharsets.UTF_8) : new byte[0]);
            } else if (e.isTool()) {
                all.writeBytes((byte[]) e.tool(files)[stdout ? 0 : 1]);
            } else {
                (stdout ? script.stdout : script.stderr).forEach(all::writeBytes);
            }
            byte[] bytes = all.toByteArray();
            int from = (int) Math.min(r.getOffset(), bytes.length);
            if (stdout && script.dropStdoutOnce && from == 0 && bytes.length > 1) {
                script.dropStdoutOnce = false;
                so.onNext(ModalRouterApi.TaskExecStdioReadResponse.newBuilder().setData(ByteString.copyFrom(bytes, 0, 3)).build());
                so.onError(Status.UNAVAILABLE.withDescription("stream reset").asRuntimeException());
                return;
            }
            if (from < bytes.length) {
                so.onNext(ModalRouterApi.TaskExecStdioReadResponse.newBuilder()
                        .setData(ByteString.copyFrom(bytes, from, bytes.length - from)).build());
            }
            if (script.hang) {
                await(e.killed, so);
            }
            if (!so.isCancelled()) {
                so.onCompleted();
            }
        }

        @Override
        public void taskExecWait(ModalRouterApi.TaskExecWaitRequest r, StreamObserver<ModalRouterApi.TaskExecWaitResponse> o) {
            if (!record("TaskExecWait", r, o)) {
                return;
            }
            ServerCallStreamObserver<ModalRouterApi.TaskExecWaitResponse> so = (ServerCallStreamObserver<ModalRouterApi.TaskExecWaitResponse>) o;
            Exec e = execs.get(r.getExecId());
            ModalRouterApi.TaskExecWaitResponse.Builder b = ModalRouterApi.TaskExecWaitResponse.newBuilder();
            if (e.isProbe()) {
                b.setCode(probeCode);
            } else if (e.isKillMarked()) {
                b.setCode(killMarkedCode);
            } else if (e.isKill()) {
                b.setCode(0);
            } else if (e.isTool()) {
                b.setCode((Integer) e.tool(files)[2]);
            } else if (e.isWrite()) {
                files.merge(e.argv.get(4), Base64.getDecoder().decode(e.argv.get(5)), (x, y) -> {
                    byte[] both = java.util.Arrays.copyOf(x, x.length + y.length);
                    System.arraycopy(y, 0, both, x.length, y.length);
                    return e.argv.get(2).contains(">>") ? both : y;
                });
                b.setCode(0);
            } else if (script.hang) {
                waitArrived.countDown();
                if (!await(e.killed, so)) {
                    return; // the client gave up on this long poll
                }
                b.setSignal(9);
            } else if (script.signal != null) {
                b.setSignal(script.signal);
            } else {
                b.setCode(script.code);
            }
            if (!so.isCancelled()) {
                so.onNext(b.build());
                so.onCompleted();
            }
        }

        @Override
        public void taskSetNetworkAccess(ModalRouterApi.TaskSetNetworkAccessRequest r,
                StreamObserver<ModalRouterApi.TaskSetNetworkAccessResponse> o) {
            if (!record("TaskSetNetworkAccess", r, o)) {
                return;
            }
            o.onNext(ModalRouterApi.TaskSetNetworkAccessResponse.getDefaultInstance());
            o.onCompleted();
        }

        /** Waits (bounded) for the latch; false when the call was cancelled first. */
        private boolean await(CountDownLatch latch, ServerCallStreamObserver<?> so) {
            long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            try {
                while (System.nanoTime() < end) {
                    if (latch.await(20, TimeUnit.MILLISECONDS)) {
                        return true;
                    }
                    if (so.isCancelled()) {
                        return false;
                    }
                }
            } catch (InterruptedException ie) {
                Thread.currentThread().interrupt();
            }
            return false;
        }
    }

    @Override
    public void close() {
        execs.values().forEach(e -> e.killed.countDown());
        server.shutdownNow();
        pool.shutdownNow();
    }
}
