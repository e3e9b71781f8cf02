package dev.sandbox4j.vercel.internal;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.sandbox4j.api.Execution;
import dev.sandbox4j.api.FileEntry;
import dev.sandbox4j.api.InputFile;
import dev.sandbox4j.api.exception.SandboxConfigurationException;
import dev.sandbox4j.api.exception.SandboxException;
import dev.sandbox4j.api.SandboxFile;
import dev.sandbox4j.api.exception.SandboxNotFoundException;
import dev.sandbox4j.api.SandboxSpec;
import dev.sandbox4j.spi.CodeCommand;
import dev.sandbox4j.spi.Attachable;
import dev.sandbox4j.spi.CreateRequest;
import dev.sandbox4j.spi.ExecOutcome;
import dev.sandbox4j.spi.Labelled;
import dev.sandbox4j.spi.ListingScript;
import dev.sandbox4j.spi.OutputSink;
import dev.sandbox4j.spi.SandboxDriver;
import dev.sandbox4j.http.BoundedDownload;
import dev.sandbox4j.http.ClientDeadlineException;
import dev.sandbox4j.http.HttpTransport;
import dev.sandbox4j.policy.Capabilities;
import dev.sandbox4j.policy.EgressPolicy;
import dev.sandbox4j.policy.Language;
import dev.sandbox4j.policy.SecretRef;
import dev.sandbox4j.policy.UnsupportedPolicyException;
import java.io.EOFException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicReference;
import okhttp3.HttpUrl;
import okhttp3.MediaType;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Vercel Sandbox over its REST API: create ({@code POST /v3/sandboxes}, or {@code /v2} with a legacy
 * runtime), run ({@code POST /v2/sandboxes/sessions/{id}/cmd} with {@code wait} and {@code logs}, one
 * NDJSON stream), stop ({@code POST .../stop}). A small run is these three requests.
 *
 * <p>Create and run-command are never retried here (a retry could create twice or run the code twice);
 * the lifecycle in sandbox-api decides, and finds a lost create by its name {@code s4j-<runId>}.
 * When the client gives up on a command (deadline, output cap, interrupt, dropped stream) it kills it:
 * closing the stream alone leaves the process running.
 */
public final class VercelDriver implements SandboxDriver<VercelHandle> {
    /** A whole file download, however large (the cap bounds what is kept, not the wait). */
    private static final Duration FILE_DEADLINE = Duration.ofSeconds(120);
    private static final Logger log = LoggerFactory.getLogger(VercelDriver.class);
    public static final String PROVIDER = "vercel";
    /** Sandbox names are this prefix and the run id. */
    public static final String NAME_PREFIX = "s4j-";
    static final String DEFAULT_CWD = "/vercel/sandbox";
    /** Largest command record or error line kept in memory (a command record echoes the argv). */
    static final int MAX_FIELD_BYTES = 1 << 20;
    private static final MediaType GZIP = MediaType.get("application/gzip");
    private static final int SIGKILL = 9;
    /** A listing's own command timeout (Vercel kills it then, whatever this client does). */
    private static final Duration LIST_DEADLINE = Duration.ofSeconds(60);

    private final HttpTransport http;
    private final VercelCredentials credentials;
    private final String image;
    private final String runtime;
    private final Duration execGrace;
    private final Duration killTimeout;
    private final int maxArgvBytes;
    private final Capabilities capabilities = VercelPolicy.capabilities();

    public VercelDriver(VercelSettings settings) {
        HttpTransport.Builder t = HttpTransport.builder(PROVIDER)
                .baseUrl(settings.baseUrl.toString())
                .client(settings.client)
                .header("User-Agent", VercelSettings.USER_AGENT)
                .secretHeader("Authorization", "Bearer ", settings.credentials.token())
                .unaryTimeout(settings.requestTimeout);
        if (settings.retryBaseDelay != null) {
            t.retryBaseDelay(settings.retryBaseDelay);
        }
        this.http = t.build();
        this.credentials = settings.credentials;
        this.image = settings.image;
        this.runtime = settings.runtime;
        this.execGrace = settings.execGrace;
        this.killTimeout = settings.killTimeout;
        this.maxArgvBytes = settings.maxArgvBytes;
    }

    /** The API base URL, for the runner's description. */
    public String baseUrl() {
        return http.baseUrl().toString();
    }

    @Override
    public String provider() {
        return PROVIDER;
    }

