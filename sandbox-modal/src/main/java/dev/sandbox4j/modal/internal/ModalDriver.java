package dev.sandbox4j.modal.internal;

import com.google.protobuf.ByteString;
import dev.sandbox4j.api.Execution;
import dev.sandbox4j.api.InputFile;
import dev.sandbox4j.api.SandboxConfigurationException;
import dev.sandbox4j.api.SandboxException;
import dev.sandbox4j.api.SandboxNotFoundException;
import dev.sandbox4j.api.spi.Backoff;
import dev.sandbox4j.api.spi.CreateRequest;
import dev.sandbox4j.api.spi.ExecOutcome;
import dev.sandbox4j.api.spi.Labelled;
import dev.sandbox4j.api.spi.OutputSink;
import dev.sandbox4j.api.spi.SandboxDriver;
import dev.sandbox4j.api.spi.Secret;
import dev.sandbox4j.modal.internal.proto.ModalApi;
import dev.sandbox4j.modal.internal.proto.ModalClientGrpc;
import dev.sandbox4j.modal.internal.proto.ModalRouterApi;
import dev.sandbox4j.modal.internal.proto.TaskCommandRouterGrpc;
import dev.sandbox4j.policy.Capabilities;
import dev.sandbox4j.policy.UnsupportedPolicyException;
import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientInterceptors;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.MetadataUtils;
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
 * Modal on the wire: the control plane ({@code modal.client.ModalClient}: app, environment and image
 * lookups once per runner; {@code SandboxCreateV2} or {@code SandboxCreate}; {@code SandboxListV2} /
 * {@code SandboxList} by tag; {@code SandboxTerminateV2} / {@code SandboxTerminate}) and the per-task
 * command router ({@code modal.task_command_router.TaskCommandRouter}: {@code TaskExecStart}, two
 * concurrent {@code TaskExecStdioRead} streams, {@code TaskExecWait}). The lifecycle around it is {@link dev.sandbox4j.api.spi.ManagedSandboxRunner}'s.
 *
 * <p>The router has no kill for one exec. Every exec carries a marker variable
 * ({@code SANDBOX4J_EXEC_ID=<exec id>}); to stop one at the hard output cap or the client deadline,
 * a second exec sends SIGKILL to every process whose environment holds that marker (the command and
 * the children that inherited it). The sandbox survives for the next exec of a session. The
 * per-exec {@code timeout_secs} (the budget, rounded up) is Modal's own kill as well.
 */
