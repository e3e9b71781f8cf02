package dev.sandbox4j.e2b.internal;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.sandbox4j.api.Execution;
import dev.sandbox4j.api.FileEntry;
import dev.sandbox4j.api.InputFile;
import dev.sandbox4j.api.exception.SandboxConfigurationException;
import dev.sandbox4j.api.exception.SandboxException;
import dev.sandbox4j.api.SandboxFile;
import dev.sandbox4j.api.exception.SandboxNotFoundException;
import dev.sandbox4j.api.SandboxSpec;
import dev.sandbox4j.spi.Attachable;
import dev.sandbox4j.spi.CodeCommand;
import dev.sandbox4j.spi.CreateRequest;
import dev.sandbox4j.spi.ExecOutcome;
import dev.sandbox4j.spi.Labelled;
import dev.sandbox4j.spi.OutputSink;
import dev.sandbox4j.spi.SandboxDriver;
import dev.sandbox4j.spi.Secret;
import dev.sandbox4j.http.BoundedDownload;
import dev.sandbox4j.http.ClientDeadlineException;
import dev.sandbox4j.http.ErrorBody;
import dev.sandbox4j.http.HttpTransport;
import dev.sandbox4j.policy.Capabilities;
import dev.sandbox4j.policy.EgressPolicy;
import dev.sandbox4j.policy.Language;
import dev.sandbox4j.policy.UnsupportedPolicyException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;
import okhttp3.HttpUrl;
import okhttp3.MediaType;
import okhttp3.MultipartBody;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.RequestBody;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * E2B on the wire: the REST control plane ({@code POST /v2/sandboxes}, {@code DELETE /sandboxes/{id}},
 * {@code GET /v2/sandboxes}, {@code PUT /sandboxes/{id}/network}), envd's Connect process API
 * ({@code process.Process/Start} and {@code SendSignal}, {@code POST /files}) and, as an option, the
 * code interpreter's {@code /execute} NDJSON stream. The lifecycle around it is
 * {@link dev.sandbox4j.spi.lifecycle.ManagedSandboxRunner}'s.
 */
public final class E2bDriver implements SandboxDriver<E2bHandle> {
    private static final Logger log = LoggerFactory.getLogger(E2bDriver.class);
    static final String PROVIDER = E2bPolicy.RUNNER;
    static final int ENVD_PORT = 49983;
    /** A whole file download, however large (the cap bounds what is kept, not the wait). */
    private static final Duration FILE_DEADLINE = Duration.ofSeconds(120);
    static final int INTERPRETER_PORT = 49999;
    static final MediaType CONNECT_JSON = MediaType.get("application/connect+json");
    static final MediaType OCTET_STREAM = MediaType.get("application/octet-stream");
    private static final Pattern SANDBOX_ID = Pattern.compile("[A-Za-z0-9-]{1,128}");
    private static final Pattern DOMAIN = Pattern.compile("[A-Za-z0-9-]+(\\.[A-Za-z0-9-]+)+");
    private static final Pattern PLAIN_PATH = Pattern.compile("[\\x20-\\x7e&&[^\"]]+");
    private static final Set<String> NETWORK_WORDS = Set.of("network", "cidr", "allow out", "deny out", "allowout",
            "denyout", "rule", "egress", "all_traffic", "domain");
    private static final SecureRandom RANDOM = new SecureRandom();
    private static final int MESSAGE_LIMIT = 300;

    /** E2B's API sends a numeric {@code code} and its semantic code in {@code error_code}. */
    static final ErrorBody ERROR_BODY = n -> {
        ErrorBody.Parsed p = ErrorBody.STANDARD.read(n);
        return p.code() == null ? new ErrorBody.Parsed(ErrorBody.text(n.path("error_code")), p.message()) : p;
    };

    private final E2bSettings settings;
    private final HttpTransport api;
    private final Capabilities capabilities = E2bPolicy.capabilities();

