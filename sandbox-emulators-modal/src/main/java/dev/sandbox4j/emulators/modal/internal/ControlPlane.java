package dev.sandbox4j.emulators.modal.internal;

import com.google.protobuf.Any;
import dev.sandbox4j.emulators.Faults;
import dev.sandbox4j.emulators.Ledger;
import dev.sandbox4j.emulators.InstantMachine;
import dev.sandbox4j.emulators.LocalMachine;
import dev.sandbox4j.emulators.Machine;
import dev.sandbox4j.emulators.ShellWords;
import dev.sandbox4j.emulators.modal.internal.proto.ModalApi;
import dev.sandbox4j.emulators.modal.internal.proto.ModalApi.GenericResult.GenericStatus;
import dev.sandbox4j.emulators.modal.internal.proto.ModalClientGrpc;
import dev.sandbox4j.local.LocalSandboxRunner;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.StreamObserver;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * The control plane, {@code modal.client.ModalClient}: apps, environments, images, secrets and the
 * sandbox lifecycle in both families (V1: create, then task id, then router access; V2: create answers
 * with the task and router access). Written from {@code /work/shared/providers/modal.md} sections 3 and
 * 9 and the upstream protos, not from any adapter.
 */
public final class ControlPlane extends ModalClientGrpc.ModalClientImplBase {
    /** Modal's documented maximum sandbox lifetime (24 h) and the SDK's default when none is sent. */
    static final int MAX_TIMEOUT_SECS = 24 * 3600;
    static final int DEFAULT_TIMEOUT_SECS = 300;
    private static final Set<String> RUNTIMES = Set.of("gvisor", "runc", "vm");
    private static final double LONG_POLL_CAP_SECS = 55;

    private final String tokenId;
    private final Jwts jwts;
    private final LocalSandboxRunner runner;
    private final Ledger ledger;
    private final Faults faults;
    private final Supplier<String> routerUrl;
    private final List<String> canaryTargets;
    private final ScheduledExecutorService timers;
    private final int outputLimit;
    private final Fired fired = new Fired();
    private final int unscheduledPolls;

    private final Map<String, String> apps = new ConcurrentHashMap<>(); // env/name -> app id
    private final Set<String> appIds = ConcurrentHashMap.newKeySet();
    private final Map<String, String> imagesByRecipe = new ConcurrentHashMap<>();
    private final Map<String, Boolean> imagesBuilt = new ConcurrentHashMap<>();
    private final Map<String, Map<String, String>> secrets = new ConcurrentHashMap<>();
    private final Map<String, String> namedSecrets = new ConcurrentHashMap<>();
    private final Map<String, EmulatedSandbox> sandboxes = new ConcurrentHashMap<>();
    private final Map<String, EmulatedSandbox> tasks = new ConcurrentHashMap<>();
    private final Map<String, Object> createsByKey = new ConcurrentHashMap<>();
    private final Object clockLock = new Object();
    private double lastCreatedAt;

    public ControlPlane(String tokenId, Jwts jwts, LocalSandboxRunner runner, Ledger ledger, Faults faults,
            Supplier<String> routerUrl, List<String> canaryTargets, ScheduledExecutorService timers, int outputLimit,
            int unscheduledPolls) {
        this.unscheduledPolls = unscheduledPolls;
        this.tokenId = tokenId;
        this.jwts = jwts;
        this.runner = runner;
        this.ledger = ledger;
        this.faults = faults;
        this.routerUrl = routerUrl;
        this.canaryTargets = List.copyOf(canaryTargets);
        this.timers = timers;
        this.outputLimit = outputLimit;
    }

    // ---- lookups and objects -------------------------------------------------------------------------

    @Override
    public void authTokenGet(ModalApi.AuthTokenGetRequest req, StreamObserver<ModalApi.AuthTokenGetResponse> out) {
        unary(out, () -> ModalApi.AuthTokenGetResponse.newBuilder().setToken(jwts.mint("control", tokenId, 20 * 60)).build());
    }