    @Override
    public Capabilities capabilities() {
        return capabilities;
    }

    // ---- create, find, destroy ----

    @Override
    public VercelHandle create(CreateRequest request) throws InterruptedException {
        HttpTransport.SecretScope scope = http.secretScope();
        boolean ok = false;
        try {
            VercelHandle session = create(request, scope);
            session.secrets(scope);
            ok = true;
            return session;
        } finally {
            if (!ok) {
                scope.close();
            }
        }
    }

    private VercelHandle create(CreateRequest request, HttpTransport.SecretScope scope) throws InterruptedException {
        SandboxSpec spec = request.spec();
        // the run id travels in the name; the owner and expiry labels (when set) travel as tags
        java.util.Map<String, String> tagMap = new java.util.LinkedHashMap<>(request.labels());
        tagMap.remove(CreateRequest.RUN_ID_LABEL);
        if (tagMap.size() > VercelPolicy.MAX_TAGS) {
            throw new UnsupportedPolicyException(PROVIDER, List.of(spec.labels().size()
                    + " labels (vercel takes at most " + VercelPolicy.MAX_TAGS + " tags"
                    + (tagMap.size() > spec.labels().size() ? ", " + (tagMap.size() - spec.labels().size())
                            + " of them taken by this library's policy, owner and expiry labels" : "") + ")"));
        }
        String name = NAME_PREFIX + request.runId();
        ObjectNode body = HttpTransport.JSON.createObjectNode();
        body.put("projectId", credentials.projectId());
        body.put("name", name);
        body.put("persistent", false); // the server default persists, and bills a snapshot on every stop
        body.putArray("ports");
        body.put("timeout", millis(request.lifetime()));
        spec.limits().vcpus().ifPresent(n -> body.putObject("resources").put("vcpus", n));
        if (runtime != null) {
            body.put("runtime", runtime);
        } else if (image != null) {
            body.put("image", image);
        }
        body.set("networkPolicy", policyJson(request.initialEgress(), scope));
        if (!spec.env().isEmpty()) {
            ObjectNode env = body.putObject("env");
            spec.env().forEach(env::put);
        }
        if (!tagMap.isEmpty()) {
            ObjectNode tags = body.putObject("tags");
            tagMap.forEach(tags::put);
        }
        Request post = http.request(url(runtime == null ? "v3/sandboxes" : "v2/sandboxes"))
                .post(HttpTransport.jsonBody(body)).build();
        JsonNode answer;
        try {
            answer = http.call(post, false);
        } catch (SandboxException e) {
            int status = e.httpStatus().orElse(0);
            if (status == 409) {
                // our own name taken: the sandbox may exist (a 5xx is flagged so by the transport); the
                // lifecycle looks it up by name and stops it rather than retry
                throw e.toBuilder().requestMayHaveSucceeded(true).build(); // keeps the mapped type and flags
            }
            throw e;
        }
        VercelHandle session = sessionFrom(answer, name, request.runId());
        if (session == null) {
            throw SandboxException.builder("vercel: create answered without a session id for sandbox " + name)
                    .provider(PROVIDER).requestMayHaveSucceeded(true).build();
        }
        String weaker = VercelPolicy.weakerThanRequested(request.initialEgress(), reportedPolicy(answer));
        if (weaker != null) {
            refuseRunning(session, weaker);
        }
        log.debug("vercel: created sandbox {} (session {})", session.name(), session.id());
        return session;
    }

    private static JsonNode reportedPolicy(JsonNode answer) {
        JsonNode p = answer.path("session").path("networkPolicy");
        return p.isObject() ? p : answer.path("sandbox").path("networkPolicy");
    }

    /** Stops a session whose egress is weaker than requested, then refuses; nothing runs in it. */
    private void refuseRunning(VercelHandle session, String why) throws InterruptedException {
        try {
            destroy(session);
        } catch (SandboxException e) {
            // the lifecycle finds it by name and keeps trying
            throw SandboxException.builder("vercel: " + why + "; stopping its session failed: " + e.getMessage())
                    .provider(PROVIDER).requestMayHaveSucceeded(true).cause(e).build();
        }
        throw new UnsupportedPolicyException(PROVIDER, List.of(why));
    }

