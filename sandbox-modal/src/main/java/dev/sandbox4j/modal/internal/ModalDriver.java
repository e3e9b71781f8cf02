package dev.sandbox4j.modal.internal;

import dev.sandbox4j.api.Execution;
import dev.sandbox4j.api.InputFile;
import dev.sandbox4j.api.exception.SandboxConfigurationException;
import dev.sandbox4j.api.exception.SandboxException;
import dev.sandbox4j.api.exception.SandboxNotFoundException;
import dev.sandbox4j.api.SandboxSpec;
import dev.sandbox4j.spi.Attachable;
import dev.sandbox4j.spi.CreateRequest;
import dev.sandbox4j.spi.ExecOutcome;
import dev.sandbox4j.spi.Labelled;
import dev.sandbox4j.spi.OutputSink;
import dev.sandbox4j.spi.SandboxDriver;
import dev.sandbox4j.spi.Secret;
import dev.sandbox4j.modal.internal.proto.ModalApi;
import dev.sandbox4j.modal.internal.proto.ModalClientGrpc;
import dev.sandbox4j.policy.Capabilities;
import dev.sandbox4j.policy.UnsupportedPolicyException;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.StatusRuntimeException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Modal on the wire: the control plane ({@code modal.client.ModalClient}: app, environment and image
 * lookups once per runner; {@code SandboxCreateV2} or {@code SandboxCreate}; {@code SandboxListV2} /
 * {@code SandboxList} by tag; {@code SandboxTerminateV2} / {@code SandboxTerminate}) and the per-task
 * command router ({@code modal.task_command_router.TaskCommandRouter}: {@code TaskExecStart}, two
 * concurrent {@code TaskExecStdioRead} streams read by offset as the output arrives, {@code TaskExecWait};
 * files read and listed through Modal's filesystem tool as the JS SDK 0.11.1 runs it). The lifecycle
 * around it is {@link dev.sandbox4j.spi.lifecycle.ManagedSandboxRunner}'s.
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
    /**
     * SIGKILL to every process whose environment holds the marker variable {@code $1} (any exec's), pass
     * after pass until a pass finds none (at most 20 passes, exit 1 if they still turn up): a child
     * forked during one pass is found by the next, and one that cannot be killed fails the script.
     */
    static final String KILL_MARKED_SCRIPT = "p=0; while [ $p -lt 20 ]; do p=$((p+1)); n=0; for d in /proc/[0-9]*; do"
            + " if tr '\\000' '\\n' 2>/dev/null < \"$d/environ\" | grep -q -- \"^$1=\"; then"
            + " kill -KILL \"${d#/proc/}\" 2>/dev/null; n=1; fi; done;"
            + " [ $n = 0 ] && exit 0; sleep 0.05 2>/dev/null || sleep 1; done; exit 1";
    static final Metadata.Key<String> AUTHORIZATION = Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER);
    /** The JS SDK refuses, and routers may refuse, command args totalling more than this. */
    static final int MAX_ARGS_BYTES = 65_536;
    /** Raw bytes per file chunk: under 44 KiB once in base64, so a chunk's whole argv stays under MAX_ARGS_BYTES. */
    static final int FILE_CHUNK = 32 * 1024;
    static final int STREAM_RETRIES = 10;
    /** Between two {@code SandboxGetTaskId} of a V1 create, as the JS SDK polls. */
    static final Duration TASK_POLL_INTERVAL = Duration.ofMillis(500);
    static final Duration WAIT_CALL = Duration.ofSeconds(60);
    static final Duration KILL_DEADLINE = Duration.ofSeconds(10);
    static final int LIST_PAGES = 100;

    private final ModalSettings settings;
    private final ModalChannels channels;
    private final ModalRpc rpc;
    private final Capabilities capabilities;
    private final ModalExec router;
    private final Object lookups = new Object();
    private volatile String appId;
    private volatile String imageId;

    public ModalDriver(ModalSettings settings) {
        this(settings, ModalPolicy.DEFAULT_LANGUAGES);
    }

    /** A driver whose image has {@code languages} (declared in its capabilities). */
    public ModalDriver(ModalSettings settings, java.util.Set<dev.sandbox4j.policy.Language> languages) {
        this.capabilities = ModalPolicy.capabilities(languages);
        this.settings = settings;
        this.channels = new ModalChannels(settings);
        this.rpc = new ModalRpc(settings, channels);
        this.router = new ModalExec(settings, rpc, channels);
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
        return rpc.callCount() + router.routerCalls();
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

    /**
     * One layer: {@code ImageGetOrCreate}, then {@code ImageJoinStreaming} (resumed from the last entry)
     * until the build has a result, for up to {@code imageBuildTimeout} measured on the settings'
     * backoff clock ({@link dev.sandbox4j.spi.Backoff#nanoTime}); no join starts after it.
     */
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
        long deadline = settings.backoff.nanoTime() + settings.imageBuildTimeout.toNanos();
        int retries = 0;
        while (result == null || result.getStatus() == ModalApi.GenericResult.GenericStatus.GENERIC_STATUS_UNSPECIFIED) {
            long remaining = deadline - settings.backoff.nanoTime();
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
        ModalHandle h = settings.sandboxV2 ? createV2(app, def.build(), tags, env) : createV1(app, def.build(), tags, env);
        return h;
    }

    // ---------------------------------------------------------------- the language probe

    /** The languages the probe looks for, by the interpreter {@link dev.sandbox4j.spi.CodeCommand} starts. */
    static final List<dev.sandbox4j.policy.Language> PROBED = List.of(dev.sandbox4j.policy.Language.PYTHON,
            dev.sandbox4j.policy.Language.JAVASCRIPT, dev.sandbox4j.policy.Language.BASH);

    /**
     * The language probe in one exec ({@code RunnerBuilder.probeLanguages}): {@code /bin/sh -c} of a fixed
     * script, no marker, both streams piped, {@code command -v} of each interpreter, the names found
     * printed one a line. Three router calls instead of three execs; the lifecycle opened the sandbox
     * and terminates it.
     */
    @Override
    public java.util.Optional<java.util.Set<dev.sandbox4j.policy.Language>> probeLanguages(ModalHandle h)
            throws InterruptedException {
        StringBuilder script = new StringBuilder("for c in");
        for (dev.sandbox4j.policy.Language l : PROBED) {
            script.append(' ').append(dev.sandbox4j.spi.CodeCommand.of(l).interpreter());
        }
        script.append("; do command -v \"$c\" >/dev/null 2>&1 && echo \"$c\"; done; exit 0");
        String out = router.probe(h, List.of("/bin/sh", "-c", script.toString()));
        java.util.Set<dev.sandbox4j.policy.Language> found = java.util.EnumSet.noneOf(dev.sandbox4j.policy.Language.class);
        List<String> lines = List.of(out.split("\n"));
        for (dev.sandbox4j.policy.Language l : PROBED) {
            if (lines.contains(dev.sandbox4j.spi.CodeCommand.of(l).interpreter())) {
                found.add(l);
            }
        }
        if (found.isEmpty()) {
            throw new SandboxConfigurationException(SandboxException.builder("modal: the image " + settings.imageRef
                    + " has none of python3, node and bash on its PATH").provider(PROVIDER));
        }
        log.debug("modal: the image {} has {}", settings.imageRef, found);
        return java.util.Optional.of(java.util.Set.copyOf(found));
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

    /**
     * {@code SandboxGetTaskId} every 500 ms until the sandbox is scheduled, as the JS SDK polls: at once,
     * then through {@link dev.sandbox4j.spi.Backoff#poll} on the settings' backoff (its clock and
     * sleeper), no lookup starting after {@code scheduleTimeout}; a sandbox that ended first, or one not
     * scheduled by then, fails the create (retriable).
     */
    private String waitForTask(String id) throws InterruptedException {
        ModalApi.SandboxGetTaskIdRequest req = ModalApi.SandboxGetTaskIdRequest.newBuilder().setSandboxId(id).build();
        Optional<String> task = settings.backoff.poll(settings.scheduleTimeout, TASK_POLL_INTERVAL, TASK_POLL_INTERVAL, look -> {
            ModalApi.SandboxGetTaskIdResponse r = rpc.unary(ModalClientGrpc.getSandboxGetTaskIdMethod(), req, true);
            if (r.hasTaskResult() && r.getTaskResult().getStatus() != ModalApi.GenericResult.GenericStatus.GENERIC_STATUS_UNSPECIFIED) {
                throw SandboxException.builder(ModalRpc.limit(rpc.redact("modal: sandbox " + id + " ended before it was scheduled: "
                        + r.getTaskResult().getStatus() + " " + r.getTaskResult().getException())))
                        .provider(PROVIDER).retriable(true).build();
            }
            return r.hasTaskId() && !r.getTaskId().isEmpty() ? Optional.of(r.getTaskId()) : Optional.empty();
        });
        return task.orElseThrow(() -> SandboxException.builder("modal: sandbox " + id + " was not scheduled within "
                + settings.scheduleTimeout).provider(PROVIDER).retriable(true).build());
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

    /**
     * As the SDK's {@code Sandbox.fromId}, from the app's running sandboxes ({@code SandboxListV2} /
     * {@code SandboxList}: tags and task; V1 asks {@code SandboxGetTaskId} when the list has no task
     * yet), then command-router access as after a create. Modal reports no egress for a sandbox, so the policy
     * is checked through the policy tag only; the expected spec's env goes with every later exec.
     */
    @Override
    public Attachable<ModalHandle> attach(String sandboxId, SandboxSpec expected) throws InterruptedException {
        ModalApi.SandboxInfo found = null;
        for (ModalApi.SandboxInfo info : list(Map.of())) {
            if (info.getId().equals(sandboxId)) {
                found = info;
            }
        }
        if (found == null) {
            // the list holds running sandboxes only: gone, finished, or never this app's
            return Attachable.builder(ModalHandle.found(sandboxId)).labels(Map.of())
                    .state("not among the app's running sandboxes", false).build();
        }
        Map<String, String> tags = tags(found);
        String task = found.hasTaskInfo() ? found.getTaskInfo().getId() : "";
        boolean finished = found.hasTaskInfo() && found.getTaskInfo().hasResult()
                && found.getTaskInfo().getResult().getStatus() != ModalApi.GenericResult.GenericStatus.GENERIC_STATUS_UNSPECIFIED;
        if (task.isEmpty() && !settings.sandboxV2 && !finished) {
            // V1 lists may not carry the task yet: ask as a create does
            ModalApi.SandboxGetTaskIdResponse t = rpc.unary(ModalClientGrpc.getSandboxGetTaskIdMethod(),
                    ModalApi.SandboxGetTaskIdRequest.newBuilder().setSandboxId(sandboxId).build(), true);
            finished = t.hasTaskResult()
                    && t.getTaskResult().getStatus() != ModalApi.GenericResult.GenericStatus.GENERIC_STATUS_UNSPECIFIED;
            task = t.hasTaskId() ? t.getTaskId() : "";
        }
        if (finished || task.isEmpty()) {
            return Attachable.builder(ModalHandle.found(sandboxId)).labels(tags)
                    .state(finished ? "finished" : "not scheduled", false).build();
        }
        String url;
        String jwt;
        if (settings.sandboxV2) {
            ModalApi.SandboxGetCommandRouterAccessResponse r = rpc.unary(ModalClientGrpc.getSandboxGetCommandRouterAccessMethod(),
                    ModalApi.SandboxGetCommandRouterAccessRequest.newBuilder().setSandboxId(sandboxId).build(), true);
            url = r.getUrl();
            jwt = r.getJwt();
        } else {
            ModalApi.TaskGetCommandRouterAccessResponse r = rpc.unary(ModalClientGrpc.getTaskGetCommandRouterAccessMethod(),
                    ModalApi.TaskGetCommandRouterAccessRequest.newBuilder().setTaskId(task).build(), true);
            url = r.getUrl();
            jwt = r.getJwt();
        }
        if (url.isEmpty() || jwt.isEmpty()) {
            throw SandboxException.builder("modal: command router access for sandbox " + sandboxId + " came back empty")
                    .provider(PROVIDER).retriable(true).build();
        }
        ModalHandle h = new ModalHandle(sandboxId, settings.sandboxV2, task, url, Secret.of(jwt), expected.env());
        return Attachable.builder(h).labels(tags).state("running", true).build();
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

    // ---------------------------------------------------------------- files and exec, on the router

    @Override
    public void writeFiles(ModalHandle sandbox, List<InputFile> files) throws InterruptedException {
        router.writeFiles(sandbox, files);
    }

    @Override
    public dev.sandbox4j.api.SandboxFile readFile(ModalHandle sandbox, String path, long maxBytes) throws InterruptedException {
        return router.readFile(sandbox, path, maxBytes);
    }

    @Override
    public List<dev.sandbox4j.api.FileEntry> listFiles(ModalHandle sandbox, String directory) throws InterruptedException {
        return router.listFiles(sandbox, directory);
    }

    /**
     * The lock-down after trusted setup: {@code TaskSetNetworkAccess} with {@link ModalPolicy#liveNetworkAccess}
     * (what the official SDKs send; Modal drops established connections the new policy no longer
     * permits), then one exec that kills every process the setup left ({@link #KILL_MARKED_SCRIPT}).
     * Modal has no call that reads a sandbox's policy back, so the call's OK is the only confirmation;
     * a failure of either step throws, never retried when the call may have taken effect, and the
     * lifecycle tears the sandbox down before any code runs (fail closed).
     */
    @Override
    public void updateEgress(ModalHandle sandbox, dev.sandbox4j.policy.EgressPolicy egress) throws InterruptedException {
        ModalApi.NetworkAccess access = ModalPolicy.liveNetworkAccess(egress);
        router.setNetworkAccess(sandbox, access, egress.toString());
        router.killMarked(sandbox);
        log.debug("modal sandbox {} locked down to {}", sandbox.id(), egress);
    }

    @Override
    public ExecOutcome exec(ModalHandle sandbox, Execution execution, OutputSink sink) throws InterruptedException {
        return router.exec(sandbox, execution, sink);
    }

    @Override
    public void close() {
        router.close();
        rpc.close();
        channels.close();
    }

    /** gRPC channels opened so far, the control plane's included (tests, benchmarks). */
    public int channelsOpened() {
        return channels.openedCount();
    }

    /** Router channels held now, in use or idle (tests, benchmarks). */
    public int routerChannels() {
        return channels.routerCount();
    }

    @Override
    public String toString() {
        return "ModalDriver[" + settings + "]";
    }
}