    @Override
    public void appGetOrCreate(ModalApi.AppGetOrCreateRequest req, StreamObserver<ModalApi.AppGetOrCreateResponse> out) {
        unary(out, () -> {
            if (req.getAppName().isEmpty()) {
                throw invalid("app_name is required");
            }
            String key = envName(req.getEnvironmentName()) + "/" + req.getAppName();
            String id;
            switch (req.getObjectCreationType()) {
                case OBJECT_CREATION_TYPE_UNSPECIFIED:
                    id = apps.get(key);
                    if (id == null) {
                        throw Status.NOT_FOUND.withDescription("App '" + req.getAppName() + "' not found").asRuntimeException();
                    }
                    break;
                case OBJECT_CREATION_TYPE_CREATE_IF_MISSING:
                    id = apps.computeIfAbsent(key, k -> newApp());
                    break;
                case OBJECT_CREATION_TYPE_CREATE_FAIL_IF_EXISTS:
                    if (apps.containsKey(key)) {
                        throw Status.ALREADY_EXISTS.withDescription("App '" + req.getAppName() + "' exists").asRuntimeException();
                    }
                    id = apps.computeIfAbsent(key, k -> newApp());
                    break;
                default:
                    id = newApp(); // ephemeral and anonymous apps are not found by name
            }
            return ModalApi.AppGetOrCreateResponse.newBuilder().setAppId(id).build();
        });
    }

    private String newApp() {
        String id = Ids.make("ap");
        appIds.add(id);
        return id;
    }

    @Override
    public void environmentGetOrCreate(ModalApi.EnvironmentGetOrCreateRequest req,
            StreamObserver<ModalApi.EnvironmentGetOrCreateResponse> out) {
        unary(out, () -> ModalApi.EnvironmentGetOrCreateResponse.newBuilder()
                .setEnvironmentId("en-" + envName(req.getDeploymentName()))
                .setMetadata(ModalApi.EnvironmentMetadata.newBuilder().setName(envName(req.getDeploymentName()))
                        .setSettings(ModalApi.EnvironmentSettings.newBuilder().setImageBuilderVersion("2025.06")
                                .setWebhookSuffix("modal.run")))
                .build());
    }

    private static String envName(String name) {
        return name.isEmpty() ? "main" : name;
    }

    /**
     * Images are recipes only: code runs on the local runner's host tools whatever the image says. A new
     * recipe answers with no result, so the client must wait on {@code ImageJoinStreaming} as for a real
     * build; a known one answers SUCCESS at once (the cached path).
     */
    @Override
    public void imageGetOrCreate(ModalApi.ImageGetOrCreateRequest req, StreamObserver<ModalApi.ImageGetOrCreateResponse> out) {
        unary(out, () -> {
            if (!appIds.contains(req.getAppId())) {
                throw Status.NOT_FOUND.withDescription("App " + req.getAppId() + " not found").asRuntimeException();
            }
            List<String> commands = req.getImage().getDockerfileCommandsList();
            if (commands.isEmpty() || !commands.get(0).startsWith("FROM ")) {
                throw invalid("image.dockerfile_commands must start with a FROM line");
            }
            for (ModalApi.BaseImage base : req.getImage().getBaseImagesList()) {
                if (!Boolean.TRUE.equals(imagesBuilt.get(base.getImageId()))) {
                    throw Status.NOT_FOUND.withDescription("base image " + base.getImageId() + " not found").asRuntimeException();
                }
            }
            String recipe = req.getBuilderVersion() + "\n" + req.getImage().getBaseImagesList() + "\n" + String.join("\n", commands);
            String existing = imagesByRecipe.get(recipe);
            if (existing != null && !req.getForceBuild() && Boolean.TRUE.equals(imagesBuilt.get(existing))) {
                return ModalApi.ImageGetOrCreateResponse.newBuilder().setImageId(existing)
                        .setResult(ModalApi.GenericResult.newBuilder().setStatus(GenericStatus.GENERIC_STATUS_SUCCESS)).build();
            }
            String id = Ids.make("im");
            imagesBuilt.put(id, false);
            imagesByRecipe.put(recipe, id);
            return ModalApi.ImageGetOrCreateResponse.newBuilder().setImageId(id).build();
        });
    }

    @Override
    public void imageJoinStreaming(ModalApi.ImageJoinStreamingRequest req, StreamObserver<ModalApi.ImageJoinStreamingResponse> out) {
        if (!imagesBuilt.containsKey(req.getImageId())) {
            out.onError(Status.NOT_FOUND.withDescription("Image " + req.getImageId() + " not found").asRuntimeException());
            return;
        }
        imagesBuilt.put(req.getImageId(), true);
        out.onNext(ModalApi.ImageJoinStreamingResponse.newBuilder()
                .setResult(ModalApi.GenericResult.newBuilder().setStatus(GenericStatus.GENERIC_STATUS_SUCCESS))
                .setEntryId("1-0").setEof(true).build());
        out.onCompleted();
    }