    @Override
    public List<VercelHandle> findByRunId(String runId) throws InterruptedException {
        String name = NAME_PREFIX + runId;
        HttpUrl u = url("v2/sandboxes/" + name).newBuilder()
                .addQueryParameter("projectId", credentials.projectId())
                .addQueryParameter("resume", "false") // never boot a new session while cleaning up
                .build();
        try {
            VercelHandle s = sessionFrom(http.call(http.request(u).get().build(), true), name, runId);
            return s == null ? List.of() : List.of(s);
        } catch (SandboxNotFoundException e) {
            return List.of();
        }
    }

    /**
     * As the SDK's {@code Sandbox.get}: a session id ({@link VercelHandle#id()}, what {@code Sandbox.id()}
     * returns) is read with {@code GET /v2/sandboxes/sessions/{id}} for its {@code sourceSandboxName}, then
     * the named sandbox with {@code GET /v2/sandboxes/{name}?projectId=&resume=false} (never booting a
     * session); an id starting with {@code s4j-} is taken as the name. Running means the named sandbox's
     * current session is that session and runs. Compared: the egress mode Vercel reports (allow-all,
     * deny-all or custom, and never weaker than expected) and the timeout; the domain lists are checked
     * through the policy label.
     */
    @Override
    public Attachable<VercelHandle> attach(String sandboxId, SandboxSpec expected) throws InterruptedException {
        String name = sandboxId.startsWith(NAME_PREFIX) ? sandboxId : null;
        String session = name == null ? sandboxId : null;
        if (name == null) {
            JsonNode s = http.call(http.request(url("v2/sandboxes/sessions/" + sandboxId)).get().build(), true);
            name = text(s.path("session").path("sourceSandboxName"));
            if (name == null) {
                throw new SandboxNotFoundException(SandboxException.builder("vercel: session " + sandboxId
                        + " names no sandbox it belongs to").provider(PROVIDER));
            }
        }
        HttpUrl u = url("v2/sandboxes/" + name).newBuilder()
                .addQueryParameter("projectId", credentials.projectId())
                .addQueryParameter("resume", "false")
                .build();
        JsonNode answer = http.call(http.request(u).get().build(), true);
        String runId = name.startsWith(NAME_PREFIX) ? name.substring(NAME_PREFIX.length()) : null;
        VercelHandle h = sessionFrom(answer, name, runId);
        if (h == null) {
            throw new SandboxNotFoundException(SandboxException.builder("vercel: sandbox " + name + " has no session")
                    .provider(PROVIDER));
        }
        java.util.Map<String, String> labels = new java.util.LinkedHashMap<>();
        answer.path("sandbox").path("tags").properties().forEach(f -> labels.put(f.getKey(), f.getValue().asText()));
        if (runId != null) {
            labels.put(CreateRequest.RUN_ID_LABEL, runId); // the run id travels in the name
        }
        String status = text(answer.path("session").path("status"));
        if (status == null) {
            status = text(answer.path("sandbox").path("status"));
        }
        boolean current = session == null || session.equals(h.id());
        boolean running = current && "running".equals(status);
        Attachable.Builder<VercelHandle> b = Attachable.builder(h).labels(labels)
                .state(current ? String.valueOf(status) : "replaced by session " + h.id(), running);
        EgressPolicy want = expected.egress();
        JsonNode reported = reportedPolicy(answer);
        if (reported.isObject()) {
            b.compare("networkPolicy.mode", want.isAllowAll() ? "allow-all" : want.isDenyAll() ? "deny-all" : "custom",
                    reported.path("mode").asText(null));
            String weaker = VercelPolicy.weakerThanRequested(want, reported);
            if (weaker != null) {
                b.difference(weaker);
            }
        }
        JsonNode timeout = answer.path("session").path("timeout");
        if (timeout.isIntegralNumber()) {
            b.compare("timeout", millis(expected.effectiveLifetime()), timeout.asLong());
        }
        return b.build();
    }

    @Override
    public boolean destroy(VercelHandle s) throws InterruptedException {
        Request stop = http.request(sessionUrl(s, "stop"))
                .post(RequestBody.create(new byte[0], HttpTransport.JSON_TYPE)).build();
        try {
            // the lifecycle retries retriable failures on its teardown deadline
            JsonNode answer = http.call(stop, false);
            if (endedBeforeTheStop(answer.path("session"))) {
                log.debug("vercel: session {} of {} had already ended ({})", s.id(), s.name(),
                        text(answer.path("session").path("status")));
                return false;
            }
            log.debug("vercel: stopped session {} of {}", s.id(), s.name());
            return true;
        } catch (SandboxException e) {
            int status = e.httpStatus().orElse(0);
            boolean stopping = status == 422 && e.providerCode().filter("sandbox_stopping"::equals).isPresent();
            if (status == 404 || status == 410 || stopping) {
                return false;
            }
            throw e;
        }
    }