public final class ModalDriver implements SandboxDriver<ModalHandle> {
    private static final Logger log = LoggerFactory.getLogger(ModalDriver.class);
    static final String PROVIDER = ModalPolicy.RUNNER;
    static final String EXEC_MARKER = "SANDBOX4J_EXEC_ID";
    /** Keeps the sandbox up between execs whatever the image's CMD (python:*-slim's is python3). */
    static final List<String> ENTRYPOINT = List.of("sleep", "infinity");
    /** Fixed scripts: paths and ids go as arguments, never into the script text. */
    static final String WRITE_SCRIPT = "mkdir -p -- \"$(dirname -- \"$1\")\" && printf '%s' \"$2\" | base64 -d > \"$1\"";
    static final String APPEND_SCRIPT = "printf '%s' \"$2\" | base64 -d >> \"$1\"";
    static final String KILL_SCRIPT = "for d in /proc/[0-9]*; do"
            + " if tr '\\000' '\\n' < \"$d/environ\" 2>/dev/null | grep -qxF -- \"$1=$2\"; then"
            + " kill -KILL \"${d#/proc/}\" 2>/dev/null; fi; done; exit 0";
    static final Metadata.Key<String> AUTHORIZATION = Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER);
    /** The JS SDK refuses, and routers may refuse, command args totalling more than this. */
    static final int MAX_ARGS_BYTES = 65_536;
    /** Raw bytes per file chunk: under 44 KiB once in base64, so a chunk's whole argv stays under MAX_ARGS_BYTES. */
    static final int FILE_CHUNK = 32 * 1024;
    static final int STREAM_RETRIES = 10;
    static final Duration WAIT_CALL = Duration.ofSeconds(60);
    static final Duration KILL_DEADLINE = Duration.ofSeconds(10);
    static final int LIST_PAGES = 100;
    private static final Set<Status.Code> NEVER_STARTED = Set.of(Status.Code.INVALID_ARGUMENT,
            Status.Code.FAILED_PRECONDITION, Status.Code.NOT_FOUND, Status.Code.PERMISSION_DENIED,
            Status.Code.UNAUTHENTICATED, Status.Code.ALREADY_EXISTS, Status.Code.UNIMPLEMENTED,
            Status.Code.OUT_OF_RANGE);
    private static final SecureRandom RANDOM = new SecureRandom();

    private final ModalSettings settings;
    private final ModalRpc rpc;
    private final Capabilities capabilities = ModalPolicy.capabilities();
    private final Backoff streamBackoff;
    private final ExecutorService io;
    private final AtomicInteger routerCalls = new AtomicInteger();
    private final Object lookups = new Object();
    private volatile String appId;
    private volatile String imageId;

    public ModalDriver(ModalSettings settings) {
        this.settings = settings;
        this.rpc = new ModalRpc(settings);
        // the JS SDK resumes a dropped stdio stream after 10 ms, doubling
        this.streamBackoff = settings.backoff.toBuilder().base(Duration.ofMillis(10)).max(Duration.ofSeconds(1)).build();
        AtomicInteger n = new AtomicInteger();
        this.io = Executors.newCachedThreadPool(r -> {
            Thread t = new Thread(r, "sandbox4j-modal-io-" + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        });
    }

    @Override
    public String provider() {
        return PROVIDER;
    }

    @Override
    public Capabilities capabilities() {
        return capabilities;
    }

    /** The RPCs sent so far, control plane and routers, every retry counted. */
    public int rpcCount() {
        return rpc.callCount() + routerCalls.get();
    }

    @Override
    public Duration createDeadline() {
        return settings.sandboxV2 ? settings.requestTimeout : settings.requestTimeout.plus(settings.scheduleTimeout);
    }

    // ---------------------------------------------------------------- per-runner lookups

    /** {@code AppGetOrCreate} once per runner. */
    String appId() throws InterruptedException {
        String a = appId;
        if (a != null) {
            return a;
        }
        synchronized (lookups) {
            if (appId == null) {
                ModalApi.AppGetOrCreateRequest req = ModalApi.AppGetOrCreateRequest.newBuilder()
                        .setAppName(settings.appName)
                        .setEnvironmentName(settings.environment)
                        .setObjectCreationType(ModalApi.ObjectCreationType.OBJECT_CREATION_TYPE_CREATE_IF_MISSING)
                        .build();
                String id = rpc.unary(ModalClientGrpc.getAppGetOrCreateMethod(), req, true).getAppId();
                if (id.isEmpty()) {
                    throw SandboxException.builder("modal: AppGetOrCreate answered without an app id")
                            .provider(PROVIDER).retriable(true).build();
                }
                appId = id;
            }
            return appId;
        }
    }

    /** The image, built once per runner: {@code EnvironmentGetOrCreate} (unless the builder version is set), then one {@code ImageGetOrCreate} per layer. */
    String imageId() throws InterruptedException {
        String i = imageId;
        if (i != null) {
            return i;
        }
        String app = appId();
        synchronized (lookups) {
            if (imageId == null) {
                String builder = settings.imageBuilderVersion;
                if (builder == null) {
                    ModalApi.EnvironmentGetOrCreateRequest req = ModalApi.EnvironmentGetOrCreateRequest.newBuilder()
                            .setDeploymentName(settings.environment).build();
                    builder = rpc.unary(ModalClientGrpc.getEnvironmentGetOrCreateMethod(), req, true)
                            .getMetadata().getSettings().getImageBuilderVersion();
                }
                String id = buildLayer(app, builder, List.of("FROM " + settings.imageRef), null);
                if (!settings.dockerfileCommands.isEmpty()) {
                    List<String> commands = new ArrayList<>();
                    commands.add("FROM base");
                    commands.addAll(settings.dockerfileCommands);
                    id = buildLayer(app, builder, commands, id);
                }
                imageId = id;
            }
            return imageId;
        }
    }

    private String buildLayer(String app, String builder, List<String> commands, String base) throws InterruptedException {
        ModalApi.Image.Builder image = ModalApi.Image.newBuilder().addAllDockerfileCommands(commands);
        if (base != null) {
            image.addBaseImages(ModalApi.BaseImage.newBuilder().setImageId(base).setDockerTag("base"));
        }
        ModalApi.ImageGetOrCreateRequest req = ModalApi.ImageGetOrCreateRequest.newBuilder()
                .setImage(image).setAppId(app).setBuilderVersion(builder == null ? "" : builder).build();
        // get-or-create by content: repeating it builds nothing twice
        ModalApi.ImageGetOrCreateResponse created = rpc.unary(ModalClientGrpc.getImageGetOrCreateMethod(), req, true);
        String id = created.getImageId();
        if (id.isEmpty()) {
            throw SandboxException.builder("modal: ImageGetOrCreate answered without an image id")
                    .provider(PROVIDER).retriable(true).build();
        }
        ModalApi.GenericResult result = created.hasResult() ? created.getResult() : null;
        String lastEntry = "";
        long deadline = System.nanoTime() + settings.imageBuildTimeout.toNanos();
        int retries = 0;
        while (result == null || result.getStatus() == ModalApi.GenericResult.GenericStatus.GENERIC_STATUS_UNSPECIFIED) {
            long remaining = deadline - System.nanoTime();
            if (remaining <= 0) {
                throw SandboxException.builder("modal: image " + id + " did not finish building within "
                        + settings.imageBuildTimeout).provider(PROVIDER).retriable(true).build();
            }
            ModalApi.ImageJoinStreamingRequest join = ModalApi.ImageJoinStreamingRequest.newBuilder()
                    .setImageId(id).setTimeout(55).setLastEntryId(lastEntry).build();
            // the server holds the stream up to its 55 s timeout; leave it room before ours
            Duration callDeadline = Duration.ofNanos(Math.min(remaining, Duration.ofSeconds(65).toNanos()));
            try {
                Iterator<ModalApi.ImageJoinStreamingResponse> it =
                        rpc.serverStream(ModalClientGrpc.getImageJoinStreamingMethod(), join, callDeadline);
                while (it.hasNext()) {
                    ModalApi.ImageJoinStreamingResponse r = it.next();
                    if (!r.getEntryId().isEmpty()) {
                        lastEntry = r.getEntryId();
                    }
                    if (r.hasResult() && r.getResult().getStatus() != ModalApi.GenericResult.GenericStatus.GENERIC_STATUS_UNSPECIFIED) {
                        result = r.getResult();
                    }
                }
            } catch (StatusRuntimeException e) {
                ModalRpc.rethrowInterrupt(e);
                if (ModalRpc.RETRIABLE.contains(e.getStatus().getCode()) && retries++ < STREAM_RETRIES) {
                    settings.backoff.sleep(settings.backoff.delay(retries));
                    continue;
                }
                throw rpc.map(e, "modal: ImageJoinStreaming for image " + id, false);
            }
        }
        if (result.getStatus() != ModalApi.GenericResult.GenericStatus.GENERIC_STATUS_SUCCESS) {
            throw new SandboxConfigurationException(SandboxException.builder(ModalRpc.limit(rpc.redact(
                            "modal: image " + id + " (" + String.join("; ", commands) + ") failed to build: "
                                    + result.getStatus() + (result.getException().isEmpty() ? "" : ": " + result.getException()))))
                    .provider(PROVIDER).providerCode(result.getStatus().name()));
        }
        return id;
    }

    // ---------------------------------------------------------------- create, find, destroy

    @Override
    public ModalHandle create(CreateRequest request) throws InterruptedException {
        // translated first: a policy Modal cannot express is refused before any call
        ModalApi.NetworkAccess network = ModalPolicy.networkAccess(request.initialEgress());
        ModalApi.Sandbox.Builder def = ModalApi.Sandbox.newBuilder()
                .addAllEntrypointArgs(ENTRYPOINT)
                .setTimeoutSecs(ModalPolicy.seconds(request.lifetime()))
                .setNetworkAccess(network);
        ModalApi.Resources resources = ModalPolicy.resources(request.spec().limits());
        if (resources != null) {
            def.setResources(resources);
        }
        if (settings.runtime != null) {
            def.setRuntime(settings.runtime);
        }
        if (settings.workdir != null) {
            def.setWorkdir(settings.workdir);
        }
        String app = appId();
        def.setImageId(imageId());
        List<ModalApi.SandboxTag> tags = new ArrayList<>();
        request.labels().forEach((k, v) -> tags.add(ModalApi.SandboxTag.newBuilder().setTagName(k).setTagValue(v).build()));
        Map<String, String> env = request.spec().env();
        return settings.sandboxV2 ? createV2(app, def.build(), tags, env) : createV1(app, def.build(), tags, env);
    }

    private ModalHandle createV2(String app, ModalApi.Sandbox def, List<ModalApi.SandboxTag> tags, Map<String, String> env)
            throws InterruptedException {
        ModalApi.SandboxCreateV2Request req = ModalApi.SandboxCreateV2Request.newBuilder()
                .setAppId(app).setDefinition(def).addAllTags(tags).build();
        ModalApi.SandboxCreateV2Response r;
        try {
            // never retried: whether the server deduplicates a repeated create is not known
            r = rpc.unary(ModalClientGrpc.getSandboxCreateV2Method(), req, false);
        } catch (SandboxException e) {
            throw createError(e);
        }
        String id = r.getSandboxId();
        if (id.isEmpty() || r.getTaskId().isEmpty() || !r.hasCommandRouterAccess()
                || r.getCommandRouterAccess().getUrl().isEmpty() || r.getCommandRouterAccess().getJwt().isEmpty()) {
            // a sandbox may exist that we cannot use: the lifecycle finds it by tag and terminates it
            throw SandboxException.builder("modal: SandboxCreateV2 answered without "
                            + (id.isEmpty() ? "a sandbox id" : "a task id or command router access for sandbox " + id))
                    .provider(PROVIDER).requestMayHaveSucceeded(true).retriable(true).build();
        }
        log.debug("modal sandbox {} created (V2, task {})", id, r.getTaskId());
        return new ModalHandle(id, true, r.getTaskId(), r.getCommandRouterAccess().getUrl(),
                Secret.of(r.getCommandRouterAccess().getJwt()), env);
    }

    private ModalHandle createV1(String app, ModalApi.Sandbox def, List<ModalApi.SandboxTag> tags, Map<String, String> env)
            throws InterruptedException {
        ModalApi.SandboxCreateRequest req = ModalApi.SandboxCreateRequest.newBuilder()
                .setAppId(app).setDefinition(def).addAllTags(tags).build();
        String id;
        try {
            id = rpc.unary(ModalClientGrpc.getSandboxCreateMethod(), req, false).getSandboxId();
        } catch (SandboxException e) {
            throw createError(e);
        }
        if (id.isEmpty()) {
            throw SandboxException.builder("modal: SandboxCreate answered without a sandbox id")
                    .provider(PROVIDER).requestMayHaveSucceeded(true).retriable(true).build();
        }
        boolean ok = false;
        try {
            String task = waitForTask(id);
            ModalApi.TaskGetCommandRouterAccessResponse access = rpc.unary(ModalClientGrpc.getTaskGetCommandRouterAccessMethod(),
                    ModalApi.TaskGetCommandRouterAccessRequest.newBuilder().setTaskId(task).build(), true);
            if (access.getUrl().isEmpty() || access.getJwt().isEmpty()) {
                throw SandboxException.builder("modal: TaskGetCommandRouterAccess answered without a URL or JWT for sandbox " + id)
                        .provider(PROVIDER).retriable(true).build();
            }
            ok = true;
            log.debug("modal sandbox {} created (V1, task {})", id, task);
            return new ModalHandle(id, false, task, access.getUrl(), Secret.of(access.getJwt()), env);
        } catch (SandboxException e) {
            // no sandbox may start later unseen: terminate it here, and the lifecycle confirms by tag
            throw e.toBuilder().requestMayHaveSucceeded(true).build();
        } finally {
            if (!ok) {
                terminateQuietly(ModalHandle.found(id));
            }
        }
    }

    /** {@code SandboxGetTaskId} every 500 ms until the sandbox is scheduled, as the JS SDK polls. */
    private String waitForTask(String id) throws InterruptedException {
        long deadline = System.nanoTime() + settings.scheduleTimeout.toNanos();
        while (true) {
            ModalApi.SandboxGetTaskIdResponse r = rpc.unary(ModalClientGrpc.getSandboxGetTaskIdMethod(),
                    ModalApi.SandboxGetTaskIdRequest.newBuilder().setSandboxId(id).build(), true);
            if (r.hasTaskResult() && r.getTaskResult().getStatus() != ModalApi.GenericResult.GenericStatus.GENERIC_STATUS_UNSPECIFIED) {
                throw SandboxException.builder(ModalRpc.limit(rpc.redact("modal: sandbox " + id + " ended before it was scheduled: "
                        + r.getTaskResult().getStatus() + " " + r.getTaskResult().getException())))
                        .provider(PROVIDER).retriable(true).build();
            }
            if (r.hasTaskId() && !r.getTaskId().isEmpty()) {
                return r.getTaskId();
            }
            if (System.nanoTime() >= deadline) {
                throw SandboxException.builder("modal: sandbox " + id + " was not scheduled within " + settings.scheduleTimeout)
                        .provider(PROVIDER).retriable(true).build();
            }
            settings.backoff.sleep(Duration.ofMillis(500));
        }
    }

    private void terminateQuietly(ModalHandle h) {
        boolean interrupted = Thread.interrupted(); // the terminate must go out even on an interrupt
        try {
            destroy(h);
        } catch (InterruptedException e) {
            interrupted = true;
        } catch (RuntimeException e) {
            log.debug("modal: could not terminate sandbox {} after a failed create: {}", h.id(), e.getMessage());
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private SandboxException createError(SandboxException e) {
        String code = e.providerCode().orElse("");
        String m = e.getMessage() == null ? "" : e.getMessage().toLowerCase(Locale.ROOT);
        if ((code.equals("INVALID_ARGUMENT") || code.equals("FAILED_PRECONDITION"))
                && (m.contains("network") || m.contains("cidr") || m.contains("domain") || m.contains("allowlist"))) {
            throw new UnsupportedPolicyException(PROVIDER, List.of("Modal refused the egress policy: " + e.getMessage()));
        }
        return e;
    }

    @Override
    public List<ModalHandle> findByRunId(String runId) throws InterruptedException {
        List<ModalHandle> out = new ArrayList<>();
        for (ModalApi.SandboxInfo info : list(Map.of(CreateRequest.RUN_ID_LABEL, runId))) {
            // check the tag ourselves: a server that ignored the filter must not get others killed
            if (runId.equals(tags(info).get(CreateRequest.RUN_ID_LABEL))) {
                out.add(ModalHandle.found(info.getId()));
            }
        }
        return out;
    }

    @Override
    public List<Labelled<ModalHandle>> listLabelled(String owner) throws InterruptedException {
        List<Labelled<ModalHandle>> out = new ArrayList<>();
        Map<String, String> filter = owner == null ? Map.of() : Map.of(CreateRequest.OWNER_LABEL, owner);
        for (ModalApi.SandboxInfo info : list(filter)) {
            Map<String, String> tags = tags(info);
            if (tags.containsKey(CreateRequest.RUN_ID_LABEL) && (owner == null || owner.equals(tags.get(CreateRequest.OWNER_LABEL)))) {
                out.add(new Labelled<>(ModalHandle.found(info.getId()), tags));
            }
        }
        return out;
    }

    private static Map<String, String> tags(ModalApi.SandboxInfo info) {
        Map<String, String> m = new LinkedHashMap<>();
        info.getTagsList().forEach(t -> m.put(t.getTagName(), t.getTagValue()));
        return m;
    }

    /**
     * Running sandboxes of this runner's app carrying at least {@code tags}, as the Python SDK's
     * {@code Sandbox.list(app_id=..., tags=...)} asks: {@code SandboxListV2} (which lists V1 and V2
     * sandboxes) or {@code SandboxList}, paged by {@code before_timestamp}.
     */
    private List<ModalApi.SandboxInfo> list(Map<String, String> tags) throws InterruptedException {
        String app = appId();
        MethodDescriptor<ModalApi.SandboxListRequest, ModalApi.SandboxListResponse> method = settings.sandboxV2
                ? ModalClientGrpc.getSandboxListV2Method() : ModalClientGrpc.getSandboxListMethod();
        List<ModalApi.SandboxInfo> out = new ArrayList<>();
        double before = 0;
        for (int page = 0; page < LIST_PAGES; page++) {
            ModalApi.SandboxListRequest.Builder req = ModalApi.SandboxListRequest.newBuilder()
                    .setAppId(app).setIncludeFinished(false).setBeforeTimestamp(before);
            if (!settings.sandboxV2) {
                req.setEnvironmentName(settings.environment);
            }
            tags.forEach((k, v) -> req.addTags(ModalApi.SandboxTag.newBuilder().setTagName(k).setTagValue(v)));
            List<ModalApi.SandboxInfo> batch = rpc.unary(method, req.build(), true).getSandboxesList();
            if (batch.isEmpty()) {
                break;
            }
            out.addAll(batch);
            double last = batch.get(batch.size() - 1).getCreatedAt();
            if (before != 0 && last >= before) {
                break; // a server that does not page would loop forever
            }
            before = last;
        }
        return out;
    }

    @Override
    public boolean destroy(ModalHandle sandbox) throws InterruptedException {
        ModalApi.SandboxTerminateRequest req = ModalApi.SandboxTerminateRequest.newBuilder().setSandboxId(sandbox.id()).build();
        try {
            // not retried here: the lifecycle retries on its own teardown deadline
            rpc.unary(sandbox.v2() ? ModalClientGrpc.getSandboxTerminateV2Method() : ModalClientGrpc.getSandboxTerminateMethod(),
                    req, false);
        } catch (SandboxNotFoundException e) {
            sandbox.release();
            return false;
        }
        sandbox.release();
        return true;
    }

    @Override
    public void release(ModalHandle sandbox) {
        sandbox.release();
    }

    // ---------------------------------------------------------------- router

    private Channel router(ModalHandle h) {
        ManagedChannel ch = h.router(this::openRouter);
        Metadata md = new Metadata();
        md.put(AUTHORIZATION, "Bearer " + h.routerJwt().reveal());
        return ClientInterceptors.intercept(ch, MetadataUtils.newAttachHeadersInterceptor(md));
    }

    private ManagedChannel openRouter(String url) {
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
        return ModalRpc.open(settings, u.getHost(), u.getPort() > 0 ? u.getPort() : 443);
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

    @Override
    public void writeFiles(ModalHandle sandbox, List<InputFile> files) throws InterruptedException {
        for (InputFile f : files) {
            writeFile(sandbox, f.path(), f.content());
        }
    }

    /**
     * Writes a file with fixed scripts, the path and the content (base64, 48 KiB a chunk) as
     * arguments: {@code sh -c WRITE_SCRIPT sh PATH CHUNK}, then {@code APPEND_SCRIPT} for the rest.
     * Two RPCs a chunk (start, wait). Arguments rather than {@code TaskExecStdinWrite}, which not
     * every router implementation serves.
     */
    void writeFile(ModalHandle h, String path, byte[] content) throws InterruptedException {
        String what = "modal: writing " + path + " in sandbox " + h.id();
        int off = 0;
        do {
            int n = Math.min(FILE_CHUNK, content.length - off);
            String chunk = java.util.Base64.getEncoder().encodeToString(java.util.Arrays.copyOfRange(content, off, off + n));
            String execId = UUID.randomUUID().toString();
            ModalRouterApi.TaskExecStartRequest.Builder start = ModalRouterApi.TaskExecStartRequest.newBuilder()
                    .setTaskId(h.taskId()).setExecId(execId)
                    .addAllCommandArgs(List.of("/bin/sh", "-c", off == 0 ? WRITE_SCRIPT : APPEND_SCRIPT, "sh", path, chunk))
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

    @Override
    public ExecOutcome exec(ModalHandle sandbox, Execution execution, OutputSink sink) throws InterruptedException {
        return run(sandbox, command(sandbox, execution), execution.budget(), sink);
    }

    /** argv for the interpreter; code with a NUL or longer than the argv limit goes by file. */
    private List<String> command(ModalHandle h, Execution execution) throws InterruptedException {
        String bin;
        String flag;
        String ext;
        switch (execution.language()) {
            case JAVASCRIPT:
                bin = "node";
                flag = "-e";
                ext = ".js";
                break;
            case BASH:
                bin = "bash";
                flag = "-c";
                ext = ".sh";
                break;
            default:
                bin = "python3";
                flag = "-c";
                ext = ".py";
        }
        String code = execution.code();
        byte[] bytes = code.getBytes(StandardCharsets.UTF_8);
        if (code.indexOf('\0') < 0 && bytes.length <= settings.argvLimitBytes
                && bytes.length + bin.length() + flag.length() + 2 <= MAX_ARGS_BYTES) {
            return List.of(bin, flag, code);
        }
        // relative: the working directory outlives one exec where /tmp may not (a tmpfs per command)
        String path = ".sandbox4j/code-" + Long.toUnsignedString(RANDOM.nextLong(), 36) + ext;
        writeFile(h, path, bytes);
        return List.of(bin, path);
    }

    private ExecOutcome run(ModalHandle h, List<String> argv, Duration budget, OutputSink sink) throws InterruptedException {
        String execId = UUID.randomUUID().toString();
        Map<String, String> env = new LinkedHashMap<>(h.env());
        env.put(EXEC_MARKER, execId);
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
                .addAllCommandArgs(List.of("/bin/sh", "-c", KILL_SCRIPT, "sh", EXEC_MARKER, execId))
                .setTimeoutSecs((int) KILL_DEADLINE.getSeconds())
                .build();
        try {
            routerUnary(h, TaskCommandRouterGrpc.getTaskExecStartMethod(), req, KILL_DEADLINE);
            routerUnary(h, TaskCommandRouterGrpc.getTaskExecWaitMethod(),
                    ModalRouterApi.TaskExecWaitRequest.newBuilder().setTaskId(h.taskId()).setExecId(killId).build(), KILL_DEADLINE);
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
                    if (ModalRpc.RETRIABLE.contains(code) && retries < STREAM_RETRIES) {
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
                            Duration.ofNanos(Math.min(remaining, WAIT_CALL.toNanos())));
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
                    if (ModalRpc.RETRIABLE.contains(code) && retries < STREAM_RETRIES) {
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

    @Override
    public void close() {
        io.shutdownNow();
        rpc.close();
    }

    @Override
    public String toString() {
        return "ModalDriver[" + settings + "]";
    }
}