    @Override
    public void secretGetOrCreate(ModalApi.SecretGetOrCreateRequest req, StreamObserver<ModalApi.SecretGetOrCreateResponse> out) {
        unary(out, () -> {
            for (String name : req.getEnvDictMap().keySet()) {
                if (!ShellWords.validEnvName(name)) {
                    throw invalid("invalid environment variable name '" + name + "'");
                }
            }
            String id;
            if (req.getObjectCreationType() == ModalApi.ObjectCreationType.OBJECT_CREATION_TYPE_EPHEMERAL
                    || req.getDeploymentName().isEmpty()) {
                id = Ids.make("st");
                secrets.put(id, Map.copyOf(req.getEnvDictMap()));
            } else {
                String key = envName(req.getEnvironmentName()) + "/" + req.getDeploymentName();
                id = namedSecrets.get(key);
                if (id == null) {
                    if (req.getObjectCreationType() == ModalApi.ObjectCreationType.OBJECT_CREATION_TYPE_UNSPECIFIED) {
                        throw Status.NOT_FOUND.withDescription("Secret '" + req.getDeploymentName() + "' not found").asRuntimeException();
                    }
                    id = Ids.make("st");
                    secrets.put(id, Map.copyOf(req.getEnvDictMap()));
                    namedSecrets.put(key, id);
                }
                for (String k : req.getRequiredKeysList()) {
                    if (!secrets.get(id).containsKey(k)) {
                        throw Status.NOT_FOUND.withDescription("Secret is missing key " + k).asRuntimeException();
                    }
                }
            }
            return ModalApi.SecretGetOrCreateResponse.newBuilder().setSecretId(id).build();
        });
    }

    /** The environment of secrets and secret sources, in order (a later source wins). */
    Map<String, String> resolveSecrets(List<String> secretIds, List<ModalApi.SecretSource> sources) {
        Map<String, String> env = new LinkedHashMap<>();
        for (String id : secretIds) {
            Map<String, String> s = secrets.get(id);
            if (s == null) {
                throw Status.NOT_FOUND.withDescription("Secret " + id + " not found").asRuntimeException();
            }
            env.putAll(s);
        }
        for (ModalApi.SecretSource src : sources) {
            if (src.hasSecretId()) {
                env.putAll(resolveSecrets(List.of(src.getSecretId()), List.of()));
            }
            if (src.hasEnv()) {
                env.putAll(src.getEnv().getContentsMap());
            }
        }
        for (String name : env.keySet()) {
            if (!ShellWords.validEnvName(name)) {
                throw invalid("invalid environment variable name '" + name + "'");
            }
        }
        return env;
    }

    // ---- sandbox lifecycle ---------------------------------------------------------------------------

    @Override
    public void sandboxCreate(ModalApi.SandboxCreateRequest req, StreamObserver<ModalApi.SandboxCreateResponse> out) {
        unary(out, () -> {
            Object earlier = earlierCreate();
            if (earlier instanceof ModalApi.SandboxCreateResponse) {
                return (ModalApi.SandboxCreateResponse) earlier;
            }
            createFault();
            Map<String, String> env = resolveSecrets(req.getDefinition().getSecretIdsList(), List.of());
            EmulatedSandbox sb = create(false, req.getAppId(), req.getDefinition(), req.getTagsList(), env);
            ModalApi.SandboxCreateResponse resp = ModalApi.SandboxCreateResponse.newBuilder().setSandboxId(sb.id())
                    .setMetadata(ModalApi.SandboxHandleMetadata.newBuilder().setAppId(sb.appId())).build();
            rememberCreate(resp);
            lostCreateFault();
            return resp;
        });
    }

    @Override
    public void sandboxCreateV2(ModalApi.SandboxCreateV2Request req, StreamObserver<ModalApi.SandboxCreateV2Response> out) {
        unary(out, () -> {
            Object earlier = earlierCreate();
            if (earlier instanceof ModalApi.SandboxCreateV2Response) {
                return (ModalApi.SandboxCreateV2Response) earlier;
            }
            createFault();
            Map<String, String> env = resolveSecrets(req.getDefinition().getSecretIdsList(), req.getSecretSourcesList());
            env.putAll(req.getEphemeralSecrets().getContentsMap());
            EmulatedSandbox sb = create(true, req.getAppId(), req.getDefinition(), req.getTagsList(), env);
            ModalApi.SandboxCreateV2Response resp = ModalApi.SandboxCreateV2Response.newBuilder().setSandboxId(sb.id())
                    .setTaskId(sb.taskId())
                    .setMetadata(ModalApi.SandboxHandleMetadata.newBuilder().setAppId(sb.appId()))
                    .setCommandRouterAccess(ModalApi.CommandRouterAccess.newBuilder()
                            .setJwt(routerJwt(sb.taskId())).setUrl(routerUrl.get()))
                    .build();
            rememberCreate(resp);
            lostCreateFault();
            return resp;
        });
    }