    /**
     * Whether a stop's 200 answer shows a session that had ended before the stop: it failed or was
     * aborted, or it stopped at or after its start plus its timeout (the provider's clock ended it). Server
     * timestamps only, compared with each other; a session someone else stopped before its timeout is
     * indistinguishable from one this stop ended, and counts as destroyed.
     */
    static boolean endedBeforeTheStop(JsonNode session) {
        String status = text(session.path("status"));
        if ("failed".equals(status) || "aborted".equals(status)) {
            return true;
        }
        JsonNode stoppedAt = session.path("stoppedAt");
        JsonNode timeout = session.path("timeout");
        JsonNode started = session.path("startedAt").isIntegralNumber() ? session.path("startedAt") : session.path("createdAt");
        return "stopped".equals(status) && stoppedAt.isIntegralNumber() && timeout.isIntegralNumber()
                && started.isIntegralNumber() && stoppedAt.asLong() >= started.asLong() + timeout.asLong();
    }

    private static VercelHandle sessionFrom(JsonNode answer, String name, String runId) {
        JsonNode session = answer.path("session");
        JsonNode sandbox = answer.path("sandbox");
        String id = text(session.path("id"));
        if (id == null) {
            id = text(sandbox.path("currentSessionId"));
        }
        if (id == null) {
            return null;
        }
        String actualName = text(sandbox.path("name"));
        String cwd = text(session.path("cwd"));
        return new VercelHandle(id, actualName == null ? name : actualName, cwd == null ? DEFAULT_CWD : cwd, runId);
    }

    // ---- files and egress ----

    @Override
    public void writeFiles(VercelHandle s, List<InputFile> files) throws InterruptedException {
        String base = relative(s.cwd());
        TarGz tar = new TarGz(System.currentTimeMillis() / 1000);
        Set<String> dirs = new LinkedHashSet<>();
        for (InputFile f : files) {
            String[] parts = f.path().split("/");
            StringBuilder dir = new StringBuilder(base);
            for (int i = 0; i < parts.length - 1; i++) {
                dir.append(dir.length() == 0 ? "" : "/").append(parts[i]);
                if (dirs.add(dir.toString())) {
                    tar.add(TarGz.Entry.directory(dir.toString(), 0755));
                }
            }
        }
        for (InputFile f : files) {
            tar.add(TarGz.Entry.file(base.isEmpty() ? f.path() : base + "/" + f.path(), 0644, f.content()));
        }
        upload(s, tar.toBytes());
    }

    /** Unpacks a gzip tar at the root of the session's filesystem (entry names relative to "/"). */
    private void upload(VercelHandle s, byte[] tarGz) throws InterruptedException {
        Request post = http.request(sessionUrl(s, "fs/write")).header("x-cwd", "/")
                .post(RequestBody.create(tarGz, GZIP)).build();
        try {
            http.call(post, true); // writing the same files twice is harmless
        } catch (SandboxException e) {
            throw sessionError(e, s, false);
        }
    }

    /**
     * {@code POST fs/read} with {@code {"path", "cwd"}}, as the official SDK's {@code readFileToBuffer}
     * sends it; the raw bytes come back, kept up to the cap (the call is cancelled past it). A 404 is a
     * missing file. Vercel resolves the path in the session's own VM; nothing of this host is reachable.
     */
    @Override
    public SandboxFile readFile(VercelHandle s, String path, long maxBytes) throws InterruptedException {
        ObjectNode body = HttpTransport.JSON.createObjectNode().put("path", path).put("cwd", s.cwd());
        Request post = http.request(sessionUrl(s, "fs/read")).post(HttpTransport.jsonBody(body)).build();
        BoundedDownload d;
        try {
            d = BoundedDownload.get(http, post, maxBytes, FILE_DEADLINE);
        } catch (SandboxException e) {
            if (e.httpStatus().orElse(0) == 404) {
                throw SandboxException.builder("vercel: " + path + ": no such file in session " + s.id())
                        .provider(PROVIDER).httpStatus(404).build();
            }
            throw sessionError(e, s, false);
        }
        return SandboxFile.builder(path).content(d.content()).size(d.size()).build();
    }

