package dev.sandbox4j.daytona.internal;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.sandbox4j.api.Execution;
import dev.sandbox4j.api.FileEntry;
import dev.sandbox4j.api.InputFile;
import dev.sandbox4j.api.exception.SandboxException;
import dev.sandbox4j.api.SandboxFile;
import dev.sandbox4j.api.exception.SandboxNotFoundException;
import dev.sandbox4j.api.SandboxSpec;
import dev.sandbox4j.spi.Attachable;
import dev.sandbox4j.spi.CodeCommand;
import dev.sandbox4j.spi.CreateRequest;
import dev.sandbox4j.spi.ExecOutcome;
import dev.sandbox4j.spi.Labelled;
import dev.sandbox4j.spi.ListingScript;
import dev.sandbox4j.spi.OutputSink;
import dev.sandbox4j.spi.SandboxDriver;
import dev.sandbox4j.http.BoundedDownload;
import dev.sandbox4j.http.ClientDeadlineException;
import dev.sandbox4j.http.ErrorBody;
import dev.sandbox4j.http.HttpTransport;
import dev.sandbox4j.policy.Capabilities;
import dev.sandbox4j.policy.EgressPolicy;
import dev.sandbox4j.policy.UnsupportedPolicyException;
import dev.sandbox4j.policy.Language;
import dev.sandbox4j.policy.Limits;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import okhttp3.HttpUrl;
import okhttp3.MediaType;
import okhttp3.MultipartBody;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.RequestBody;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Daytona over its REST API ({@code POST/GET/DELETE /sandbox}) and the toolbox proxy
 * ({@code toolboxProxyUrl/<id>/files/bulk-upload}, {@code /process/session...} and its log WebSocket,
 * {@code /process/execute} for listings).
 *
 * <p>A run costs the create, five toolbox calls per exec (upload, session, exec, log WebSocket,
 * session delete: {@link #exec}) and the delete. Every request carries
 * {@code X-Daytona-SDK-Version} ({@link DaytonaSettings#SDK_VERSION}), as the official SDKs' do: the
 * daemon labels stdout and stderr in a session log only for clients that name a version (v0.190
 * {@code pkg/session/common.go}, {@code IsCombinedOutput}); without one it strips the labels and the
 * streams could not be told apart.
 *
 * <p>Lock-down after setup: {@code POST /sandbox/{id}/network-settings} with all three egress fields
 * (daytona/clients {@code openapi-specs/api.json} {@code updateNetworkSettings}), then the sandbox
 * record is read until it holds exactly the code's egress, for at most {@value #LOCK_DOWN_CONFIRM_SECONDS}
 * seconds; past that the lock-down is refused and the sandbox torn down. That is as far as Daytona
 * reports: its docs say the API applies the rules on the runner, then persists them on the record
 * ({@code network-limits.mdx}), but on job-driven runners (daytonaio/daytona v0.190
 * {@code runnerAdapter.v2.ts}) the record is written when the job is queued, and only runners see the
 * job's end (listed in {@code capabilities()} as an implicit allowance).
 */
public final class DaytonaDriver implements SandboxDriver<DaytonaHandle> {
    /** A whole file download, however large (the cap bounds what is kept, not the wait). */
    private static final Duration FILE_DEADLINE = Duration.ofSeconds(120);
    private static final Logger log = LoggerFactory.getLogger(DaytonaDriver.class);
    /** Sandbox names are this plus the run id: a second, strongly consistent way to find a lost create. */
    static final String NAME_PREFIX = "sandbox4j-";
    /** Where uploaded programs go (the daemon creates the directory). */
    static final String PROGRAM_DIR = "/tmp/sandbox4j/";
    /** Time on top of a listing's own timeout for the daemon to answer after it killed the script. */
    private static final Duration EXEC_GRACE = Duration.ofSeconds(30);
    /** How long a lock-down may take to show on the sandbox record (at most; the start timeout if shorter). */
    static final int LOCK_DOWN_CONFIRM_SECONDS = 30;
    private static final Duration LOCK_DOWN_CONFIRM = Duration.ofSeconds(LOCK_DOWN_CONFIRM_SECONDS);
    /** A listing's own timeout at the daemon. */
    private static final Duration LIST_DEADLINE = Duration.ofSeconds(60);
    private static final Duration MAX_POLL_INTERVAL = Duration.ofSeconds(1);
    /** How long a command whose log ended may take to report its exit code (the exec budget bounds it too). */
    private static final Duration EXIT_CODE_WAIT = Duration.ofSeconds(8);
    private static final MediaType OCTET_STREAM = MediaType.get("application/octet-stream");
    private static final Set<String> FAILED_STATES = Set.of("error", "build_failed");
    /** States from which a new sandbox will not reach {@code started} by itself. */
    private static final Set<String> ENDED_STATES =
            Set.of("destroyed", "destroying", "stopped", "stopping", "archived", "archiving");

    private final HttpTransport http;
    private final String target;
    private final String snapshot;
    private final String image;
    private final Duration startTimeout;
    private final Duration pollInterval;
    private final Duration requestTimeout;
    private final Capabilities capabilities;
    /** Sandboxes whose create returned an id but did not finish, by run id, for {@link #findByRunId}. */
    private final Map<String, DaytonaHandle> unfinished = new ConcurrentHashMap<>();

    /** Daytona's file upload answers {@code {"errors":[...]}} without a message. */
    static final ErrorBody ERROR_BODY = n -> {
        ErrorBody.Parsed p = ErrorBody.STANDARD.read(n);
        return p.message() == null && n.path("errors").isArray()
                ? new ErrorBody.Parsed(p.code(), ErrorBody.text(n.path("errors"))) : p;
    };

    private static final OkHttpClient DEFAULT_CLIENT = new OkHttpClient.Builder()
            .dispatcher(HttpTransport.daemonDispatcher()) // the followed session log's reader: no 60 s wait at exit
            .connectTimeout(Duration.ofSeconds(15))
            .writeTimeout(Duration.ofSeconds(60))
            .build();

    public DaytonaDriver(DaytonaSettings settings) {
        // The transport bounds every call by its own deadline (no socket read timeout: a synchronous
        // exec sends nothing until the command ends) and turns OkHttp's own re-sends off.
        OkHttpClient client = settings.client == null ? DEFAULT_CLIENT : settings.client;
        this.http = HttpTransport.builder(DaytonaPolicy.PROVIDER)
                .baseUrl(settings.apiUrl.toString())
                .client(client)
                .secretHeader("Authorization", "Bearer ", settings.apiKey)
                .errorBody(ERROR_BODY)
                .header("Accept", "application/json")
                .header("User-Agent", DaytonaSettings.USER_AGENT)
                .header("X-Daytona-SDK-Version", DaytonaSettings.SDK_VERSION)
                .unaryTimeout(settings.requestTimeout)
                .build();
        this.target = settings.target;
        this.snapshot = settings.snapshot;
        this.image = settings.image;
        this.startTimeout = settings.startTimeout;
        this.pollInterval = settings.pollInterval;
        this.requestTimeout = settings.requestTimeout;
        this.capabilities = DaytonaPolicy.capabilities(image != null);
    }

    @Override
    public String provider() {
        return DaytonaPolicy.PROVIDER;
    }

    @Override
    public Capabilities capabilities() {
        return capabilities;
    }

    // ---------------------------------------------------------------- create

    @Override
    public DaytonaHandle create(CreateRequest request) throws InterruptedException {
        ObjectNode body = createBody(request);
        Request post = http.request(http.url("sandbox")).post(HttpTransport.jsonBody(body)).build();
        JsonNode created;
        try {
            created = http.call(post, false);
        } catch (SandboxException e) {
            throw mayHaveCreated(e);
        }
        String id = text(created, "id");
        if (id == null) {
            throw SandboxException.builder("daytona: POST /sandbox answered without a sandbox id")
                    .provider(provider()).requestMayHaveSucceeded(true).build();
        }
        String runId = request.runId();
        // From here on a failure leaves a sandbox behind: the lifecycle finds it through findByRunId.
        unfinished.put(runId, new DaytonaHandle(id, runId, null));
        try {
            checkEgressRecorded(id, body, created);
            JsonNode started = awaitStarted(id, created);
            DaytonaHandle handle = new DaytonaHandle(id, runId, toolboxUrl(id, started));
            unfinished.remove(runId);
            log.debug("daytona sandbox {} started (run id {})", id, runId);
            return handle;
        } catch (SandboxException e) {
            throw copy(e.toBuilder().requestMayHaveSucceeded(true));
        } catch (RuntimeException e) {
            throw SandboxException.builder("daytona: sandbox " + id + " could not be prepared: " + e)
                    .provider(provider()).cause(e).requestMayHaveSucceeded(true).build();
        }
    }

    ObjectNode createBody(CreateRequest request) {
        SandboxSpec spec = request.spec();
        ObjectNode b = HttpTransport.JSON.createObjectNode();
        b.put("name", NAME_PREFIX + request.runId());
        if (image != null) {
            b.putObject("buildInfo").put("dockerfileContent", "FROM " + image + "\n");
        } else if (snapshot != null) {
            b.put("snapshot", snapshot);
        }
        ObjectNode env = b.putObject("env");
        new TreeMap<>(spec.env()).forEach(env::put);
        ObjectNode labels = b.putObject("labels");
        request.labels().forEach(labels::put);
        if (target != null) {
            b.put("target", target);
        }
        if (image != null) {
            Limits limits = spec.limits();
            limits.vcpus().ifPresent(v -> b.put("cpu", v));
            limits.memoryMib().ifPresent(m -> b.put("memory", DaytonaPolicy.gib(m)));
            limits.diskMib().ifPresent(d -> b.put("disk", DaytonaPolicy.gib(d)));
        }
        int minutes = minutes(request.lifetime());
        // autoStopInterval: stopped after this long without toolbox activity (a crashed client), and an
        // ephemeral sandbox (autoDeleteInterval 0) is deleted once stopped. ttlMinutes: a wall-clock cap
        // on servers that know it (older ones ignore unknown fields).
        b.put("autoStopInterval", minutes);
        b.put("autoDeleteInterval", 0);
        b.put("ttlMinutes", minutes);
        DaytonaPolicy.putEgress(b, request.initialEgress());
        return b;
    }

    /**
     * Fails closed when the sandbox does not hold the egress field we sent: a server older than a
     * field (domainAllowList came in June 2026) ignores it silently and the sandbox would be open.
     */
    private void checkEgressRecorded(String id, ObjectNode sent, JsonNode created) {
        for (String field : List.of("networkBlockAll", "networkAllowList", "domainAllowList")) {
            JsonNode want = sent.get(field);
            JsonNode got = created.get(field);
            if (want != null && !want.equals(got)) {
                throw SandboxException.builder("daytona: sandbox " + id + " does not hold the requested egress ("
                                + field + " sent " + want + ", the sandbox has " + (got == null ? "none" : got)
                                + "); the server may predate the field")
                        .provider(provider()).build();
            }
        }
    }

    /**
     * A create failure whose answer was an HTTP error other than auth or rate limiting may still have
     * left a sandbox (Daytona answers 400 "Sandbox failed to start" after inserting it; a 5xx says
     * nothing): flag it so the lifecycle looks the run id up and destroys what it finds.
     */
    private SandboxException mayHaveCreated(SandboxException e) {
        int status = e.httpStatus().orElse(0);
        if (e.requestMayHaveSucceeded() || status == 0 || status == 401 || status == 403 || status == 429) {
            return e;
        }
        return copy(e.toBuilder().requestMayHaveSucceeded(true));
    }

    private JsonNode awaitStarted(String id, JsonNode sandbox) throws InterruptedException {
        JsonNode[] current = {sandbox};
        Optional<JsonNode> started = http.backoff().poll(startTimeout, pollInterval, MAX_POLL_INTERVAL, look -> {
            if (look > 1) {
                try {
                    current[0] = http.call(http.request(sandboxUrl(id)).get().build(), true);
                } catch (SandboxNotFoundException e) {
                    throw SandboxException.builder("daytona: sandbox " + id + " disappeared while starting")
                            .provider(provider()).httpStatus(404).build();
                }
                log.debug("daytona sandbox {} state {}", id, text(current[0], "state"));
            }
            String state = text(current[0], "state");
            if ("started".equals(state)) {
                return Optional.of(current[0]);
            }
            if (state != null && (FAILED_STATES.contains(state) || ENDED_STATES.contains(state))) {
                String reason = text(current[0], "errorReason");
                throw SandboxException.builder(http.redact("daytona: sandbox " + id + " did not start: state "
                                + state + (reason == null ? "" : " (" + reason + ")")))
                        .provider(provider()).providerCode(state).build();
            }
            return Optional.empty();
        });
        return started.orElseThrow(() -> SandboxException.builder("daytona: sandbox " + id + " did not start within "
                        + startTimeout.toSeconds() + " s (last state " + text(current[0], "state") + ")")
                .provider(provider()).retriable(true).build());
    }

    private HttpUrl toolboxUrl(String id, JsonNode sandbox) throws InterruptedException {
        String base = text(sandbox, "toolboxProxyUrl");
        if (base == null || base.isBlank()) {
            HttpUrl url = sandboxUrl(id).newBuilder().addPathSegment("toolbox-proxy-url").build();
            base = text(http.call(http.request(url).get().build(), true), "url");
        }
        HttpUrl parsed = base == null ? null : HttpUrl.parse(base);
        if (parsed == null) {
            throw SandboxException.builder("daytona: sandbox " + id + " has no usable toolboxProxyUrl")
                    .provider(provider()).build();
        }
        if (http.baseUrl().isHttps() && !parsed.isHttps()) {
            // the API key goes to the toolbox proxy too: never in clear text when the API itself is https
            throw SandboxException.builder("daytona: refusing the plain-http toolbox proxy " + parsed.host()
                    + " of sandbox " + id).provider(provider()).build();
        }
        return parsed.newBuilder().addPathSegment(HttpTransport.pathSegment(id)).build();
    }

    // ---------------------------------------------------------------- lookup and destroy

    /**
     * {@code GET /sandbox/{id}}, as the SDK's {@code daytona.get(id)} reads a sandbox: labels, state
     * ({@code started} is running), the egress fields it holds and its auto-stop minutes, compared with
     * what a create for the expected spec sends.
     */
    @Override
    public Attachable<DaytonaHandle> attach(String sandboxId, SandboxSpec expected) throws InterruptedException {
        JsonNode d = http.call(http.request(sandboxUrl(sandboxId)).get().build(), true);
        String id = text(d, "id");
        if (id == null || !id.equals(sandboxId)) {
            throw SandboxException.builder("daytona: GET /sandbox/" + sandboxId + " answered for another sandbox ("
                    + id + ")").provider(provider()).build();
        }
        Map<String, String> labels = new java.util.LinkedHashMap<>();
        d.path("labels").properties().forEach(f -> labels.put(f.getKey(), f.getValue().asText()));
        String state = text(d, "state");
        boolean running = "started".equals(state);
        DaytonaHandle handle = new DaytonaHandle(id, labels.get(CreateRequest.RUN_ID_LABEL), running ? toolboxUrl(id, d) : null);
        Attachable.Builder<DaytonaHandle> b = Attachable.builder(handle).labels(labels).state(state, running);
        DaytonaPolicy.compareReported(expected.egress(), d, b);
        if (d.path("autoStopInterval").isIntegralNumber()) {
            b.compare("autoStopInterval", minutes(expected.effectiveLifetime()), d.path("autoStopInterval").asInt());
        }
        return b.build();
    }

    /**
     * The sandbox a failed create left behind, when its answer gave the id (remembered, so no lookup);
     * else those the API lists with the run-id label
     * ({@code GET /sandbox?labels={"sandbox4j-run-id":"<run id>"}}), else the one named
     * {@code sandbox4j-<run id>} (the list is eventually consistent; a lookup by name is not). Only
     * sandboxes that really carry the run-id label are returned, so a server that ignored the filter
     * cannot make us delete someone else's sandbox.
     */
    @Override
    public List<DaytonaHandle> findByRunId(String runId) throws InterruptedException {
        DaytonaHandle known = unfinished.remove(runId);
        if (known != null) {
            return List.of(known); // one create per run id can have reached the server: this is it
        }
        List<DaytonaHandle> found = new ArrayList<>();
        ObjectNode filter = HttpTransport.JSON.createObjectNode().put(CreateRequest.RUN_ID_LABEL, runId);
        HttpUrl list = http.url("sandbox").newBuilder().addQueryParameter("labels", filter.toString()).build();
        for (JsonNode item : http.call(http.request(list).get().build(), true).path("items")) {
            addIfLabelled(found, item, runId);
        }
        if (found.isEmpty()) {
            try {
                addIfLabelled(found, http.call(http.request(sandboxUrl(NAME_PREFIX + runId)).get().build(), true), runId);
            } catch (SandboxNotFoundException e) {
                // nothing was created
            }
        }
        return found;
    }

    /**
     * {@code GET /sandbox?labels={"sandbox4j-owner":"<owner>"}}, page by page ({@code nextCursor}),
     * each sandbox with its labels. At most 100 pages.
     */
    @Override
    public List<Labelled<DaytonaHandle>> listLabelled(String owner) throws InterruptedException {
        List<Labelled<DaytonaHandle>> out = new ArrayList<>();
        String cursor = null;
        for (int page = 0; page < 100; page++) {
            HttpUrl.Builder u = http.url("sandbox").newBuilder();
            if (owner != null) {
                u.addQueryParameter("labels",
                        HttpTransport.JSON.createObjectNode().put(CreateRequest.OWNER_LABEL, owner).toString());
            }
            if (cursor != null) {
                u.addQueryParameter("cursor", cursor);
            }
            JsonNode answer = http.call(http.request(u.build()).get().build(), true);
            for (JsonNode item : answer.path("items")) {
                String id = text(item, "id");
                String runId = text(item.path("labels"), CreateRequest.RUN_ID_LABEL);
                if (id == null || runId == null) {
                    continue;
                }
                Map<String, String> labels = new java.util.LinkedHashMap<>();
                item.path("labels").properties().forEach(f -> labels.put(f.getKey(), f.getValue().asText()));
                out.add(new Labelled<>(new DaytonaHandle(id, runId, null), labels));
            }
            cursor = text(answer, "nextCursor");
            if (cursor == null) {
                break;
            }
        }
        return out;
    }

    @Override
    public Duration createDeadline() {
        return Duration.ofSeconds(60); // the API holds a create up to 30 s; starting may take as long again
    }

    private static void addIfLabelled(List<DaytonaHandle> found, JsonNode item, String runId) {
        String id = text(item, "id");
        if (id != null && runId.equals(text(item.path("labels"), CreateRequest.RUN_ID_LABEL))
                && found.stream().noneMatch(s -> s.id().equals(id))) {
            found.add(new DaytonaHandle(id, runId, null));
        }
    }

    /**
     * {@code DELETE /sandbox/{id}}, once: true when deleted, false on 404 (already gone). A 409 (a state
     * change is pending, e.g. right after create), a 5xx or an IO error is thrown as retriable; the
     * lifecycle retries on its teardown deadline.
     */
    @Override
    public boolean destroy(DaytonaHandle sandbox) throws InterruptedException {
        Request delete = http.request(sandboxUrl(sandbox.id())).delete().build();
        try {
            http.execute(delete, requestTimeout, response -> null);
            return true;
        } catch (SandboxNotFoundException e) {
            return false;
        } catch (ClientDeadlineException e) {
            throw SandboxException.builder("daytona: DELETE of sandbox " + sandbox.id() + " timed out")
                    .provider(provider()).retriable(true).build();
        } catch (IOException e) {
            throw http.ioError(delete, e, false);
        }
    }

    // ---------------------------------------------------------------- lock-down

    /**
     * {@code POST /sandbox/{id}/network-settings} (a full replacement: safe to repeat), then the record
     * (the answer, then {@code GET /sandbox/{id}} with backoff) until it holds exactly {@code egress};
     * refused ({@link UnsupportedPolicyException}: the lifecycle tears down) when Daytona refuses the
     * body (400) or does not report the new egress within {@value #LOCK_DOWN_CONFIRM_SECONDS} s.
     */
    @Override
    public void updateEgress(DaytonaHandle sandbox, EgressPolicy egress) throws InterruptedException {
        HttpUrl url = sandboxUrl(sandbox.id()).newBuilder().addPathSegment("network-settings").build();
        Request post = http.request(url).post(HttpTransport.jsonBody(DaytonaPolicy.networkSettings(egress))).build();
        JsonNode record;
        try {
            record = http.call(post, true);
        } catch (SandboxException e) {
            if (e.httpStatus().orElse(0) == 400) {
                throw new UnsupportedPolicyException(provider(), List.of("Daytona refused the lock-down to " + egress
                        + ": " + e.getMessage()));
            }
            throw e;
        }
        Duration bound = startTimeout.compareTo(LOCK_DOWN_CONFIRM) < 0 ? startTimeout : LOCK_DOWN_CONFIRM;
        JsonNode[] current = {record};
        String[] differs = {null};
        Optional<Boolean> confirmed = http.backoff().poll(bound, pollInterval, MAX_POLL_INTERVAL, look -> {
            if (look > 1) {
                current[0] = http.call(http.request(sandboxUrl(sandbox.id())).get().build(), true);
            }
            differs[0] = DaytonaPolicy.reportedDiffers(egress, current[0]);
            return differs[0] == null ? Optional.of(Boolean.TRUE) : Optional.empty();
        });
        if (confirmed.isEmpty()) {
            throw new UnsupportedPolicyException(provider(), List.of("Daytona did not report the lock-down of sandbox "
                    + sandbox.id() + " to " + egress + " within " + bound.toMillis() + " ms (" + differs[0] + ")"));
        }
        log.debug("daytona sandbox {} locked down to {}", sandbox.id(), egress);
    }

    // ---------------------------------------------------------------- files and exec

    /** One {@code files/bulk-upload} request; relative paths land in the daemon's working directory. */
    @Override
    public void writeFiles(DaytonaHandle sandbox, List<InputFile> files) throws InterruptedException {
        List<Upload> uploads = new ArrayList<>();
        for (InputFile f : files) {
            uploads.add(new Upload(f.path(), f.content()));
        }
        upload(sandbox, uploads);
    }

    /**
     * The daemon's {@code GET files/download?path=} ({@code apps/daemon/pkg/toolbox/fs/download_file.go}:
     * the raw bytes, 404 for a missing file), read with a cap: the call is cancelled past it. A relative
     * path resolves against the daemon's working directory, where input files land and code runs. The
     * daemon follows links inside the sandbox's own VM; nothing of this host is reachable through it.
     */
    @Override
    public SandboxFile readFile(DaytonaHandle sandbox, String path, long maxBytes) throws InterruptedException {
        HttpUrl url = toolbox(sandbox, "files/download").newBuilder().addQueryParameter("path", path).build();
        BoundedDownload d;
        try {
            d = BoundedDownload.get(http, http.request(url).get().build(), maxBytes, FILE_DEADLINE);
        } catch (SandboxException e) {
            if (e.httpStatus().orElse(0) == 404) {
                throw SandboxException.builder("daytona: " + path + ": no such file in sandbox " + sandbox.id())
                        .provider(provider()).httpStatus(404).build();
            }
            throw e;
        }
        return SandboxFile.builder(path).content(d.content()).size(d.size()).build();
    }

    /**
     * {@link ListingScript} through {@code process/execute}: the daemon's own listing
     * ({@code GET /files?path=}, {@code apps/daemon/pkg/toolbox/fs/list_files.go} and
     * {@code get_file_info.go} in daytonaio/daytona v0.190) stats every entry with {@code os.Stat}, which
     * follows links: a link to {@code /etc} would come back as a directory, and listing it would list
     * {@code /etc}. The script lists with {@code find -P} and refuses a link on the path; its answer is
     * read up to the listing cap (stdout and stderr come mixed: the nonce frame tells ours apart).
     */
    @Override
    public List<FileEntry> listFiles(DaytonaHandle sandbox, String directory) throws InterruptedException {
        ListingScript listing = ListingScript.of(directory);
        ObjectNode body = HttpTransport.JSON.createObjectNode()
                .put("command", listing.shellLine())
                .put("timeout", seconds(LIST_DEADLINE));
        Request request = http.request(toolbox(sandbox, "process/execute")).post(HttpTransport.jsonBody(body)).build();
        StringBuilder out = new StringBuilder();
        ExecResponseReader.Parsed parsed;
        try {
            parsed = http.stream(request, LIST_DEADLINE.plus(EXEC_GRACE), response -> ExecResponseReader.read(
                    response.body().byteStream(), text -> {
                        out.append(text, 0, Math.min(text.length(), ListingScript.MAX_OUTPUT_BYTES + 1 - out.length()));
                        return out.length() <= ListingScript.MAX_OUTPUT_BYTES;
                    }));
        } catch (ClientDeadlineException e) {
            throw SandboxException.builder("daytona: listing " + (directory.isEmpty() ? "." : directory) + " in sandbox "
                    + sandbox.id() + " took longer than " + LIST_DEADLINE.toSeconds() + " s").provider(provider()).build();
        } catch (IOException e) {
            throw http.ioError(request, e, false);
        }
        return listing.parse(out.toString().getBytes(StandardCharsets.UTF_8), parsed.capped, provider(), sandbox.id());
    }

    private void upload(DaytonaHandle sandbox, List<Upload> uploads) throws InterruptedException {
        MultipartBody.Builder form = new MultipartBody.Builder().setType(MultipartBody.FORM);
        int i = 0;
        for (Upload u : uploads) {
            // the daemon needs each path part before its file part ("missing .path metadata" otherwise)
            form.addFormDataPart("files[" + i + "].path", u.path);
            String fileName = u.path.substring(u.path.lastIndexOf('/') + 1);
            form.addFormDataPart("files[" + i + "].file", fileName, RequestBody.create(u.content, OCTET_STREAM));
            i++;
        }
        Request post = http.request(toolbox(sandbox, "files/bulk-upload")).post(form.build()).build();
        http.call(post, true); // rewriting the same bytes to the same paths is idempotent
    }

    /**
     * Every exec runs as a session command whose log is followed as it is written (the daemon's own
     * streaming protocol, {@link SessionLogStream}), with or without a listener: the program is
     * uploaded ({@code files/bulk-upload}), a session created ({@code POST process/session}), the fixed
     * command ({@link #command}) started in it asynchronously ({@code POST process/session/{id}/exec}
     * with {@code runAsync}), its log followed over the WebSocket until both streams' end frames
     * arrived, and the session deleted ({@code DELETE process/session/{id}}, which kills whatever is
     * left of the command's process group): five toolbox calls. Should the daemon close the log
     * without the frames, the exit code is read ({@code GET process/session/{id}/command/{cmdId}}).
     * The session log labels stdout and stderr, so they come apart, and what arrived before a timeout
     * is kept: the one-call {@code process/code-run} merges them and answers a timeout with a bare 408.
     * The daemon has no timeout for session commands: the budget is kept here, and a command past it,
     * or past the output cap, or whose caller is interrupted, is ended by that delete, keeping what was
     * received. Nothing that may have started code is sent twice: the exec is tried once.
     */
    @Override
    public ExecOutcome exec(DaytonaHandle sandbox, Execution execution, OutputSink sink) throws InterruptedException {
        long deadline = http.backoff().nanoTime() + execution.budget().toNanos();
        Language language = execution.language();
        int n = sandbox.nextUpload();
        String path = PROGRAM_DIR + "exec-" + n + extension(language);
        upload(sandbox, List.of(new Upload(path, execution.code().getBytes(StandardCharsets.UTF_8))));
        String session = "sandbox4j-exec-" + n + "-" + java.util.UUID.randomUUID();
        String nonce = END_FRAME + java.util.UUID.randomUUID().toString().replace("-", "") + ":";
        http.call(http.request(toolbox(sandbox, "process/session")).post(HttpTransport.jsonBody(
                HttpTransport.JSON.createObjectNode().put("sessionId", session))).build(), false);
        SessionLogStream stream = null;
        try {
            JsonNode started;
            Request exec = http.request(toolbox(sandbox, "process/session/" + session + "/exec"))
                    .post(HttpTransport.jsonBody(HttpTransport.JSON.createObjectNode()
                            .put("command", command(language, path, nonce, execution.hardCapBytes()))
                            .put("runAsync", true))).build();
            try {
                started = http.call(exec, false);
            } catch (SandboxException e) {
                throw execFailure(e);
            }
            String commandId = text(started, "cmdId");
            if (commandId == null) {
                throw SandboxException.builder("daytona: the session exec answered without a command id")
                        .provider(provider()).codeMayHaveRun(true).build();
            }
            String command = "process/session/" + session + "/command/" + commandId;
            HttpUrl logs = toolbox(sandbox, command + "/logs").newBuilder().addQueryParameter("follow", "true").build();
            stream = SessionLogStream.open(http.client(), http.request(logs).build(),
                    (stderr, b, off, len) -> stderr ? sink.stderr(b, off, len) : sink.stdout(b, off, len), nonce);
            SessionLogStream.End end = stream.await((deadline - http.backoff().nanoTime()) / 1_000_000L);
            if (end == SessionLogStream.End.EXITED && stream.exitCode() != null) {
                int exit = stream.exitCode();
                return exit < 0 ? ExecOutcome.killed(null) : ExecOutcome.exited(exit);
            }
            if (end == null) {
                return ExecOutcome.timedOut(); // the delete below kills it; what arrived is kept
            }
            if (end == SessionLogStream.End.CAPPED) {
                return ExecOutcome.outputLimit();
            }
            if (end == SessionLogStream.End.FAILED) {
                Integer status = stream.httpStatus();
                Throwable t = stream.failure();
                throw SandboxException.builder(http.redact("daytona: following the log of sandbox " + sandbox.id()
                                + "'s command failed: " + (status != null ? "HTTP " + status : String.valueOf(t))))
                        .provider(provider()).httpStatus(status == null ? 0 : status).codeMayHaveRun(true).build();
            }
            return exitOf(sandbox, command, deadline);
        } finally {
            if (stream != null) {
                stream.cancel();
            }
            deleteSession(sandbox, session);
        }
    }

    /**
     * A failed session exec: a definite refusal (4xx but 409) came before the daemon wrote the command
     * to the session's shell; no answer, a 409 or a 5xx may have started it.
     */
    private SandboxException execFailure(SandboxException e) {
        int status = e.httpStatus().orElse(0);
        boolean mayHaveRun = status == 0 ? e.requestMayHaveSucceeded() : status == 409 || status >= 500;
        return mayHaveRun ? copy(e.toBuilder().codeMayHaveRun(true)) : e;
    }

    /**
     * The session command, in the shell the daemon picked (zsh, bash or sh: POSIX only). It runs the
     * uploaded program, unbuffered, with stdin {@code /dev/null} (the daemon holds an async command's
     * stdin open, for {@code SendInput}), each of its streams through {@code stdbuf -o0 head -c} at the
     * hard cap plus one byte (the daemon's labeler hands on only whole lines: a flood without newlines
     * reaches us, and ends, once {@code head} cuts it; {@code stdbuf -o0} keeps {@code head} from
     * holding what passes), then prints on each stream an end frame, the nonce and the exit code and a
     * newline ({@link SessionLogStream.EndFrame}). The frame ends the stream's last line, so the
     * daemon's labeler adds no newline to the output, and marks that all of the stream arrived. The
     * exit code passes through a temporary file (POSIX has no {@code PIPESTATUS}); without
     * {@code stdbuf} (coreutils) or a temporary file the program runs without the cuts.
     */
    static String command(Language language, String path, String nonce, long hardCapBytes) {
        String run = interpreter(language) + " " + path + " < /dev/null";
        long cut = hardCapBytes == Long.MAX_VALUE ? hardCapBytes : hardCapBytes + 1;
        String head = "stdbuf -o0 head -c " + cut;
        String frame = "printf '%s%s\\n' '" + nonce + "' \"$__s4j_code\"";
        return "if command -v stdbuf >/dev/null 2>&1 && __s4j_ec=$(mktemp 2>/dev/null); then\n"
                + "{ { { " + run + "; echo \"$?\" > \"$__s4j_ec\"; } 2>&1 1>&3 3>&- | " + head + " 1>&2; } 3>&1 | " + head + "; }\n"
                + "__s4j_code=$(cat \"$__s4j_ec\"); rm -f \"$__s4j_ec\"\n"
                + "else\n" + run + "\n__s4j_code=$?\nfi\n"
                + frame + "; " + frame + " >&2\n";
    }

    /** How every end frame's nonce starts (a byte output seldom holds; the rest is random per exec). */
    static final String END_FRAME = "\u001fsandbox4j-end-";

    /**
     * The command's exit code, read once its log ended; the daemon writes the code before it closes
     * the log, so a missing one is read again briefly (the budget still bounds it).
     */
    private ExecOutcome exitOf(DaytonaHandle sandbox, String command, long deadline) throws InterruptedException {
        long left = deadline - http.backoff().nanoTime();
        Duration bound = Duration.ofNanos(Math.max(0, Math.min(left, EXIT_CODE_WAIT.toNanos())));
        Optional<ExecOutcome> outcome = http.backoff().poll(bound, Duration.ofMillis(10), Duration.ofMillis(500), look -> {
            JsonNode code = http.call(http.request(toolbox(sandbox, command)).get().build(), true).path("exitCode");
            if (!code.isIntegralNumber()) {
                return Optional.empty();
            }
            int exit = code.asInt();
            return Optional.of(exit < 0 ? ExecOutcome.killed(null) : ExecOutcome.exited(exit));
        });
        return outcome.orElseThrow(() -> SandboxException.builder("daytona: sandbox " + sandbox.id()
                + " reports no exit code for a command whose log ended").provider(provider()).codeMayHaveRun(true).build());
    }

    /**
     * Deletes the session (the daemon kills its process group), with a pending interrupt cleared then
     * restored (an InterruptedException on its way out has cleared it already).
     */
    private void deleteSession(DaytonaHandle sandbox, String session) {
        boolean flag = Thread.interrupted();
        try {
            Request delete = http.request(toolbox(sandbox, "process/session/" + session)).delete().build();
            http.execute(delete, requestTimeout, response -> null);
        } catch (SandboxNotFoundException e) {
            // gone with the sandbox
        } catch (InterruptedException | ClientDeadlineException | IOException | RuntimeException e) {
            // the sandbox's teardown kills what is left
            log.debug("daytona: deleting session {} of sandbox {} failed: {}", session, sandbox.id(), e.toString());
        } finally {
            if (flag) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private static String extension(Language language) {
        return CodeCommand.of(language).extension();
    }

    /** The session command's interpreter, unbuffered: the log streams what the process writes as it writes it. */
    private static String interpreter(Language language) {
        return String.join(" ", CodeCommand.unbuffered(language).program());
    }

    // ---------------------------------------------------------------- helpers

    /** A changed copy of an exception: the status's subtype for an HTTP answer, else a plain one. */
    /** The copy keeps the mapped exception's type and flags ({@link SandboxException#toBuilder()}): no second mapping. */
    private static SandboxException copy(SandboxException.Builder b) {
        return b.build();
    }

    private HttpUrl sandboxUrl(String idOrName) {
        return http.url("sandbox").newBuilder().addPathSegment(HttpTransport.pathSegment(idOrName)).build();
    }

    private HttpUrl toolbox(DaytonaHandle sandbox, String path) {
        if (sandbox.toolbox() == null) {
            throw new IllegalStateException("sandbox " + sandbox.id() + " has no toolbox URL");
        }
        return sandbox.toolbox().newBuilder().addPathSegments(path).build();
    }

    /** Whole minutes, rounded up, at least one (0 would disable Daytona's auto-stop). */
    static int minutes(Duration d) {
        long m = (d.toMillis() + 59_999) / 60_000;
        return (int) Math.max(1, Math.min(m, Integer.MAX_VALUE));
    }

    /** Whole seconds, rounded up, at least one (0 means no timeout to the daemon). */
    static int seconds(Duration d) {
        long s = (d.toMillis() + 999) / 1000;
        return (int) Math.max(1, Math.min(s, Integer.MAX_VALUE));
    }

    private static String text(JsonNode node, String field) {
        JsonNode n = node.path(field);
        return n.isTextual() ? n.asText() : null;
    }

    @Override
    public String toString() {
        return "DaytonaDriver[" + http.baseUrl() + "]";
    }

    private static final class Upload {
        final String path;
        final byte[] content;

        Upload(String path, byte[] content) {
            this.path = path;
            this.content = content;
        }
    }
}