    /** A create retried with the same {@code x-idempotency-key} gets the first answer, not a second sandbox. */
    private Object earlierCreate() {
        String key = Auth.IDEMPOTENCY.get();
        return key == null ? null : createsByKey.get(key);
    }

    private void rememberCreate(Object resp) {
        String key = Auth.IDEMPOTENCY.get();
        if (key != null) {
            createsByKey.put(key, resp);
        }
    }

    private void createFault() {
        try {
            faults.pauseCreate();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw Status.CANCELLED.withDescription("interrupted").asRuntimeException();
        }
        int status = faults.takeCreateFailure();
        if (status == 0) {
            return;
        }
        int retryAfter = faults.retryAfterSeconds();
        if (status == 429 && retryAfter >= 0) {
            // Throttling as Modal sends it: RPCStatus in grpc-status-details-bin with an RPCRetryPolicy.
            Metadata trailers = new Metadata();
            trailers.put(Auth.STATUS_DETAILS, ModalApi.RPCStatus.newBuilder().setCode(Status.Code.RESOURCE_EXHAUSTED.value())
                    .setMessage("rate limit exceeded")
                    .addDetails(Any.newBuilder().setTypeUrl("type.googleapis.com/modal.client.RPCRetryPolicy")
                            .setValue(ModalApi.RPCRetryPolicy.newBuilder().setRetryAfterSecs(retryAfter).build().toByteString()))
                    .build().toByteArray());
            fired.throttledCreates.incrementAndGet();
            throw Status.RESOURCE_EXHAUSTED.withDescription("rate limit exceeded").asRuntimeException(trailers);
        }
        fired.failedCreates.incrementAndGet();
        throw grpcStatus(status).withDescription("emulated failure (" + status + ")").asRuntimeException();
    }

    private void lostCreateFault() {
        if (faults.takeLostCreate()) {
            fired.lostCreates.incrementAndGet();
            // The sandbox exists; the client sees what a connection lost before the answer looks like.
            throw Status.UNAVAILABLE.withDescription("emulated: connection lost before the answer").asRuntimeException();
        }
    }

    /** An HTTP-style status from the shared fault knobs as the gRPC code Modal's server would send. */
    static Status grpcStatus(int http) {
        switch (http) {
            case 400: return Status.INVALID_ARGUMENT;
            case 401: return Status.UNAUTHENTICATED;
            case 403: return Status.PERMISSION_DENIED;
            case 404: return Status.NOT_FOUND;
            case 409: return Status.FAILED_PRECONDITION;
            case 429: return Status.RESOURCE_EXHAUSTED;
            case 500: return Status.INTERNAL;
            case 503: return Status.UNAVAILABLE;
            case 504: return Status.DEADLINE_EXCEEDED;
            default: return Status.UNKNOWN;
        }
    }