    /**
     * Vercel's API lists nothing (vercel.md section 3: {@code fs/read}, {@code fs/write} and
     * {@code fs/mkdir} only), so a listing is {@link ListingScript}: a fixed bash script run as a command
     * of its own ({@code POST .../cmd} with {@code wait} and {@code logs}, the directory and a random
     * nonce as arguments), its stdout read up to the listing cap. No link is followed.
     */
    @Override
    public List<FileEntry> listFiles(VercelHandle s, String directory) throws InterruptedException {
        ListingScript listing = ListingScript.of(directory);
        ArrayNode args = HttpTransport.JSON.createArrayNode().add("-c").add(ListingScript.SCRIPT);
        listing.arguments().forEach(args::add);
        ObjectNode body = HttpTransport.JSON.createObjectNode();
        body.put("command", "bash");
        body.set("args", args);
        body.putObject("env");
        body.put("sudo", false);
        body.put("wait", true);
        body.put("logs", true);
        body.put("timeout", LIST_DEADLINE.toMillis());
        Request post = http.request(sessionUrl(s, "cmd")).post(HttpTransport.jsonBody(body)).build();
        AtomicReference<String> commandId = new AtomicReference<>();
        java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
        StreamEnd end;
        try {
            end = http.stream(post, LIST_DEADLINE.plus(execGrace), r -> readStream(r, new CommandStreamReader.Output() {
                @Override
                public boolean write(String stream, byte[] b, int off, int len) {
                    if (stream.equals("stdout")) {
                        out.write(b, off, Math.min(len, ListingScript.MAX_OUTPUT_BYTES + 1 - out.size()));
                    }
                    return out.size() <= ListingScript.MAX_OUTPUT_BYTES;
                }
            }, commandId));
        } catch (ClientDeadlineException e) {
            kill(s, commandId.get(), "the listing took too long");
            throw SandboxException.builder("vercel: listing " + (directory.isEmpty() ? "." : directory) + " in session "
                    + s.id() + " took longer than " + LIST_DEADLINE.toSeconds() + " s").provider(PROVIDER).build();
        } catch (InterruptedException e) {
            killAfterInterrupt(s, commandId.get());
            throw e;
        } catch (IOException e) {
            kill(s, commandId.get(), "the listing stream dropped");
            throw SandboxException.builder(http.redact("vercel: the listing stream of session " + s.id() + " dropped ("
                    + e.getClass().getSimpleName() + ")")).provider(PROVIDER).cause(e).build();
        } catch (SandboxException e) {
            throw sessionError(e, s, false);
        }
        if (end.kind != StreamEnd.Kind.FINISHED && end.kind != StreamEnd.Kind.CAPPED) {
            kill(s, commandId.get(), "the listing stream failed");
            throw SandboxException.builder(http.redact("vercel: listing in session " + s.id() + " failed: "
                    + (end.message == null ? end.code : end.message))).provider(PROVIDER).build();
        }
        if (end.kind == StreamEnd.Kind.CAPPED) {
            kill(s, commandId.get(), "the listing reached its cap");
        }
        return listing.parse(out.toByteArray(), end.kind == StreamEnd.Kind.CAPPED, PROVIDER, s.id());
    }

    @Override
    public void updateEgress(VercelHandle s, EgressPolicy egress) throws InterruptedException {
        Request post = http.request(sessionUrl(s, "network-policy"))
                .post(HttpTransport.jsonBody(policyJson(egress, s.secretsOr(http)))).build();
        try {
            JsonNode answer = http.call(post, true); // a full replacement: sending it twice is the same
            String weaker = VercelPolicy.weakerThanRequested(egress, answer.path("session").path("networkPolicy"));
            if (weaker != null) {
                throw new UnsupportedPolicyException(PROVIDER, List.of(weaker)); // the lifecycle tears down
            }
            log.debug("vercel: session {} egress set to {}", s.id(), egress);
        } catch (SandboxException e) {
            int status = e.httpStatus().orElse(0);
            if (status == 400 || status == 422) {
                throw new UnsupportedPolicyException(PROVIDER, List.of("the server refused the policy " + egress
                        + ": " + e.getMessage()));
            }
            throw sessionError(e, s, false);
        }
    }

    private ObjectNode policyJson(EgressPolicy egress, HttpTransport.SecretScope scope) {
        return VercelPolicy.toJson(egress, ref -> {
            String value = resolveSecret(ref);
            scope.add(value);
            return value;
        });
    }