    public E2bDriver(E2bSettings settings) {
        this.settings = settings;
        OkHttpClient client = settings.client != null ? settings.client : defaultClient();
        this.api = HttpTransport.builder(PROVIDER)
                .baseUrl(settings.apiUrl.toString())
                .client(client)
                .secretHeader("X-API-KEY", "", settings.apiKey)
                .errorBody(ERROR_BODY)
                .header("Accept", "application/json")
                .header("User-Agent", E2bSettings.USER_AGENT)
                .retryBaseDelay(settings.retryBaseDelay)
                .unaryTimeout(settings.requestTimeout)
                .build();
    }

    private static OkHttpClient defaultClient() {
        return new OkHttpClient.Builder()
                .dispatcher(HttpTransport.daemonDispatcher())
                .connectTimeout(Duration.ofSeconds(15))
                .readTimeout(Duration.ofSeconds(90))
                .writeTimeout(Duration.ofSeconds(60))
                .retryOnConnectionFailure(false) // the lifecycle decides what is safe to retry
                .build();
    }

    @Override
    public String provider() {
        return PROVIDER;
    }

    @Override
    public Capabilities capabilities() {
        return capabilities;
    }

    // ---------------------------------------------------------------- create, find, destroy

    @Override
    public E2bHandle create(CreateRequest request) throws InterruptedException {
        List<String> headerSecrets = new ArrayList<>();
        ObjectNode body = HttpTransport.JSON.createObjectNode();
        body.put("templateID", settings.template);
        body.put("timeout", seconds(request.lifetime()));
        body.setAll(E2bPolicy.createFields(request.initialEgress(), headerSecrets));
        ObjectNode metadata = body.putObject("metadata");
        request.labels().forEach(metadata::put);
        Map<String, String> env = request.spec().env();
        if (!env.isEmpty()) {
            ObjectNode vars = body.putObject("envVars");
            env.forEach(vars::put);
        }
        HttpTransport.SecretScope scope = api.secretScope();
        headerSecrets.forEach(scope::add);
        boolean ok = false;
        try {
            E2bHandle handle = create(body);
            handle.secrets(scope);
            ok = true;
            return handle;
        } finally {
            if (!ok) {
                scope.close(); // the exception's message was redacted already
            }
        }
    }

    private E2bHandle create(ObjectNode body) throws InterruptedException {
        Request http = api.request(api.url("v2/sandboxes")).post(HttpTransport.jsonBody(body)).build();
        JsonNode created;
        try {
            created = api.call(http, false);
        } catch (SandboxException e) {
            throw createError(e);
        }
        String id = created.path("sandboxID").asText("");
        if (!SANDBOX_ID.matcher(id).matches()) {
            // a sandbox may exist that we cannot address: let the lifecycle find it by run id
            throw SandboxException.builder("e2b: create answered without a usable sandboxID")
                    .provider(PROVIDER).requestMayHaveSucceeded(true).build();
        }
        String domain = created.path("domain").isTextual() && !created.path("domain").asText().isBlank()
                ? created.path("domain").asText() : settings.domain;
        if (!DOMAIN.matcher(domain).matches()) {
            throw SandboxException.builder("e2b: create answered with an unusable domain for sandbox " + id)
                    .provider(PROVIDER).requestMayHaveSucceeded(true).build();
        }
        JsonNode token = created.path("envdAccessToken");
        E2bHandle handle = handle(id, domain, token.isTextual() && !token.asText().isEmpty() ? token.asText() : null,
                created.path("envdVersion").asText(null));
        log.debug("e2b sandbox {} created from template {} (envd {})", id, settings.template, handle.envdVersion());
        return handle;
    }