    private EmulatedSandbox create(boolean v2, String appId, ModalApi.Sandbox def, List<ModalApi.SandboxTag> tags,
            Map<String, String> env) {
        if (!appIds.contains(appId)) {
            throw Status.NOT_FOUND.withDescription("App " + appId + " not found").asRuntimeException();
        }
        if (!Boolean.TRUE.equals(imagesBuilt.get(def.getImageId()))) {
            throw Status.NOT_FOUND.withDescription("Image " + def.getImageId() + " not found or not built").asRuntimeException();
        }
        if (def.getTimeoutSecs() > MAX_TIMEOUT_SECS) {
            throw invalid("timeout_secs must be at most " + MAX_TIMEOUT_SECS + ", was " + def.getTimeoutSecs());
        }
        if (def.hasIdleTimeoutSecs() && def.getIdleTimeoutSecs() == 0) {
            throw invalid("idle_timeout_secs must be positive");
        }
        if (def.hasWorkdir() && !def.getWorkdir().startsWith("/")) {
            throw invalid("workdir must be an absolute path, got " + def.getWorkdir());
        }
        if (def.hasRuntime() && !RUNTIMES.contains(def.getRuntime())) {
            throw invalid("unknown runtime '" + def.getRuntime() + "'");
        }
        ModalApi.Resources r = def.getResources();
        if (r.getMilliCpuMax() != 0 && r.getMilliCpuMax() < r.getMilliCpu()) {
            throw invalid("milli_cpu_max is below milli_cpu");
        }
        if (r.getMemoryMbMax() != 0 && r.getMemoryMbMax() < r.getMemoryMb()) {
            throw invalid("memory_mb_max is below memory_mb");
        }
        if (def.getBlockNetwork() && def.getI6PnEnabled()) {
            throw invalid("block_network disables i6pn");
        }
        WireNetwork network;
        try {
            network = WireNetwork.parse(def);
        } catch (IllegalArgumentException e) {
            throw invalid(e.getMessage());
        }
        if (def.hasName()) {
            for (EmulatedSandbox other : sandboxes.values()) {
                if (!other.finished() && other.appId().equals(appId) && other.definition().hasName()
                        && other.definition().getName().equals(def.getName())) {
                    throw Status.ALREADY_EXISTS.withDescription("a running sandbox is named " + def.getName()).asRuntimeException();
                }
            }
        }
        int timeout = def.getTimeoutSecs() == 0 ? DEFAULT_TIMEOUT_SECS : def.getTimeoutSecs();
        dev.sandbox4j.policy.EgressPolicy local = network.localPolicy(canaryTargets);
        boolean host = local.isAllowAll();
        String id = v2 ? Ids.v2Sandbox() : Ids.v1Sandbox();
        String taskId = Ids.make("ta");
        // The local sandbox's own clock is the backstop behind the emulator's timeout_secs timer.
        // memory_mb_max and milli_cpu_max are Modal's hard caps (memory_mb and milli_cpu reservations)
        dev.sandbox4j.policy.Limits.Builder limits = dev.sandbox4j.policy.Limits.builder();
        if (r.getMemoryMbMax() > 0) {
            limits.memoryMib(r.getMemoryMbMax());
        }
        if (r.getMilliCpuMax() > 0) {
            limits.vcpus((r.getMilliCpuMax() + 999) / 1000);
        }
        // no runner: instant mode, where no local sandbox opens and every exec ends at once
        Machine machine = runner == null ? new InstantMachine()
                : LocalMachine.open(runner, local, env, Duration.ofSeconds(timeout + 30L), limits.build());
        EmulatedSandbox sb = new EmulatedSandbox(id, v2, taskId, appId, def, tags, network, host, createdAt(),
                System.nanoTime() + TimeUnit.SECONDS.toNanos(timeout), machine);
        sandboxes.put(id, sb);
        tasks.put(taskId, sb);
        Map<String, String> labels = new java.util.LinkedHashMap<>();
        tags.forEach(t -> labels.put(t.getTagName(), t.getTagValue()));
        ledger.created(id, labels);
        sb.expiry(timers.schedule(() -> end(sb, GenericStatus.GENERIC_STATUS_TIMEOUT, "Sandbox timed out"),
                timeout, TimeUnit.SECONDS));
        return sb;
    }

    /** Strictly increasing, so paging by {@code before_timestamp} never skips a sandbox. */
    private double createdAt() {
        synchronized (clockLock) {
            double now = System.currentTimeMillis() / 1000.0;
            lastCreatedAt = Math.max(now, lastCreatedAt + 0.001);
            return lastCreatedAt;
        }
    }

    /** The local sandbox's egress under {@code network}, as at create ({@link WireNetwork#localPolicy}). */
    dev.sandbox4j.policy.EgressPolicy localPolicy(WireNetwork network) {
        return network.localPolicy(canaryTargets);
    }

    /** Records a command the router started, for the ledger's campaign checks (code and network). */
    void executed(EmulatedSandbox sb, List<String> argv) {
        ledger.executed(sb.id(), String.join(" ", argv), sb.hostNetwork());
    }

    void end(EmulatedSandbox sb, GenericStatus status, String why) {
        sb.end(status, why, () -> ledger.destroyed(sb.id()));
    }

    /** Looks a sandbox up in the RPC family of the call: V1 RPCs know V1 ids, V2 RPCs V2 ids. */
    private EmulatedSandbox sandbox(String id, boolean v2) {
        EmulatedSandbox sb = sandboxes.get(id);
        if (sb == null || sb.v2() != v2) {
            throw Status.NOT_FOUND.withDescription("Sandbox " + id + " not found").asRuntimeException();
        }
        return sb;
    }

    EmulatedSandbox task(String taskId) {
        EmulatedSandbox sb = tasks.get(taskId);
        if (sb == null) {
            throw Status.NOT_FOUND.withDescription("Task " + taskId + " not found").asRuntimeException();
        }
        return sb;
    }

    String routerJwt(String taskId) {
        return jwts.mint("router", taskId, 3600);
    }