    /**
     * {@code GET /v2/sandboxes?project=<id>&namePrefix=s4j-&tags=sandbox4j-owner:<owner>} (one page of
     * at most 100, newest first), each with its tags plus the run id read from its name.
     */
    @Override
    public List<Labelled<VercelHandle>> listLabelled(String owner) throws InterruptedException {
        HttpUrl.Builder u = url("v2/sandboxes").newBuilder()
                .addQueryParameter("project", credentials.projectId())
                .addQueryParameter("namePrefix", NAME_PREFIX)
                .addQueryParameter("limit", "100");
        if (owner != null) {
            u.addQueryParameter("tags", CreateRequest.OWNER_LABEL + ":" + owner);
        }
        List<Labelled<VercelHandle>> out = new java.util.ArrayList<>();
        for (JsonNode sb : http.call(http.request(u.build()).get().build(), true).path("sandboxes")) {
            String name = text(sb.path("name"));
            String session = text(sb.path("currentSessionId"));
            if (name == null || session == null || !name.startsWith(NAME_PREFIX) || "stopped".equals(text(sb.path("status")))) {
                continue;
            }
            String runId = name.substring(NAME_PREFIX.length());
            java.util.Map<String, String> labels = new java.util.LinkedHashMap<>();
            sb.path("tags").properties().forEach(f -> labels.put(f.getKey(), f.getValue().asText()));
            labels.put(CreateRequest.RUN_ID_LABEL, runId);
            out.add(new Labelled<>(new VercelHandle(session, name, DEFAULT_CWD, runId), labels));
        }
        return out;
    }

    @Override
    public void release(VercelHandle s) {
        if (s.secrets() != null) {
            s.secrets().close();
        }
    }

    /** Per-sandbox secrets registered now: zero once every sandbox is done (for tests). */
    public int scopedSecretCount() {
        return http.scopedSecretCount();
    }

    /** The secret's value for Vercel's proxy, registered for redaction; refused if it cannot be a header value. */
    private String resolveSecret(SecretRef ref) {
        String value;
        try {
            value = ref.resolve();
        } catch (RuntimeException e) {
            // the resolver's message (and cause) could echo part of the secret: name the reference and the type only
            throw new SandboxConfigurationException("vercel: " + ref + " could not be resolved ("
                    + e.getClass().getSimpleName() + ")");
        }
        if (value == null || value.isEmpty()) {
            throw new SandboxConfigurationException("vercel: " + ref + " resolved to an empty value");
        }
        if (value.chars().anyMatch(c -> c < 0x20 || c == 0x7f)) {
            throw new SandboxConfigurationException("vercel: " + ref
                    + " resolved to a value with control characters, which a header cannot carry");
        }
        return value; // the caller registers it in the sandbox's secret scope
    }

    // ---- exec ----

    @Override
    public ExecOutcome exec(VercelHandle s, Execution execution, OutputSink sink) throws InterruptedException {
        ArrayNode args = HttpTransport.JSON.createArrayNode();
        String command = argv(s, execution, args);
        long budgetMs = millis(execution.budget());
        ObjectNode body = HttpTransport.JSON.createObjectNode();
        body.put("command", command);
        body.set("args", args);
        body.putObject("env"); // the sandbox's env (the spec's) applies; nothing else
        body.put("sudo", false);
        body.put("wait", true);
        body.put("logs", true);
        body.put("timeout", budgetMs); // Vercel SIGKILLs it at the budget even if this client is gone
        Request post = http.request(sessionUrl(s, "cmd")).post(HttpTransport.jsonBody(body)).build();
        AtomicReference<String> commandId = new AtomicReference<>();
        StreamEnd end;
        try {
            end = http.stream(post, execution.budget().plus(execGrace), r -> readStream(r, sink, commandId));
        } catch (ClientDeadlineException e) {
            kill(s, commandId.get(), "the client deadline passed");
            return ExecOutcome.timedOut();
        } catch (InterruptedException e) {
            // The flag is clear now: kill (briefly) before reporting the interrupt.
            killAfterInterrupt(s, commandId.get());
            throw e;
        } catch (IOException e) {
            kill(s, commandId.get(), "the stream dropped");
            throw SandboxException.builder(http.redact("vercel: the output stream of session " + s.id()
                            + " ended before the command finished (" + e.getClass().getSimpleName()
                            + (e.getMessage() == null ? "" : ": " + e.getMessage()) + ")"))
                    .provider(PROVIDER).codeMayHaveRun(true).cause(e).build();
        } catch (SandboxException e) {
            int status = e.httpStatus().orElse(0);
            throw sessionError(e, s, status == 0 || status >= 500);
        }
        switch (end.kind) {
            case FINISHED:
                long ran = end.durationMs != null ? end.durationMs : end.elapsedMs;
                if (end.exitCode != 0 && ran >= budgetMs) {
                    return ExecOutcome.timedOut(); // Vercel's per-command timeout killed it
                }
                return ExecOutcome.exited(end.exitCode);
            case CAPPED:
                kill(s, commandId.get(), "the output hard cap was reached");
                return ExecOutcome.outputLimit();
            case ERROR:
                kill(s, commandId.get(), "the stream reported an error");
                throw SandboxException.builder(http.redact("vercel: the command stream of session " + s.id()
                                + " failed: " + end.code + (end.message == null ? "" : ": " + end.message)))
                        .provider(PROVIDER).providerCode(end.code).codeMayHaveRun(true).build();
            default:
                kill(s, commandId.get(), "the answer was not a command stream");
                throw SandboxException.builder(http.redact("vercel: unexpected answer to a command in session "
                                + s.id() + ": " + end.message))
                        .provider(PROVIDER).codeMayHaveRun(true).build();
        }
    }