    private E2bHandle handle(String id, String domain, String token, String envdVersion) {
        HttpUrl envdUrl = settings.sandboxUrl != null ? settings.sandboxUrl
                : new HttpUrl.Builder().scheme("https").host(ENVD_PORT + "-" + id + "." + domain).build();
        HttpUrl interpreterUrl = settings.sandboxUrl != null ? settings.sandboxUrl
                : new HttpUrl.Builder().scheme("https").host(INTERPRETER_PORT + "-" + id + "." + domain).build();
        HttpTransport.Builder b = HttpTransport.builder(PROVIDER)
                .baseUrl(envdUrl.toString())
                .client(api.client()) // shares the pool; already sends each request once
                .header("E2b-Sandbox-Id", id)
                .header("User-Agent", E2bSettings.USER_AGENT)
                .retryBaseDelay(settings.retryBaseDelay)
                .unaryTimeout(settings.requestTimeout);
        if (token != null) {
            b.secretHeader("X-Access-Token", "", Secret.of(token));
        }
        HttpTransport envd = b.build();
        envd.addSecret(settings.apiKey.reveal());
        return new E2bHandle(id, envdUrl, interpreterUrl, envd, envdVersion);
    }

    private SandboxException createError(SandboxException e) {
        int status = e.httpStatus().orElse(0);
        if (status == 404) {
            return new SandboxConfigurationException(SandboxException.builder(
                            "e2b: template '" + settings.template + "' was not found (" + e.getMessage() + ")")
                    .provider(PROVIDER).httpStatus(status).providerCode(e.providerCode().orElse(null)).cause(e));
        }
        if (status == 400 && aboutNetwork(e.getMessage())) {
            throw new UnsupportedPolicyException(PROVIDER, List.of("E2B refused the egress policy: " + e.getMessage()));
        }
        return e;
    }

    private static boolean aboutNetwork(String message) {
        String m = message == null ? "" : message.toLowerCase(Locale.ROOT);
        return NETWORK_WORDS.stream().anyMatch(m::contains);
    }

    /**
     * {@code GET /sandboxes/{id}}, as the SDK's {@code Sandbox.connect} reads a sandbox: its metadata,
     * state, envd token and domain, and the egress E2B reports (compared with the expected spec's). A
     * paused sandbox is not running: resuming it is a change this read-only lookup does not make.
     */
    @Override
    public Attachable<E2bHandle> attach(String sandboxId, SandboxSpec expected) throws InterruptedException {
        if (!SANDBOX_ID.matcher(sandboxId).matches()) {
            throw new SandboxNotFoundException(SandboxException.builder("e2b: '" + limit(sandboxId)
                    + "' is not a sandbox id").provider(PROVIDER));
        }
        JsonNode d = api.call(api.request(api.url("sandboxes/" + sandboxId)).get().build(), true);
        String domain = d.path("domain").isTextual() && !d.path("domain").asText().isBlank()
                ? d.path("domain").asText() : settings.domain;
        if (!DOMAIN.matcher(domain).matches()) {
            throw SandboxException.builder("e2b: sandbox " + sandboxId + " reports an unusable domain").provider(PROVIDER).build();
        }
        JsonNode token = d.path("envdAccessToken");
        E2bHandle handle = handle(sandboxId, domain, token.isTextual() && !token.asText().isEmpty() ? token.asText() : null,
                d.path("envdVersion").asText(null));
        Map<String, String> labels = new java.util.LinkedHashMap<>();
        d.path("metadata").properties().forEach(f -> labels.put(f.getKey(), f.getValue().asText()));
        String state = d.path("state").asText("unknown");
        Attachable.Builder<E2bHandle> b = Attachable.builder(handle).labels(labels).state(state, "running".equals(state));
        E2bPolicy.compareReported(expected.egress(), d, b);
        try {
            long lifetime = Math.round(java.time.Duration.between(java.time.Instant.parse(d.path("startedAt").asText()),
                    java.time.Instant.parse(d.path("endAt").asText())).toMillis() / 1000.0);
            b.compare("timeout", seconds(expected.effectiveLifetime()), lifetime);
        } catch (java.time.format.DateTimeParseException e) {
            log.debug("e2b sandbox {}: no readable startedAt/endAt, lifetime checked by label only", sandboxId);
        }
        return b.build();
    }