    /**
     * V1: the first {@code unscheduledPolls} lookups of a sandbox answer with neither field set, "not
     * scheduled yet" (modal.md 3.5), so a client must poll as it must against Modal.
     */
    @Override
    public void sandboxGetTaskId(ModalApi.SandboxGetTaskIdRequest req, StreamObserver<ModalApi.SandboxGetTaskIdResponse> out) {
        unary(out, () -> {
            EmulatedSandbox sb = sandbox(req.getSandboxId(), false);
            if (!sb.finished() && sb.taskPolls().incrementAndGet() <= unscheduledPolls) {
                return ModalApi.SandboxGetTaskIdResponse.getDefaultInstance();
            }
            return taskIdOf(sb);
        });
    }

    @Override
    public void sandboxGetTaskIdV2(ModalApi.SandboxGetTaskIdRequest req, StreamObserver<ModalApi.SandboxGetTaskIdResponse> out) {
        unary(out, () -> taskIdOf(sandbox(req.getSandboxId(), true)));
    }

    private static ModalApi.SandboxGetTaskIdResponse taskIdOf(EmulatedSandbox sb) {
        ModalApi.GenericResult r = sb.result().getNow(null);
        if (r != null) {
            return ModalApi.SandboxGetTaskIdResponse.newBuilder().setTaskResult(r).build();
        }
        return ModalApi.SandboxGetTaskIdResponse.newBuilder().setTaskId(sb.taskId()).build();
    }

    @Override
    public void taskGetCommandRouterAccess(ModalApi.TaskGetCommandRouterAccessRequest req,
            StreamObserver<ModalApi.TaskGetCommandRouterAccessResponse> out) {
        unary(out, () -> {
            EmulatedSandbox sb = task(req.getTaskId());
            if (sb.finished()) {
                throw Status.FAILED_PRECONDITION.withDescription("Task " + req.getTaskId() + " has finished").asRuntimeException();
            }
            return ModalApi.TaskGetCommandRouterAccessResponse.newBuilder().setJwt(routerJwt(sb.taskId()))
                    .setUrl(routerUrl.get()).build();
        });
    }

    @Override
    public void sandboxGetCommandRouterAccess(ModalApi.SandboxGetCommandRouterAccessRequest req,
            StreamObserver<ModalApi.SandboxGetCommandRouterAccessResponse> out) {
        unary(out, () -> {
            EmulatedSandbox sb = req.hasTaskId() ? task(req.getTaskId()) : sandbox(req.getSandboxId(), true);
            if (sb.finished()) {
                throw Status.FAILED_PRECONDITION.withDescription("Sandbox " + sb.id() + " has finished").asRuntimeException();
            }
            return ModalApi.SandboxGetCommandRouterAccessResponse.newBuilder().setJwt(routerJwt(sb.taskId()))
                    .setUrl(routerUrl.get()).build();
        });
    }

    @Override
    public void sandboxTerminate(ModalApi.SandboxTerminateRequest req, StreamObserver<ModalApi.SandboxTerminateResponse> out) {
        unary(out, () -> terminate(sandbox(req.getSandboxId(), false)));
    }

    @Override
    public void sandboxTerminateV2(ModalApi.SandboxTerminateRequest req, StreamObserver<ModalApi.SandboxTerminateResponse> out) {
        unary(out, () -> terminate(sandbox(req.getSandboxId(), true)));
    }

    private ModalApi.SandboxTerminateResponse terminate(EmulatedSandbox sb) {
        int failure = faults.takeTeardownFailure();
        if (failure != 0) {
            fired.failedTerminates.incrementAndGet();
            throw grpcStatus(failure).withDescription("emulated terminate failure (" + failure + ")").asRuntimeException();
        }
        ModalApi.GenericResult before = sb.result().getNow(null);
        ledger.killedByClient(sb.id());
        end(sb, GenericStatus.GENERIC_STATUS_TERMINATED, "Sandbox terminated by the client");
        ModalApi.SandboxTerminateResponse.Builder b = ModalApi.SandboxTerminateResponse.newBuilder();
        if (before != null) {
            b.setExistingResult(before);
        }
        return b.build();
    }

    @Override
    public void sandboxWait(ModalApi.SandboxWaitRequest req, StreamObserver<ModalApi.SandboxWaitResponse> out) {
        sandboxWait(req, out, false);
    }

    @Override
    public void sandboxWaitV2(ModalApi.SandboxWaitRequest req, StreamObserver<ModalApi.SandboxWaitResponse> out) {
        sandboxWait(req, out, true);
    }