    /** Fills {@code args} and returns the program: code as one argv element, or by file when too big or holding NUL. */
    private String argv(VercelHandle s, Execution execution, ArrayNode args) throws InterruptedException {
        String code = execution.code();
        Language language = execution.language();
        CodeCommand command = CodeCommand.of(language);
        String program = command.interpreter();
        boolean byFile = code.indexOf('\0') >= 0 || code.getBytes(StandardCharsets.UTF_8).length > maxArgvBytes;
        if (!byFile) {
            List<String> inline = command.inline(code);
            inline.subList(1, inline.size()).forEach(args::add);
            return program;
        }
        String ext = command.extension();
        String path = "/tmp/sandbox4j-" + s.runId() + "-" + s.nextCodeFile() + ext;
        TarGz tar = new TarGz(System.currentTimeMillis() / 1000)
                .add(TarGz.Entry.file(path.substring(1), 0644, code.getBytes(StandardCharsets.UTF_8)));
        upload(s, tar.toBytes());
        args.add(path);
        return program;
    }

    /** Runs on the HTTP worker thread: the stream, until the final command record or a reason to stop. */
    private StreamEnd readStream(Response response, OutputSink sink, AtomicReference<String> commandId)
            throws IOException {
        return readStream(response, (CommandStreamReader.Output) (stream, b, off, len) -> stream.equals("stdout")
                ? sink.stdout(b, off, len) : sink.stderr(b, off, len), commandId);
    }

    /** The stream, its stdout and stderr going to {@code output}. */
    private StreamEnd readStream(Response response, CommandStreamReader.Output output, AtomicReference<String> commandId)
            throws IOException {
        long t0 = System.nanoTime();
        MediaType type = response.body().contentType();
        if (type == null || !type.type().equals("application") || !type.subtype().equals("x-ndjson")) {
            // A JSON answer means the command started detached: keep its id so it can be killed.
            try {
                String id = text(HttpTransport.JSON.readTree(response.peekBody(MAX_FIELD_BYTES).string())
                        .path("command").path("id"));
                if (id != null) {
                    commandId.compareAndSet(null, id);
                }
            } catch (IOException ignored) {
                // nothing to kill by id
            }
            return StreamEnd.protocol("expected application/x-ndjson, got " + type);
        }
        CommandStreamReader reader = new CommandStreamReader(response.body().byteStream(), output, MAX_FIELD_BYTES);
        while (true) {
            CommandStreamReader.Line line = reader.next();
            if (line == null) {
                throw new EOFException("the stream ended before the command finished");
            }
            if (line.stopped()) {
                return StreamEnd.capped();
            }
            JsonNode command = line.get("command");
            if (command.isObject()) {
                String id = text(command.path("id"));
                if (id != null) {
                    commandId.compareAndSet(null, id);
                }
                JsonNode exit = command.path("exitCode");
                if (exit.isNumber()) {
                    JsonNode d = command.path("durationMs");
                    return StreamEnd.finished(exit.asInt(), d.isNumber() ? d.asLong() : null,
                            (System.nanoTime() - t0) / 1_000_000);
                }
            } else if ("error".equals(line.stream())) {
                JsonNode data = line.get("data");
                return StreamEnd.error(text(data.path("code")), text(data.path("message")));
            }
            // stdout and stderr went to the sink as they were read; unknown lines are skipped
        }
    }