    @Override
    public List<E2bHandle> findByRunId(String runId) throws InterruptedException {
        HttpUrl url = api.url("v2/sandboxes").newBuilder()
                .addQueryParameter("metadata", CreateRequest.RUN_ID_LABEL + "=" + runId)
                .addEncodedQueryParameter("state", "running,paused")
                .build();
        JsonNode list = api.call(api.request(url).get().build(), true);
        List<E2bHandle> found = new ArrayList<>();
        for (JsonNode sandbox : list) {
            // check the label ourselves: a server that ignored the filter must not get others killed
            String id = sandbox.path("sandboxID").asText("");
            if (runId.equals(sandbox.path("metadata").path(CreateRequest.RUN_ID_LABEL).asText(null))
                    && !id.isEmpty()) {
                found.add(E2bHandle.found(id));
            }
        }
        return found;
    }

    /**
     * {@code GET /v2/sandboxes?metadata=sandbox4j-owner=<owner>&state=running,paused}, page by page
     * ({@code X-Next-Token}); each sandbox with its metadata. At most 100 pages (10,000 sandboxes).
     */
    @Override
    public List<Labelled<E2bHandle>> listLabelled(String owner) throws InterruptedException {
        List<Labelled<E2bHandle>> out = new ArrayList<>();
        String next = null;
        for (int page = 0; page < 100; page++) {
            HttpUrl.Builder u = api.url("v2/sandboxes").newBuilder()
                    .addEncodedQueryParameter("state", "running,paused")
                    .addQueryParameter("limit", "100");
            if (owner != null) {
                u.addQueryParameter("metadata", CreateRequest.OWNER_LABEL + "=" + owner);
            }
            if (next != null) {
                u.addQueryParameter("nextToken", next);
            }
            String[] token = new String[1];
            JsonNode list = api.call(api.request(u.build()).get().build(), true, r -> token[0] = r.header("X-Next-Token"));
            for (JsonNode sandbox : list) {
                String id = sandbox.path("sandboxID").asText("");
                JsonNode md = sandbox.path("metadata");
                if (id.isEmpty() || !md.path(CreateRequest.RUN_ID_LABEL).isTextual()) {
                    continue; // not one of ours
                }
                Map<String, String> labels = new java.util.LinkedHashMap<>();
                md.properties().forEach(f -> labels.put(f.getKey(), f.getValue().asText()));
                out.add(new Labelled<>(E2bHandle.found(id), labels));
            }
            next = token[0];
            if (next == null || next.isBlank() || list.size() == 0) {
                break;
            }
        }
        return out;
    }

    @Override
    public void release(E2bHandle sandbox) {
        HttpTransport.SecretScope scope = sandbox.secrets();
        if (scope != null) {
            scope.close();
        }
    }

    /** Per-sandbox secrets registered now: zero once every sandbox is done (for tests). */
    public int scopedSecretCount() {
        return api.scopedSecretCount();
    }

    @Override
    public boolean destroy(E2bHandle sandbox) throws InterruptedException {
        Request http = api.request(api.url("sandboxes/" + sandbox.id())).delete().build();
        try {
            // not retried here: the lifecycle retries on its own teardown deadline
            api.call(http, false);
            return true;
        } catch (SandboxNotFoundException e) {
            return false;
        }
    }

    @Override
    public void updateEgress(E2bHandle sandbox, EgressPolicy egress) throws InterruptedException {
        List<String> headerSecrets = new ArrayList<>();
        ObjectNode body = E2bPolicy.updateBody(egress, headerSecrets);
        HttpTransport.SecretScope scope = sandbox.secrets();
        if (scope == null) {
            scope = api.secretScope();
            sandbox.secrets(scope);
        }
        headerSecrets.forEach(scope::add);
        Request http = api.request(api.url("sandboxes/" + sandbox.id() + "/network"))
                .put(HttpTransport.jsonBody(body)).build();
        try {
            api.call(http, true); // PUT replaces the whole config: safe to repeat
        } catch (SandboxException e) {
            if (e.httpStatus().orElse(0) == 400) {
                throw new UnsupportedPolicyException(PROVIDER, List.of("E2B refused the egress policy: " + e.getMessage()));
            }
            throw e;
        }
        // A 2xx alone does not prove the lock-down took: read the sandbox's egress back before any
        // untrusted code runs (one extra call, only on the setup path). The lifecycle tears down on a throw.
        JsonNode detail = api.call(api.request(api.url("sandboxes/" + sandbox.id())).get().build(), true);
        String weaker = E2bPolicy.weakerThanSent(body, detail);
        if (weaker != null) {
            throw new UnsupportedPolicyException(PROVIDER, List.of(weaker));
        }
    }