    /** A long poll: answers when the sandbox ends or after {@code timeout} seconds (capped), result unset. */
    private void sandboxWait(ModalApi.SandboxWaitRequest req, StreamObserver<ModalApi.SandboxWaitResponse> out, boolean v2) {
        EmulatedSandbox sb;
        try {
            pause();
            sb = sandbox(req.getSandboxId(), v2);
        } catch (StatusRuntimeException e) {
            out.onError(e);
            return;
        }
        double timeout = Math.max(0, Math.min(req.getTimeout(), LONG_POLL_CAP_SECS));
        ModalApi.SandboxHandleMetadata.Builder meta = ModalApi.SandboxHandleMetadata.newBuilder().setAppId(sb.appId());
        sb.result().copy().completeOnTimeout(null, (long) (timeout * 1000), TimeUnit.MILLISECONDS).whenComplete((r, e) -> {
            ModalApi.SandboxWaitResponse.Builder b = ModalApi.SandboxWaitResponse.newBuilder();
            if (r != null) {
                b.setResult(r);
                meta.setResult(r);
            }
            try {
                out.onNext(b.setMetadata(meta).build());
                out.onCompleted();
            } catch (RuntimeException cancelled) {
                // the client gave up on the poll
            }
        });
    }

    @Override
    public void sandboxGetFromName(ModalApi.SandboxGetFromNameRequest req, StreamObserver<ModalApi.SandboxGetFromNameResponse> out) {
        unary(out, () -> fromName(req, false));
    }

    @Override
    public void sandboxGetFromNameV2(ModalApi.SandboxGetFromNameRequest req, StreamObserver<ModalApi.SandboxGetFromNameResponse> out) {
        unary(out, () -> fromName(req, true));
    }

    /**
     * A running sandbox by its {@code name} in a deployed app (py {@code Sandbox.from_name}: "Get a running
     * Sandbox by name from a deployed App"; NOT_FOUND when none runs; a finished one too with
     * {@code include_terminated}, which the 0.11.1 SDK sends to V2). Each family finds its own
     * sandboxes: the JS SDK 0.11.1 asks V2 first and falls back to V1 on NOT_FOUND.
     */
    private ModalApi.SandboxGetFromNameResponse fromName(ModalApi.SandboxGetFromNameRequest req, boolean v2) {
        if (req.getSandboxName().isEmpty() || req.getAppName().isEmpty()) {
            throw invalid("sandbox_name and app_name are required");
        }
        String appId = apps.get(envName(req.getEnvironmentName()) + "/" + req.getAppName());
        for (EmulatedSandbox sb : sandboxes.values()) {
            if (appId != null && sb.v2() == v2 && (req.getIncludeTerminated() || !sb.finished()) && sb.appId().equals(appId) && sb.definition().hasName()
                    && sb.definition().getName().equals(req.getSandboxName())) {
                return ModalApi.SandboxGetFromNameResponse.newBuilder().setSandboxId(sb.id())
                        .setMetadata(ModalApi.SandboxHandleMetadata.newBuilder().setAppId(sb.appId())).build();
            }
        }
        throw Status.NOT_FOUND.withDescription("Sandbox with name '" + req.getSandboxName() + "' not found in App '"
                + req.getAppName() + "'").asRuntimeException();
    }

    @Override
    public void sandboxTagsGet(ModalApi.SandboxTagsGetRequest req, StreamObserver<ModalApi.SandboxTagsGetResponse> out) {
        unary(out, () -> ModalApi.SandboxTagsGetResponse.newBuilder().addAllTags(sandbox(req.getSandboxId(), false).tags()).build());
    }

    @Override
    public void sandboxTagsGetV2(ModalApi.SandboxTagsGetRequest req, StreamObserver<ModalApi.SandboxTagsGetResponse> out) {
        unary(out, () -> ModalApi.SandboxTagsGetResponse.newBuilder().addAllTags(sandbox(req.getSandboxId(), true).tags()).build());
    }

    @Override
    public void sandboxTagsSet(ModalApi.SandboxTagsSetRequest req, StreamObserver<com.google.protobuf.Empty> out) {
        unary(out, () -> setTags(sandbox(req.getSandboxId(), false), req.getTagsList()));
    }

    @Override
    public void sandboxTagsSetV2(ModalApi.SandboxTagsSetRequest req, StreamObserver<com.google.protobuf.Empty> out) {
        unary(out, () -> setTags(sandbox(req.getSandboxId(), true), req.getTagsList()));
    }

    /** "Setting tags replaces the Sandbox's entire tag set; passing an empty dict clears all tags" (py {@code set_tags}). */
    private com.google.protobuf.Empty setTags(EmulatedSandbox sb, List<ModalApi.SandboxTag> tags) {
        java.util.Set<String> names = new java.util.HashSet<>();
        for (ModalApi.SandboxTag t : tags) {
            if (t.getTagName().isEmpty() || !names.add(t.getTagName())) {
                throw invalid("tag names must be non-empty and distinct");
            }
        }
        sb.replaceTags(tags);
        return com.google.protobuf.Empty.getDefaultInstance();
    }