    private void kill(VercelHandle s, String commandId, String why) {
        if (commandId == null) {
            log.debug("vercel: {} in session {} before the command had an id; its timeout will end it", why, s.id());
            return;
        }
        ObjectNode body = HttpTransport.JSON.createObjectNode().put("signal", SIGKILL);
        Request post = http.request(sessionUrl(s, "cmd/" + commandId + "/kill")).post(HttpTransport.jsonBody(body)).build();
        try {
            http.execute(post, killTimeout, r -> Boolean.TRUE);
            log.debug("vercel: killed command {} in session {}: {}", commandId, s.id(), why);
        } catch (SandboxException | IOException | ClientDeadlineException e) {
            log.warn("vercel: could not kill command {} in session {} ({}): {}", commandId, s.id(), why,
                    http.redact(e.getMessage()));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private void killAfterInterrupt(VercelHandle s, String commandId) {
        Thread.interrupted(); // normally clear already; the kill must not be cut short by it
        kill(s, commandId, "the caller was interrupted");
        Thread.interrupted(); // the InterruptedException rethrown carries the interrupt
    }

    /** Adds session context to a runtime call's failure (410: the session is stopped). */
    private SandboxException sessionError(SandboxException e, VercelHandle s, boolean codeMayHaveRun) {
        SandboxException.Builder b = e.toBuilder().codeMayHaveRun(codeMayHaveRun);
        if (e.httpStatus().orElse(0) == 410) {
            SandboxException.Builder gone = SandboxException.builder(e.getMessage() + " (session " + s.id()
                            + " of " + s.name() + " is stopped; its lifetime may have run out)")
                    .provider(PROVIDER).httpStatus(410).providerCode(e.providerCode().orElse(null))
                    .codeMayHaveRun(codeMayHaveRun).cause(e);
            return new SandboxNotFoundException(gone);
        }
        return b.build(); // keeps the mapped type and flags
    }

    // ---- URLs ----

    /** {@code path} under the base URL, with {@code teamId} (every Vercel call carries it). */
    private HttpUrl url(String path) {
        return http.url(path).newBuilder().addQueryParameter("teamId", credentials.teamId()).build();
    }

    private HttpUrl sessionUrl(VercelHandle s, String tail) {
        return url("v2/sandboxes/sessions/" + s.id() + "/" + tail);
    }

    private static String relative(String cwd) {
        return cwd.replaceAll("^/+", "").replaceAll("/+$", "");
    }

    private static long millis(Duration d) {
        long ms = d.toMillis();
        return d.minusMillis(ms).isZero() ? Math.max(ms, 1) : ms + 1;
    }

    private static String text(JsonNode n) {
        return n.isTextual() && !n.asText().isEmpty() ? n.asText() : null;
    }

    @Override
    public String toString() {
        return "VercelDriver[" + http.baseUrl() + ", team " + credentials.teamId() + ", project "
                + credentials.projectId() + "]";
    }

    /** How a command stream ended. */
    private static final class StreamEnd {
        enum Kind { FINISHED, CAPPED, ERROR, PROTOCOL }

        final Kind kind;
        final int exitCode;
        final Long durationMs;
        final long elapsedMs;
        final String code;
        final String message;

        private StreamEnd(Kind kind, int exitCode, Long durationMs, long elapsedMs, String code, String message) {
            this.kind = kind;
            this.exitCode = exitCode;
            this.durationMs = durationMs;
            this.elapsedMs = elapsedMs;
            this.code = code;
            this.message = message;
        }

        static StreamEnd finished(int exitCode, Long durationMs, long elapsedMs) {
            return new StreamEnd(Kind.FINISHED, exitCode, durationMs, elapsedMs, null, null);
        }

        static StreamEnd capped() {
            return new StreamEnd(Kind.CAPPED, 0, null, 0, null, null);
        }

        static StreamEnd error(String code, String message) {
            return new StreamEnd(Kind.ERROR, 0, null, 0, code == null ? "stream_error" : code, message);
        }

        static StreamEnd protocol(String message) {
            return new StreamEnd(Kind.PROTOCOL, 0, null, 0, null, message);
        }
    }
}