    // ---------------------------------------------------------------- files

    @Override
    public void writeFiles(E2bHandle sandbox, List<InputFile> files) throws InterruptedException {
        Set<String> paths = new HashSet<>();
        boolean oneRequest = true;
        for (InputFile f : files) {
            oneRequest &= PLAIN_PATH.matcher(f.path()).matches() && paths.add(f.path());
        }
        if (oneRequest) {
            // relative file names resolve against the user's home, which is also the command's cwd
            MultipartBody.Builder mb = new MultipartBody.Builder().setType(MultipartBody.FORM);
            for (InputFile f : files) {
                mb.addFormDataPart("file", f.path(), RequestBody.create(f.content(), OCTET_STREAM));
            }
            upload(sandbox, null, mb.build(), files.size());
        } else {
            // names a multipart header cannot carry exactly go in the path parameter, one per request
            for (InputFile f : files) {
                MultipartBody body = new MultipartBody.Builder().setType(MultipartBody.FORM)
                        .addFormDataPart("file", "file", RequestBody.create(f.content(), OCTET_STREAM)).build();
                upload(sandbox, f.path(), body, 1);
            }
        }
    }

    private void upload(E2bHandle sandbox, String path, MultipartBody body, int expected) throws InterruptedException {
        HttpTransport envd = sandbox.envd();
        HttpUrl.Builder url = envdUrl(sandbox, "files").newBuilder();
        if (path != null) {
            url.addQueryParameter("path", path);
        }
        Request http = envd.request(url.build()).header("E2b-Sandbox-Port", String.valueOf(ENVD_PORT)).post(body).build();
        JsonNode written = envd.call(http, true); // a repeated write leaves the same file
        if (!written.isArray() || written.size() < expected) {
            throw SandboxException.builder("e2b: envd wrote " + (written.isArray() ? written.size() : 0) + " of "
                    + expected + " files in sandbox " + sandbox.id()).provider(PROVIDER).build();
        }
    }

    /**
     * envd's {@code GET /files?path=...} (what the official SDK's {@code files.read} sends, with the
     * access token and the routing headers), read with a cap: the call is cancelled past it. envd
     * resolves a relative path against the user's home, the command's working directory. envd follows
     * symbolic links inside the sandbox's own VM; nothing of this host is reachable through it.
     */
    @Override
    public SandboxFile readFile(E2bHandle sandbox, String path, long maxBytes) throws InterruptedException {
        HttpTransport envd = sandbox.envd();
        HttpUrl url = envdUrl(sandbox, "files").newBuilder().addQueryParameter("path", path).build();
        Request http = envd.request(url).header("E2b-Sandbox-Port", String.valueOf(ENVD_PORT)).get().build();
        BoundedDownload d;
        try {
            d = BoundedDownload.get(envd, http, maxBytes, FILE_DEADLINE);
        } catch (SandboxException e) {
            if (e.httpStatus().orElse(0) == 404) {
                // envd's 404 is the file's, not the sandbox's
                throw SandboxException.builder("e2b: " + path + ": no such file in sandbox " + sandbox.id())
                        .provider(PROVIDER).httpStatus(404).build();
            }
            throw e;
        }
        return SandboxFile.builder(path).content(d.content()).size(d.size()).build();
    }