    @Override
    public void sandboxList(ModalApi.SandboxListRequest req, StreamObserver<ModalApi.SandboxListResponse> out) {
        unary(out, () -> list(req, false));
    }

    /** SandboxListV2 lists both families (the 0.11.1 SDK's experimentalList doc); SandboxList only V1. */
    @Override
    public void sandboxListV2(ModalApi.SandboxListRequest req, StreamObserver<ModalApi.SandboxListResponse> out) {
        unary(out, () -> list(req, true));
    }

    private static final int PAGE = 100;

    private ModalApi.SandboxListResponse list(ModalApi.SandboxListRequest req, boolean both) {
        if (!req.getAppId().isEmpty() && !appIds.contains(req.getAppId())) {
            throw Status.NOT_FOUND.withDescription("App " + req.getAppId() + " not found").asRuntimeException();
        }
        List<EmulatedSandbox> hits = new ArrayList<>();
        for (EmulatedSandbox sb : sandboxes.values()) {
            if ((!both && sb.v2()) || (!req.getIncludeFinished() && sb.finished())) {
                continue;
            }
            if (!req.getAppId().isEmpty() && !req.getAppId().equals(sb.appId())) {
                continue;
            }
            if (req.getBeforeTimestamp() > 0 && sb.createdAt() >= req.getBeforeTimestamp()) {
                continue;
            }
            if (!hasTags(sb, req.getTagsList())) {
                continue;
            }
            hits.add(sb);
        }
        hits.sort(Comparator.comparingDouble(EmulatedSandbox::createdAt).reversed());
        ModalApi.SandboxListResponse.Builder b = ModalApi.SandboxListResponse.newBuilder();
        for (EmulatedSandbox sb : hits.subList(0, Math.min(PAGE, hits.size()))) {
            ModalApi.GenericResult r = sb.result().getNow(null);
            ModalApi.TaskInfo.Builder task = ModalApi.TaskInfo.newBuilder().setId(sb.taskId()).setSandboxId(sb.id())
                    .setStartedAt(sb.createdAt());
            if (r != null) {
                task.setResult(r);
            }
            ModalApi.SandboxInfo.Builder info = ModalApi.SandboxInfo.newBuilder().setId(sb.id()).setCreatedAt(sb.createdAt())
                    .setAppId(sb.appId()).addAllTags(sb.tags()).setImageId(sb.definition().getImageId())
                    .setTimeoutSecs(sb.definition().getTimeoutSecs()).setTaskInfo(task);
            if (sb.definition().hasName()) {
                info.setName(sb.definition().getName());
            }
            b.addSandboxes(info);
        }
        return b.build();
    }

    private static boolean hasTags(EmulatedSandbox sb, List<ModalApi.SandboxTag> wanted) {
        for (ModalApi.SandboxTag w : wanted) {
            if (sb.tags().stream().noneMatch(t -> t.getTagName().equals(w.getTagName()) && t.getTagValue().equals(w.getTagValue()))) {
                return false;
            }
        }
        return true;
    }

    // ---- for the emulator ----------------------------------------------------------------------------

    public Map<String, EmulatedSandbox> sandboxes() {
        return sandboxes;
    }

    /** Ends every sandbox (the emulator's close). */
    public void endAll() {
        for (EmulatedSandbox sb : sandboxes.values()) {
            end(sb, GenericStatus.GENERIC_STATUS_TERMINATED, "emulator stopped");
        }
    }

    public Fired fired() {
        return fired;
    }

    int outputLimit() {
        return outputLimit;
    }

    private void pause() {
        try {
            faults.pause();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw Status.CANCELLED.withDescription("interrupted").asRuntimeException();
        }
    }

    static StatusRuntimeException invalid(String message) {
        return Status.INVALID_ARGUMENT.withDescription(message).asRuntimeException();
    }

    interface Call<T> {
        T get();
    }

    private <T> void unary(StreamObserver<T> out, Call<T> call) {
        T value;
        try {
            pause();
            value = call.get();
        } catch (StatusRuntimeException e) {
            out.onError(e);
            return;
        } catch (RuntimeException e) {
            out.onError(Status.INTERNAL.withDescription(String.valueOf(e.getMessage())).asRuntimeException());
            return;
        }
        out.onNext(value);
        out.onCompleted();
    }

}