    /**
     * envd's {@code filesystem.Filesystem/ListDir} (Connect unary, JSON), {@code {"path", "depth": 1}} as
     * the official SDK's {@code files.list} sends it. Entry paths come back absolute; ours are the
     * directory plus the entry's name. A link ({@code isSymlink}, or {@code FILE_TYPE_SYMLINK}, or a
     * {@code symlinkTarget}) is reported as one and never descended.
     */
    @Override
    public List<FileEntry> listFiles(E2bHandle sandbox, String directory) throws InterruptedException {
        HttpTransport envd = sandbox.envd();
        ObjectNode body = HttpTransport.JSON.createObjectNode().put("path", directory.isEmpty() ? "." : directory).put("depth", 1);
        Request http = envd.request(envdUrl(sandbox, "filesystem.Filesystem/ListDir"))
                .header("E2b-Sandbox-Port", String.valueOf(ENVD_PORT))
                .header("Connect-Protocol-Version", "1")
                .post(HttpTransport.jsonBody(body))
                .build();
        JsonNode answer;
        try {
            answer = envd.call(http, true); // a listing changes nothing
        } catch (SandboxException e) {
            if (e.httpStatus().orElse(0) == 404) {
                throw SandboxException.builder("e2b: " + (directory.isEmpty() ? "." : directory)
                        + ": no such directory in sandbox " + sandbox.id()).provider(PROVIDER).httpStatus(404).build();
            }
            throw e;
        }
        List<FileEntry> entries = new ArrayList<>();
        for (JsonNode e : answer.path("entries")) {
            String name = e.path("name").asText("");
            if (name.isEmpty() || name.contains("/")) {
                continue;
            }
            boolean link = e.path("isSymlink").asBoolean(false) || e.hasNonNull("symlinkTarget")
                    || "FILE_TYPE_SYMLINK".equals(e.path("type").asText());
            String type = e.path("type").asText("");
            FileEntry.Type t = link ? FileEntry.Type.SYMLINK : type.equals("FILE_TYPE_FILE") ? FileEntry.Type.FILE
                    : type.equals("FILE_TYPE_DIRECTORY") ? FileEntry.Type.DIRECTORY : FileEntry.Type.OTHER;
            try {
                entries.add(FileEntry.of(directory.isEmpty() ? name : directory + "/" + name, t,
                        t == FileEntry.Type.FILE ? e.path("size").asLong(0) : 0));
            } catch (IllegalArgumentException ex) {
                // a name the API cannot address (a control character, a backslash, '..'): left out
            }
        }
        entries.sort(java.util.Comparator.comparing(FileEntry::path));
        return entries;
    }

    // ---------------------------------------------------------------- exec

    @Override
    public ExecOutcome exec(E2bHandle sandbox, Execution execution, OutputSink sink) throws InterruptedException {
        if (settings.codeInterpreter && execution.language() != Language.BASH) {
            return execCell(sandbox, execution, sink);
        }
        return execProcess(sandbox, execution, sink);
    }

    private ExecOutcome execProcess(E2bHandle sandbox, Execution execution, OutputSink sink) throws InterruptedException {
        HttpTransport envd = sandbox.envd();
        List<String> argv = command(sandbox, execution);
        ObjectNode start = HttpTransport.JSON.createObjectNode();
        ObjectNode process = start.putObject("process");
        process.put("cmd", argv.get(0));
        argv.subList(1, argv.size()).forEach(process.putArray("args")::add);
        start.put("stdin", false);
        long budgetMs = Math.max(1, execution.budget().toMillis());
        Request http = envd.request(envdUrl(sandbox, "process.Process/Start"))
                .header("E2b-Sandbox-Port", String.valueOf(ENVD_PORT))
                .header("Connect-Protocol-Version", "1")
                .header("Connect-Timeout-Ms", String.valueOf(budgetMs))
                .header("Keepalive-Ping-Interval", String.valueOf(settings.keepaliveSeconds))
                .post(RequestBody.create(ConnectFrames.envelope(json(start)), CONNECT_JSON))
                .build();
        ProcessStream stream = new ProcessStream(sink, settings.maxFrameBytes);
        long t0 = System.nanoTime();
        try {
            envd.stream(http, execution.budget().plus(settings.execGrace), stream::read);
        } catch (ClientDeadlineException e) {
            kill(sandbox, stream.pid());
            return ExecOutcome.timedOut();
        } catch (StreamRefusedException e) {
            kill(sandbox, stream.pid());
            throw SandboxException.builder(limit(envd.redact("e2b: the process stream of sandbox " + sandbox.id()
                            + " was refused: " + e.getMessage())))
                    .provider(PROVIDER).codeMayHaveRun(true).build();
        } catch (IOException e) {
            if (stream.ended()) {
                return endOutcome(stream, t0, execution.budget());
            }
            throw dropped(envd, sandbox, e);
        } catch (SandboxException e) {
            throw envdError(e, sandbox);
        }
        if (stream.capped()) {
            kill(sandbox, stream.pid());
            return ExecOutcome.outputLimit();
        }
        if ("deadline_exceeded".equals(stream.errorCode())) {
            return ExecOutcome.timedOut();
        }
        if (stream.ended()) {
            if (stream.errorCode() != null) {
                log.debug("e2b sandbox {}: stream error {} after the process ended", sandbox.id(), envd.redact(stream.errorCode()));
            }
            return endOutcome(stream, t0, execution.budget());
        }
        if (stream.errorCode() != null) {
            throw SandboxException.builder(limit(envd.redact("e2b: envd failed the command in sandbox " + sandbox.id()
                            + ": " + stream.errorCode() + " " + stream.errorMessage())))
                    .provider(PROVIDER).providerCode(envd.redact(stream.errorCode())).codeMayHaveRun(stream.started()).build();
        }
        if (stream.endOfStream()) {
            throw SandboxException.builder("e2b: the process stream of sandbox " + sandbox.id()
                    + " ended without the process's end event").provider(PROVIDER).codeMayHaveRun(true).build();
        }
        throw SandboxException.builder("e2b: the process stream of sandbox " + sandbox.id()
                        + " ended without an end-of-stream message")
                .provider(PROVIDER).retriable(true).codeMayHaveRun(true).build();
    }

    private static ExecOutcome endOutcome(ProcessStream stream, long t0, Duration budget) {
        String status = stream.status() == null ? "" : stream.status();
        if (status.startsWith("signal:")) {
            // envd kills the process when Connect-Timeout-Ms passes; the deadline error may not follow
            if (System.nanoTime() - t0 >= budget.toNanos()) {
                return ExecOutcome.timedOut();
            }
            return ExecOutcome.killed(stream.exitCode());
        }
        return ExecOutcome.exited(stream.exitCode());
    }

    /** argv for the interpreter; code with a NUL or longer than the argv limit goes by file. */
    private List<String> command(E2bHandle sandbox, Execution execution) throws InterruptedException {
        CodeCommand command = CodeCommand.of(execution.language());
        String code = execution.code();
        byte[] bytes = code.getBytes(StandardCharsets.UTF_8);
        if (code.indexOf('\0') < 0 && bytes.length <= settings.argvLimitBytes) {
            return command.inline(code);
        }
        String path = "/tmp/sandbox4j/code-" + Long.toUnsignedString(RANDOM.nextLong(), 36) + command.extension();
        MultipartBody body = new MultipartBody.Builder().setType(MultipartBody.FORM)
                .addFormDataPart("file", "code" + command.extension(), RequestBody.create(bytes, OCTET_STREAM)).build();
        upload(sandbox, path, body, 1);
        return command.file(path);
    }

    private ExecOutcome execCell(E2bHandle sandbox, Execution execution, OutputSink sink) throws InterruptedException {
        HttpTransport envd = sandbox.envd();
        ObjectNode body = HttpTransport.JSON.createObjectNode();
        body.put("code", execution.code());
        if (execution.language() == Language.JAVASCRIPT) {
            body.put("language", "javascript");
        }
        HttpUrl url = sandbox.interpreterUrl().newBuilder().addPathSegment("execute").build();
        Request http = envd.request(url)
                .header("E2b-Sandbox-Port", String.valueOf(INTERPRETER_PORT))
                .post(HttpTransport.jsonBody(body))
                .build();
        CellStream stream = new CellStream(sink, settings.maxLineBytes);
        try {
            // the interpreter has no server-side timeout: closing the stream interrupts the kernel
            envd.stream(http, execution.budget(), stream::read);
        } catch (ClientDeadlineException e) {
            return ExecOutcome.timedOut();
        } catch (StreamRefusedException e) {
            throw SandboxException.builder(limit(envd.redact("e2b: the code interpreter stream of sandbox "
                            + sandbox.id() + " was refused: " + e.getMessage())))
                    .provider(PROVIDER).codeMayHaveRun(true).build();
        } catch (IOException e) {
            if (!stream.finished()) {
                throw dropped(envd, sandbox, e);
            }
        } catch (SandboxException e) {
            throw envdError(e, sandbox);
        }
        if (stream.capped()) {
            return ExecOutcome.outputLimit();
        }
        if (!stream.finished()) {
            throw SandboxException.builder("e2b: the code interpreter stream of sandbox " + sandbox.id()
                    + " ended before end_of_execution").provider(PROVIDER).retriable(true).codeMayHaveRun(true).build();
        }
        return ExecOutcome.exited(stream.failed() ? 1 : 0);
    }

    /** Best effort: envd's own deadline (Connect-Timeout-Ms) kills the process anyway. */
    private void kill(E2bHandle sandbox, Long pid) throws InterruptedException {
        if (pid == null) {
            return;
        }
        HttpTransport envd = sandbox.envd();
        ObjectNode body = HttpTransport.JSON.createObjectNode();
        body.putObject("process").put("pid", pid);
        body.put("signal", "SIGNAL_SIGKILL");
        Request http = envd.request(envdUrl(sandbox, "process.Process/SendSignal"))
                .header("E2b-Sandbox-Port", String.valueOf(ENVD_PORT))
                .header("Connect-Protocol-Version", "1")
                .post(HttpTransport.jsonBody(body))
                .build();
        try {
            envd.call(http, true);
        } catch (SandboxException e) {
            log.debug("e2b sandbox {}: could not kill pid {}: {}", sandbox.id(), pid, e.getMessage());
        }
    }

    private static SandboxException dropped(HttpTransport envd, E2bHandle sandbox, IOException e) {
        return SandboxException.builder(limit(envd.redact("e2b: the stream from sandbox " + sandbox.id()
                        + " dropped: " + e.getClass().getSimpleName() + (e.getMessage() == null ? "" : " " + e.getMessage()))))
                .provider(PROVIDER).retriable(true).codeMayHaveRun(true).cause(e).build();
    }

    /** envd answers 502 through the edge proxy when the sandbox is gone or the port is closed. */
    private static SandboxException envdError(SandboxException e, E2bHandle sandbox) {
        if (e.httpStatus().orElse(0) == 502) {
            return new SandboxNotFoundException(SandboxException.builder("e2b: sandbox " + sandbox.id()
                            + " is not running anymore, or its port is closed (" + e.getMessage() + ")")
                    .provider(PROVIDER).httpStatus(502).providerCode(e.providerCode().orElse(null)).codeMayHaveRun(true));
        }
        return e;
    }

    private static HttpUrl envdUrl(E2bHandle sandbox, String path) {
        return sandbox.envdUrl().newBuilder().addPathSegments(path).build();
    }

    private static byte[] json(JsonNode n) {
        try {
            return HttpTransport.JSON.writeValueAsBytes(n);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }

    /** The E2B sandbox timeout: seconds, rounded up as the SDK does, at least 1. */
    static long seconds(Duration d) {
        long ms = d.toMillis();
        long s = ms / 1000 + (ms % 1000 == 0 ? 0 : 1);
        return Math.max(1, Math.min(s, Integer.MAX_VALUE));
    }

    private static String limit(String s) {
        return s.length() <= MESSAGE_LIMIT ? s : s.substring(0, MESSAGE_LIMIT) + "...";
    }

    @Override
    public String toString() {
        return "E2bDriver[" + settings.apiUrl + ", template=" + settings.template + "]";
    }

    /** Resolved configuration; built by {@code E2bSandboxRunner.Builder}. */
}
