package dev.sandbox4j.emulators.daytona;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.Headers;
import com.sun.net.httpserver.HttpExchange;
import dev.sandbox4j.api.Execution;
import dev.sandbox4j.api.RunResult;
import dev.sandbox4j.api.RunStatus;
import dev.sandbox4j.emulators.HttpEmulator;
import dev.sandbox4j.emulators.daytona.internal.InstantMachines;
import dev.sandbox4j.emulators.daytona.internal.Machine;
import dev.sandbox4j.emulators.daytona.internal.MachineFactory;
import dev.sandbox4j.emulators.Multipart;
import dev.sandbox4j.emulators.daytona.internal.SandboxPaths;
import dev.sandbox4j.emulators.daytona.internal.ToolboxScripts;
import dev.sandbox4j.emulators.daytona.internal.WireEgress;
import dev.sandbox4j.emulators.daytona.internal.WireException;
import dev.sandbox4j.policy.Language;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Daytona's sandbox API and toolbox on one loopback port, in Daytona's own wire formats
 * ({@code /work/shared/providers/daytona.md}), with each sandbox a real local machine whose network
 * follows the egress fields it was created with.
 *
 * <ul>
 *   <li>API under {@code /api}: {@code POST /sandbox} (200 with the {@code Sandbox} JSON; the state is
 *       {@code starting} for {@link #startingPolls(int) n} status reads, then {@code started}),
 *       {@code GET /sandbox/{idOrName}}, {@code GET /sandbox?labels={json}} (a
 *       {@code ListSandboxesResponse}), {@code DELETE /sandbox/{idOrName}} (409 while the state change
 *       is pending), {@code GET /sandbox/{id}/toolbox-proxy-url}, {@code GET /config} and
 *       {@code GET /health}. The SDK's socket.io event stream is refused with 404 (it then polls).</li>
 *   <li>Toolbox under {@code /toolbox/{id}} (the sandbox's {@code toolboxProxyUrl} points here):
 *       {@code POST process/execute} and {@code process/code-run} (stdout and stderr merged in
 *       {@code result}; the {@code timeout} in seconds is the budget, answered with 408 and no output
 *       when it runs out), {@code POST files/bulk-upload} (multipart) and {@code GET files/download?path=}
 *       and {@code POST files/bulk-download} (what the SDK 0.218's {@code fs.downloadFile} sends: a
 *       multipart answer), both read through the local runner, which follows no link.</li>
 *   <li>{@code Authorization: Bearer <key>} on both; errors in Daytona's shapes (API
 *       {@code {statusCode,error,message,path,timestamp}}, toolbox
 *       {@code {statusCode,message,code,timestamp,path,method}}, upload {@code {errors,files}}).</li>
 *   <li>Test controls (no auth): {@code GET /_emulator/calls}, {@code GET /_emulator/ledger},
 *       {@code POST /_emulator/faults}.</li>
 * </ul>
 *
 * <p>Faults (the shared {@link #faults()} knobs): failed and rate-limited creates answer before
 * anything is created; a lost create creates the sandbox and drops the connection; a dropped stream
 * starts the command, sends the 200 headers and the first bytes of the body, then cuts the connection
 * (the command runs on, as on Daytona, whose daemon does not tie it to the request); a failing teardown
 * answers its status and leaves the sandbox; slow delays every answer; hostile framing answers an exec
 * with a {@code result} string that never ends, streamed without being allocated.
 *
 * <p>Guesses (not documented, not observed): the bodies of 401, 429 and 5xx answers and of the
 * toolbox's 401/404/409; the name-conflict 409; {@code /config}, {@code /health} and the list's cursor
 * format; a toolbox call on a sandbox that is not started answering 409; a deleted sandbox vanishing at
 * once (Daytona shows {@code destroying} for a while); the output cap (the daemon has none). Simplified:
 * the home ({@code /home/daytona}) is the machine's working directory and is mapped for uploads and
 * {@code cwd} only; files uploaded elsewhere are linked into place before each command; resources are
 * recorded, not enforced; code-run quotes each {@code argv} element (the daemon joins them unquoted).
 *
 * @since 0.1.0
 */
public final class DaytonaEmulator extends HttpEmulator {
    private static final Logger log = LoggerFactory.getLogger(DaytonaEmulator.class);
    /** The key the emulator accepts unless told otherwise. */
    public static final String DEFAULT_API_KEY = "daytona-emulator-key";
    static final String DEFAULT_SNAPSHOT = "daytonaio/sandbox:emulated";
    static final String DAEMON_VERSION = "v0.190.0-emulated";
    static final String ORGANIZATION_ID = "org-emulated-0000";
    private static final int MAX_JSON_BYTES = 32 * 1024 * 1024;
    private static final int MAX_CALLS = 10_000;
    private static final byte[] HOSTILE_CHUNK = "A".repeat(64 * 1024).getBytes(StandardCharsets.US_ASCII);

    private final String apiKey;
    private final MachineFactory machines;
    private final List<String> canaryTargets;
    private final long maxUploadBytes;
    private final long maxOutputBytes;
    private final Duration maxCommandTime;
    private final Duration minute;
    private final long hostileBytes;
    private final Map<String, EmulatedSandbox> sandboxes = new ConcurrentHashMap<>();
    private final List<Call> calls = new ArrayList<>();
    private final long startNanos = System.nanoTime();
    private final ScheduledExecutorService reaper;
    private final String cwdFailureMarker = "\u0001dtn-emulator-cwd-failed-" + UUID.randomUUID();

    private volatile int startingPolls;
    private volatile boolean omitToolboxProxyUrl;
    private final AtomicInteger startFailures = new AtomicInteger();

    private DaytonaEmulator(Builder b) throws IOException {
        super(b.port, b.instant);
        this.apiKey = b.apiKey;
        this.machines = b.instant ? InstantMachines.INSTANCE : b.machines;
        this.canaryTargets = List.copyOf(b.canaryTargets);
        this.maxUploadBytes = b.maxUploadBytes;
        this.maxOutputBytes = b.maxOutputBytes;
        this.maxCommandTime = b.maxCommandTime;
        this.minute = b.minute;
        this.hostileBytes = b.hostileBytes;
        this.startingPolls = b.startingPolls;
        this.reaper = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "DaytonaEmulator-autostop");
            t.setDaemon(true);
            return t;
        });
        long period = Math.max(10, minute.toMillis() / 4);
        reaper.scheduleAtFixedRate(this::autoStop, period, period, TimeUnit.MILLISECONDS);
    }

    public static Builder builder(MachineFactory machines) {
        return new Builder(machines);
    }

    /** The API base URL, for {@code DAYTONA_API_URL}: {@code http://127.0.0.1:<port>/api}. */
    public String apiUrl() {
        return baseUrl() + "/api";
    }

    /** What sandboxes carry as {@code toolboxProxyUrl}: {@code http://127.0.0.1:<port>/toolbox}. */
    public String toolboxProxyUrl() {
        return baseUrl() + "/toolbox";
    }

    public String apiKey() {
        return apiKey;
    }

    /**
     * How many status reads see a new sandbox in its transitional state ({@code starting}, or
     * {@code pending_build} for an image create) before {@code started}. With {@code n > 0} the create
     * answer is transitional too. A DELETE refused with 409 for the pending change counts as a read.
     */
    public DaytonaEmulator startingPolls(int n) {
        if (n < 0) {
            throw new IllegalArgumentException("startingPolls must not be negative");
        }
        this.startingPolls = n;
        return this;
    }

    /** Sandbox records leave out {@code toolboxProxyUrl}, so clients must look it up. */
    public DaytonaEmulator omitToolboxProxyUrl(boolean omit) {
        this.omitToolboxProxyUrl = omit;
        return this;
    }

    /**
     * The next {@code times} creates insert the sandbox in state {@code error} and answer 400
     * {@code Sandbox failed to start: ...}, as Daytona does when a start fails within its wait.
     */
    public DaytonaEmulator failStart(int times) {
        startFailures.set(times);
        return this;
    }

    /** Ids of sandboxes not deleted (stopped ones included). */
    public Set<String> sandboxIds() {
        return Set.copyOf(sandboxes.keySet());
    }

    /** Whether the sandbox's machine got the host network; null when there is no such sandbox. */
    public Boolean hostNetwork(String id) {
        EmulatedSandbox s = sandboxes.get(id);
        return s == null ? null : s.hostNetwork;
    }

    /** The requests received so far, oldest first (at most the last 10,000). */
    public List<Call> calls() {
        synchronized (calls) {
            return List.copyOf(calls);
        }
    }

    public void clearCalls() {
        synchronized (calls) {
            calls.clear();
        }
    }

    @Override
    public void close() {
        reaper.shutdownNow();
        super.close();
    }

    // ------------------------------------------------------------------ routing

    @Override
    protected void handle(HttpExchange exchange) throws Exception {
        String path = exchange.getRequestURI().getRawPath();
        String method = exchange.getRequestMethod();
        if (path.startsWith("/_emulator/")) {
            control(exchange, method, path.substring("/_emulator/".length()));
            return;
        }
        Call call = record(exchange);
        try {
            if (path.equals("/api") || path.startsWith("/api/")) {
                api(exchange, call, method, path.substring(4));
            } else if (path.startsWith("/toolbox/")) {
                toolbox(exchange, call, method, path.substring("/toolbox/".length()));
            } else {
                apiError(exchange, call, 404, "Cannot " + method + " " + path);
            }
        } catch (WireException e) {
            // a toolbox handler's refusal in the daemon's shape
            toolboxError(exchange, call, e.status(), e.getMessage(), e.code() != null ? e.code() : codeFor(e.status()));
        }
    }

    @Override
    protected Kind kind(HttpExchange exchange) {
        String method = exchange.getRequestMethod();
        String path = exchange.getRequestURI().getRawPath();
        if (path.startsWith("/toolbox/")) {
            return method.equals("POST") && (path.endsWith("/process/execute") || path.endsWith("/process/code-run"))
                    ? Kind.EXEC : Kind.OTHER;
        }
        List<String> seg = path.startsWith("/api/") ? segments(path.substring(4)) : List.of();
        if (seg.isEmpty() || !seg.get(0).equals("sandbox")) {
            return Kind.OTHER;
        }
        if (seg.size() == 1) {
            return method.equals("POST") ? Kind.CREATE : method.equals("GET") ? Kind.LOOKUP : Kind.OTHER;
        }
        if (seg.size() == 2 && method.equals("DELETE")) {
            return Kind.TEARDOWN;
        }
        // the adapter's second way to find a run id: the sandbox named after it (polls by id are not lookups)
        return seg.size() == 2 && method.equals("GET") && seg.get(1).startsWith("sandbox4j-") ? Kind.LOOKUP : Kind.OTHER;
    }

    private void api(HttpExchange exchange, Call call, String method, String rest) throws Exception {
        List<String> seg = segments(rest);
        if (seg.size() == 1 && seg.get(0).equals("socket.io")) {
            // no event stream here: the SDK handles the refused upgrade and polls instead
            apiError(exchange, call, 404, "Cannot " + method + " " + exchange.getRequestURI().getRawPath());
            return;
        }
        if (seg.size() == 1 && seg.get(0).equals("health") && method.equals("GET")) {
            sendJson(exchange, call, 200, object().put("status", "ok"));
            return;
        }
        if (!authorized(exchange)) {
            apiError(exchange, call, 401, "Unauthorized");
            return;
        }
        if (seg.size() == 1 && seg.get(0).equals("config") && method.equals("GET")) {
            sendJson(exchange, call, 200, config());
            return;
        }
        if (seg.isEmpty() || !seg.get(0).equals("sandbox")) {
            apiError(exchange, call, 404, "Cannot " + method + " " + exchange.getRequestURI().getRawPath());
            return;
        }
        try {
            if (seg.size() == 1 && method.equals("POST")) {
                create(exchange, call);
            } else if (seg.size() == 1 && method.equals("GET")) {
                list(exchange, call);
            } else if (seg.size() == 2 && method.equals("GET")) {
                get(exchange, call, seg.get(1));
            } else if (seg.size() == 2 && method.equals("DELETE")) {
                delete(exchange, call, seg.get(1));
            } else if (seg.size() == 3 && seg.get(2).equals("toolbox-proxy-url") && method.equals("GET")) {
                find(seg.get(1));
                sendJson(exchange, call, 200, object().put("url", toolboxProxyUrl()));
            } else {
                apiError(exchange, call, 404, "Cannot " + method + " " + exchange.getRequestURI().getRawPath());
            }
        } catch (WireException e) {
            apiError(exchange, call, e.status(), e.getMessage());
        }
    }

    // ------------------------------------------------------------------ API

    private void create(HttpExchange exchange, Call call) throws Exception {
        int failure = faults.takeCreateFailure();
        if (failure != 0) {
            readBody(exchange, MAX_JSON_BYTES); // the request is consumed; nothing is created
            if (failure == 429) {
                int seconds = faults.retryAfterSeconds();
                if (seconds >= 0) {
                    exchange.getResponseHeaders().set("Retry-After", Integer.toString(seconds));
                }
                apiError(exchange, call, 429, "ThrottlerException: Too Many Requests");
            } else {
                apiError(exchange, call, failure, failure >= 500 ? "An unexpected error occurred." : "Request failed");
            }
            return;
        }
        JsonNode body = parseJson(readBody(exchange, MAX_JSON_BYTES), call);
        if (!body.isObject()) {
            throw WireException.badRequest("Request body must be a JSON object");
        }
        requireObject(body, "env");
        requireObject(body, "labels");
        for (String f : List.of("name", "snapshot", "user", "target")) {
            JsonNode n = body.path(f);
            if (!n.isMissingNode() && !n.isNull() && !n.isTextual()) {
                throw WireException.badRequest(f + " must be a string");
            }
        }
        WireEgress egress = WireEgress.parse(body);
        Map<String, Integer> resources = resources(body);
        for (String f : List.of("autoStopInterval", "autoArchiveInterval", "autoDeleteInterval")) {
            JsonNode n = body.path(f);
            if (!n.isMissingNode() && !n.isNull() && !(n.isIntegralNumber() && n.canConvertToInt())) {
                throw WireException.badRequest(f + " must be an integer number");
            }
            if (!f.equals("autoDeleteInterval") && n.asInt(0) < 0) {
                throw WireException.badRequest(f + " must not be negative");
            }
        }
        JsonNode isPublic = body.path("public");
        if (!isPublic.isMissingNode() && !isPublic.isNull() && !isPublic.isBoolean()) {
            throw WireException.badRequest("public must be a boolean value");
        }
        String name = body.hasNonNull("name") ? body.get("name").asText() : null;
        if (name != null && findByName(name) != null) {
            throw new WireException(409, "Sandbox with name " + name + " already exists");
        }

        boolean late = createLate(exchange); // the client is gone: create, answer nothing
        boolean host = egress.hostNetwork(canaryTargets);
        String id = UUID.randomUUID().toString();
        Instant now = Instant.now();
        EmulatedSandbox sandbox = new EmulatedSandbox(id, body, ORGANIZATION_ID, egress, host, resources, now);
        sandboxes.put(id, sandbox);
        ledger.created(id, stringMap(sandbox.labels));
        log.debug("daytona emulator: sandbox {} created (host network {}, {})", id, host, egress);

        if (takeOne(startFailures)) {
            sandbox.fail("emulated start failure", now);
            apiError(exchange, call, 400, "Sandbox failed to start: emulated start failure");
            return;
        }
        try {
            sandbox.start(machines.open(host, stringMap(sandbox.env), Duration.ofHours(24)), startingPolls);
        } catch (Exception e) {
            log.warn("daytona emulator: the machine for sandbox {} did not open", id, e);
            sandbox.fail(String.valueOf(e.getMessage()), now);
            apiError(exchange, call, 400, "Sandbox failed to start: " + e.getMessage());
            return;
        }
        if (late || faults.takeLostCreate()) {
            call.status = -1;
            drop(exchange);
            return;
        }
        sendJson(exchange, call, 200, sandbox.toJson(proxyUrlField(), false));
    }

    /** cpu/gpu/memory/disk: only with buildInfo, as the controller enforces; defaults 1/0/1/3. */
    private static Map<String, Integer> resources(JsonNode body) throws WireException {
        boolean build = body.hasNonNull("buildInfo");
        if (build && !body.get("buildInfo").isObject()) {
            throw WireException.badRequest("buildInfo must be an object");
        }
        if (build && body.hasNonNull("snapshot")) {
            throw WireException.badRequest("Cannot specify a snapshot when using a build info entry");
        }
        Map<String, Integer> r = new HashMap<>(Map.of("cpu", 1, "gpu", 0, "memory", 1, "disk", 3));
        for (String f : List.of("cpu", "gpu", "memory", "disk")) {
            JsonNode n = body.path(f);
            if (n.isMissingNode() || n.isNull()) {
                continue;
            }
            if (!n.isNumber()) {
                throw WireException.badRequest(f + " must be an integer number");
            }
            if (n.asDouble() != 0 && !build) {
                throw WireException.badRequest("Cannot specify Sandbox resources when using a snapshot");
            }
            if (build) {
                r.put(f, n.asInt());
            }
        }
        return r;
    }

    private void get(HttpExchange exchange, Call call, String idOrName) throws Exception {
        EmulatedSandbox s = find(idOrName);
        String shown = s.read();
        sendJson(exchange, call, 200, s.toJson(shown, proxyUrlField(), false));
    }

    private void list(HttpExchange exchange, Call call) throws Exception {
        Map<String, String> q = queryFirst(exchange.getRequestURI().getRawQuery());
        Map<String, String> wanted = new LinkedHashMap<>();
        if (q.containsKey("labels")) {
            JsonNode labels;
            try {
                labels = JSON.readTree(q.get("labels"));
            } catch (IOException e) {
                throw WireException.badRequest("Invalid labels JSON");
            }
            if (labels == null || !labels.isObject()) {
                throw WireException.badRequest("Invalid labels JSON");
            }
            labels.properties().forEach(e -> wanted.put(e.getKey(), e.getValue().asText()));
        }
        int limit = 100;
        if (q.containsKey("limit")) {
            try {
                limit = Integer.parseInt(q.get("limit"));
            } catch (NumberFormatException e) {
                throw WireException.badRequest("limit must be a number conforming to the specified constraints");
            }
            if (limit < 1 || limit > 200) {
                throw WireException.badRequest(limit < 1 ? "limit must not be less than 1" : "limit must not be greater than 200");
            }
        }
        int offset = 0;
        if (q.containsKey("cursor")) {
            try {
                offset = Integer.parseInt(q.get("cursor"));
            } catch (NumberFormatException e) {
                throw WireException.badRequest("Invalid cursor");
            }
        }
        List<EmulatedSandbox> matching = new ArrayList<>();
        for (EmulatedSandbox s : sandboxes.values()) {
            if (q.containsKey("id") && !s.id.equals(q.get("id"))) {
                continue;
            }
            if (q.containsKey("name") && !s.name.equals(q.get("name"))) {
                continue;
            }
            boolean all = true;
            for (Map.Entry<String, String> w : wanted.entrySet()) {
                JsonNode v = s.labels.get(w.getKey());
                if (v == null || !v.asText().equals(w.getValue())) {
                    all = false;
                    break;
                }
            }
            if (all) {
                matching.add(s);
            }
        }
        matching.sort(Comparator.comparing((EmulatedSandbox s) -> s.createdAt).reversed().thenComparing(s -> s.id));
        ObjectNode out = object();
        ArrayNode items = out.putArray("items");
        int end = Math.min(matching.size(), offset + limit);
        for (int i = Math.max(0, offset); i < end; i++) {
            items.add(matching.get(i).toJson(proxyUrlField(), true));
        }
        if (end < matching.size()) {
            out.put("nextCursor", Integer.toString(end));
        } else {
            out.putNull("nextCursor");
        }
        sendJson(exchange, call, 200, out);
    }

    private void delete(HttpExchange exchange, Call call, String idOrName) throws Exception {
        EmulatedSandbox s = find(idOrName);
        int failure = faults.takeTeardownFailure();
        if (failure != 0) {
            apiError(exchange, call, failure, failure == 409 ? "Sandbox state change in progress"
                    : failure >= 500 ? "An unexpected error occurred." : "Request failed");
            return;
        }
        if (s.changePending()) {
            s.read(); // the refused delete is one more look at the state: the start moves on
            apiError(exchange, call, 409, "Sandbox state change in progress");
            return;
        }
        ObjectNode answer = s.toJson(proxyUrlField(), false);
        ledger.killedByClient(s.id);
        destroy(s);
        answer.put("desiredState", "destroyed");
        sendJson(exchange, call, 200, answer);
    }

    private void destroy(EmulatedSandbox s) {
        Machine m = s.delete(Instant.now());
        sandboxes.remove(s.id, s);
        if (m != null) {
            try {
                m.close();
            } catch (RuntimeException e) {
                log.warn("daytona emulator: closing the machine of {} failed", s.id, e);
            }
        }
        ledger.destroyed(s.id);
        log.debug("daytona emulator: sandbox {} deleted", s.id);
    }

    @Override
    protected void destroyAll() {
        for (EmulatedSandbox s : List.copyOf(sandboxes.values())) {
            destroy(s);
        }
    }

    /** Auto-stop after {@code autoStopInterval} minutes without toolbox activity; ephemeral ones are deleted. */
    private void autoStop() {
        try {
            Instant now = Instant.now();
            for (EmulatedSandbox s : List.copyOf(sandboxes.values())) {
                String state = s.currentState();
                if (state.equals("started") && s.autoStopInterval > 0 && !s.execLock.isLocked()
                        && s.lastActivityAt().plus(minute.multipliedBy(s.autoStopInterval)).isBefore(now)) {
                    Machine m = s.stop(now);
                    if (m != null) {
                        m.close();
                    }
                    log.debug("daytona emulator: sandbox {} auto-stopped", s.id);
                    state = "stopped";
                }
                if (state.equals("stopped") && s.autoDeleteInterval >= 0 && s.stoppedAt() != null
                        && !s.stoppedAt().plus(minute.multipliedBy(s.autoDeleteInterval)).isAfter(now)) {
                    destroy(s);
                }
            }
        } catch (RuntimeException e) {
            log.warn("daytona emulator: auto-stop pass failed", e);
        }
    }

    private ObjectNode config() {
        ObjectNode c = object();
        c.put("version", DAEMON_VERSION);
        c.putObject("oidc").put("issuer", baseUrl() + "/oidc").put("clientId", "emulated").put("audience", "emulated");
        c.put("linkedAccountsEnabled", false);
        c.putObject("announcements");
        c.put("proxyTemplateUrl", baseUrl() + "/preview/{{PORT}}-{{sandboxId}}");
        c.put("proxyToolboxUrl", toolboxProxyUrl());
        c.put("defaultSnapshot", DEFAULT_SNAPSHOT);
        c.put("dashboardUrl", baseUrl() + "/dashboard");
        c.put("maxAutoArchiveInterval", 43200);
        c.put("maintananceMode", false);
        c.put("environment", "emulated");
        return c;
    }

    private String proxyUrlField() {
        return omitToolboxProxyUrl ? null : toolboxProxyUrl();
    }

    private EmulatedSandbox find(String idOrName) throws WireException {
        EmulatedSandbox s = sandboxes.get(idOrName);
        if (s == null) {
            s = findByName(idOrName);
        }
        if (s == null) {
            throw new WireException(404, "Sandbox with ID or name " + idOrName + " not found");
        }
        return s;
    }

    private EmulatedSandbox findByName(String name) {
        for (EmulatedSandbox s : sandboxes.values()) {
            if (s.name.equals(name)) {
                return s;
            }
        }
        return null;
    }

    // ------------------------------------------------------------------ toolbox

    private void toolbox(HttpExchange exchange, Call call, String method, String rest) throws Exception {
        int slash = rest.indexOf('/');
        String id = slash < 0 ? rest : rest.substring(0, slash);
        String op = slash < 0 ? "" : rest.substring(slash);
        if (!authorized(exchange)) {
            toolboxError(exchange, call, 401, "unauthorized: invalid or missing API key", "UNAUTHORIZED");
            return;
        }
        EmulatedSandbox s = sandboxes.get(id);
        if (s == null) {
            toolboxError(exchange, call, 404, "not found: sandbox " + id + " not found", "NOT_FOUND");
            return;
        }
        if (!"started".equals(s.currentState()) || s.machine() == null) {
            toolboxError(exchange, call, 409, "conflict: sandbox " + id + " is not started (state "
                    + s.currentState() + ")", "CONFLICT");
            return;
        }
        s.touch(Instant.now());
        call.toolboxPath = op;
        if (method.equals("POST") && op.equals("/process/execute")) {
            execute(exchange, call, s, op);
        } else if (method.equals("POST") && op.equals("/process/code-run")) {
            codeRun(exchange, call, s, op);
        } else if (method.equals("POST") && op.equals("/files/bulk-upload")) {
            upload(exchange, call, s);
        } else if (method.equals("GET") && op.equals("/files/download")) {
            download(exchange, call, s);
        } else if (method.equals("POST") && op.equals("/files/bulk-download")) {
            bulkDownload(exchange, call, s);
        } else {
            // gin's own answer for an unknown route
            call.status = 404;
            sendText(exchange, 404, "404 page not found");
        }
    }

    /**
     * The daemon's {@code GET /files/download?path=} ({@code fs/download_file.go}): the raw bytes as
     * {@code application/octet-stream}, 404 for a missing file, 400 for a directory or an empty path.
     * Read through the machine, which follows no link (the real daemon follows links inside its own
     * VM; here a link could point at a host file, so it is refused).
     */
    private void download(HttpExchange exchange, Call call, EmulatedSandbox s) throws IOException {
        Map<String, List<String>> query = HttpEmulator.queryParams(exchange.getRequestURI().getRawQuery());
        List<String> values = query.get("path");
        String path = values == null || values.isEmpty() ? "" : values.get(0);
        if (path.isEmpty()) {
            toolboxError(exchange, call, 400, "bad request: path is required", "BAD_REQUEST");
            return;
        }
        String stored;
        try {
            stored = SandboxPaths.storage(path);
        } catch (IllegalArgumentException e) {
            toolboxError(exchange, call, 400, "bad request: path must be a file", "BAD_REQUEST");
            return;
        }
        dev.sandbox4j.api.SandboxFile file;
        try {
            file = s.machine().readFile(stored, maxUploadBytes + 1);
        } catch (java.nio.file.NoSuchFileException e) {
            toolboxError(exchange, call, 404, "not found: stat " + SandboxPaths.absolute(path) + ": no such file or directory",
                    "NOT_FOUND");
            return;
        } catch (IOException e) {
            toolboxError(exchange, call, 400, "bad request: " + e.getMessage(), "BAD_REQUEST");
            return;
        }
        if (file.truncated()) {
            toolboxError(exchange, call, 400, "bad request: file too large for the emulator", "BAD_REQUEST");
            return;
        }
        byte[] content = file.content();
        call.status = 200;
        exchange.getResponseHeaders().set("Content-Type", "application/octet-stream");
        exchange.getResponseHeaders().set("Content-Disposition", "attachment; filename=" + file.name());
        exchange.sendResponseHeaders(200, content.length == 0 ? -1 : content.length);
        try (java.io.OutputStream out = exchange.getResponseBody()) {
            out.write(content);
        }
    }

    /**
     * {@code POST files/bulk-download} {@code {"paths": [...]}}, which the SDK's {@code fs.downloadFile}
     * sends: a {@code multipart/form-data} answer, one part per path, {@code name="file"} with the
     * bytes or {@code name="error"} with a message, its {@code filename} the requested path (how the
     * SDK 0.218 matches parts to requests). Read through the machine, which follows no link.
     */
    private void bulkDownload(HttpExchange exchange, Call call, EmulatedSandbox s) throws Exception {
        JsonNode body = toolboxBody(exchange, call);
        JsonNode paths = body.get("paths");
        if (paths == null || !paths.isArray() || paths.isEmpty()) {
            toolboxError(exchange, call, 400, "request body must be {\"paths\": [ ... ]} and non-empty", "BAD_REQUEST");
            return;
        }
        String boundary = "DAYTONA-FILE-BOUNDARY";
        java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
        long budget = maxUploadBytes;
        for (JsonNode p : paths) {
            String path = p.asText("");
            String quoted = path.replace("\\", "\\\\").replace("\"", "\\\"");
            byte[] content = null;
            String error;
            try {
                dev.sandbox4j.api.SandboxFile f = s.machine().readFile(SandboxPaths.storage(path), budget + 1);
                if (f.truncated()) {
                    error = "file too large for the emulator: " + path;
                } else {
                    content = f.content();
                    budget -= content.length;
                    error = null;
                }
            } catch (IllegalArgumentException | IOException e) {
                error = "file not found or invalid: " + path;
            }
            out.write(("--" + boundary + "\r\n").getBytes(StandardCharsets.UTF_8));
            if (content != null) {
                out.write(("Content-Disposition: form-data; name=\"file\"; filename=\"" + quoted + "\"\r\n"
                        + "Content-Type: application/octet-stream\r\n\r\n").getBytes(StandardCharsets.UTF_8));
                out.write(content);
            } else {
                out.write(("Content-Disposition: form-data; name=\"error\"; filename=\"" + quoted + "\"\r\n"
                        + "Content-Type: text/plain; charset=utf-8\r\n\r\n" + error).getBytes(StandardCharsets.UTF_8));
            }
            out.write("\r\n".getBytes(StandardCharsets.UTF_8));
        }
        out.write(("--" + boundary + "--\r\n").getBytes(StandardCharsets.UTF_8));
        byte[] answer = out.toByteArray();
        call.status = 200;
        exchange.getResponseHeaders().set("Content-Type", "multipart/form-data; boundary=" + boundary);
        exchange.sendResponseHeaders(200, answer.length);
        try (java.io.OutputStream o = exchange.getResponseBody()) {
            o.write(answer);
        }
    }

    private void execute(HttpExchange exchange, Call call, EmulatedSandbox s, String op) throws Exception {
        JsonNode body = toolboxBody(exchange, call);
        String command = requiredString(body, "command", "ExecuteRequest.Command", "Command");
        Integer timeout = optionalTimeout(body);
        String cwd = optionalBodyString(body, "cwd");
        Map<String, String> envs = optionalEnvs(body);
        ToolboxScripts.validateEnvNames(envs);
        ledger.executed(s.id, command, s.hostNetwork);
        String script;
        try {
            script = ToolboxScripts.execute(command, cwd, envs, List.copyOf(s.outsidePaths), cwdFailureMarker);
        } catch (IllegalArgumentException e) {
            throw WireException.badRequest("bad request: invalid cwd");
        }
        runCommand(exchange, call, s, op, script, timeout, false, cwd);
    }

    private void codeRun(HttpExchange exchange, Call call, EmulatedSandbox s, String op) throws Exception {
        JsonNode body = toolboxBody(exchange, call);
        String code = requiredString(body, "code", "CodeRunRequest.Code", "Code");
        String language = requiredString(body, "language", "CodeRunRequest.Language", "Language");
        Integer timeout = optionalTimeout(body);
        Map<String, String> envs = optionalEnvs(body);
        List<String> argv = new ArrayList<>();
        JsonNode a = body.path("argv");
        if (!a.isMissingNode() && !a.isNull()) {
            if (!a.isArray()) {
                throw invalidBody("json: cannot unmarshal " + jsonType(a) + " into Go struct field CodeRunRequest.argv of type []string");
            }
            for (JsonNode x : a) {
                if (!x.isTextual()) {
                    throw invalidBody("json: cannot unmarshal " + jsonType(x) + " into Go struct field CodeRunRequest.argv of type string");
                }
                argv.add(x.asText());
            }
        }
        ledger.executed(s.id, code, s.hostNetwork);
        String script = ToolboxScripts.codeRun(language, code, argv, envs, List.copyOf(s.outsidePaths));
        ToolboxScripts.validateEnvNames(envs);
        runCommand(exchange, call, s, op, script, timeout, true, null);
    }

    /** Runs a script on the machine and answers as the daemon does; faults replace or cut the answer. */
    private void runCommand(HttpExchange exchange, Call call, EmulatedSandbox s, String op, String script,
            Integer timeout, boolean codeRun, String cwd) throws Exception {
        if (instant()) {
            sendJson(exchange, call, 200, object().put("exitCode", 0).put("result", ""));
            return;
        }
        if (faults.hostileFraming()) {
            hostileAnswer(exchange, call);
            return;
        }
        Duration budget = timeout == null || timeout == 0 ? maxCommandTime : Duration.ofSeconds(timeout);
        Execution execution = Execution.builder(script).language(Language.BASH).budget(budget)
                .outputLimit((int) Math.min(Integer.MAX_VALUE, maxOutputBytes)).hardCapBytes(maxOutputBytes).build();
        if (faults.takeLostExecResponse()) {
            // the command runs on; the client hears nothing, not even a status line
            Thread runner = new Thread(() -> runLocked(s, execution), "DaytonaEmulator-orphaned-command");
            runner.setDaemon(true);
            runner.start();
            call.status = -1;
            drop(exchange);
            return;
        }
        if (faults.takeDroppedStream()) {
            Thread runner = new Thread(() -> runLocked(s, execution), "DaytonaEmulator-orphaned-command");
            runner.setDaemon(true);
            runner.start();
            call.status = -1;
            exchange.getResponseHeaders().set("Content-Type", "application/json");
            exchange.sendResponseHeaders(200, 0);
            OutputStream out = exchange.getResponseBody();
            out.write("{\"result\":\"".getBytes(StandardCharsets.US_ASCII));
            out.flush();
            cut(exchange);
            return;
        }
        RunResult r = runLocked(s, execution);
        if (r == null || !sandboxes.containsKey(s.id)) {
            // the sandbox was deleted under the command: there is no daemon left to answer
            call.status = -1;
            drop(exchange);
            return;
        }
        s.touch(Instant.now());
        if (r.status() == RunStatus.TIMED_OUT) {
            toolboxError(exchange, call, 408, "command execution timeout", "REQUEST_TIMEOUT", op);
            return;
        }
        String output = r.stdout();
        int exitCode;
        if (r.status() == RunStatus.EXITED && r.exitCode().isPresent()) {
            exitCode = r.exitCode().getAsInt();
        } else {
            // killed by a signal, or the emulator's output cap: Go reports -1 for a signalled process
            exitCode = -1;
        }
        if (!codeRun && exitCode == 255 && output.equals(cwdFailureMarker)) {
            exitCode = -1;
            output = "chdir " + cwd + ": no such file or directory";
        }
        ObjectNode answer = object();
        if (codeRun) {
            ToolboxScripts.Artifacts parsed = ToolboxScripts.parseArtifacts(output);
            answer.put("exitCode", exitCode).put("result", parsed.result());
            if (parsed.charts() != null) {
                answer.putObject("artifacts").set("charts", parsed.charts());
            }
        } else {
            answer.put("exitCode", exitCode).put("result", output);
        }
        sendJson(exchange, call, 200, answer);
    }

    /** One command at a time per machine; null when the machine went away. */
    private RunResult runLocked(EmulatedSandbox s, Execution execution) {
        s.execLock.lock();
        try {
            Machine m = s.machine();
            if (m == null) {
                return null;
            }
            return m.exec(execution);
        } catch (RuntimeException e) {
            if (!sandboxes.containsKey(s.id)) {
                return null;
            }
            throw e;
        } finally {
            s.execLock.unlock();
        }
    }

    /** A 200 whose {@code result} string goes on and on, written lazily until the client gives up. */
    private void hostileAnswer(HttpExchange exchange, Call call) throws IOException {
        call.status = 200;
        exchange.getResponseHeaders().set("Content-Type", "application/json");
        exchange.sendResponseHeaders(200, 0);
        OutputStream out = exchange.getResponseBody();
        try {
            out.write("{\"result\":\"".getBytes(StandardCharsets.US_ASCII));
            for (long sent = 0; sent < hostileBytes; sent += HOSTILE_CHUNK.length) {
                out.write(HOSTILE_CHUNK);
            }
            out.write("\",\"exitCode\":0}".getBytes(StandardCharsets.US_ASCII));
            out.close();
        } catch (IOException e) {
            // the client stopped reading: exactly what a bounded client should do
            drop(exchange);
        }
    }

    private void upload(HttpExchange exchange, Call call, EmulatedSandbox s) throws Exception {
        String contentType = exchange.getRequestHeaders().getFirst("Content-Type");
        String boundary = Multipart.mediaType(contentType).equals("multipart/form-data")
                ? Multipart.boundary(contentType) : null;
        if (boundary == null || boundary.length() > 200) {
            readBody(exchange, maxUploadBytes);
            ObjectNode err = object();
            err.putArray("errors").add("invalid multipart form");
            sendJson(exchange, call, 400, err);
            return;
        }
        byte[] body = readBody(exchange, maxUploadBytes);
        List<Multipart.Part> parts;
        try {
            parts = Multipart.parse(body, boundary);
        } catch (Multipart.MalformedException e) {
            ObjectNode err = object();
            err.putArray("errors").add("reading part: " + e.getMessage());
            err.putNull("files");
            sendJson(exchange, call, 400, err);
            return;
        }
        ArrayNode recorded = call.body == null ? JSON.createArrayNode() : null;
        Map<String, String> dests = new HashMap<>();
        List<String> errors = new ArrayList<>();
        ArrayNode files = JSON.createArrayNode();
        for (Multipart.Part part : parts) {
            String name = part.name() == null ? "" : part.name();
            if (recorded != null) {
                ObjectNode p = recorded.addObject().put("name", name).put("size", part.size());
                if (part.filename() != null) {
                    p.put("filename", part.filename());
                }
                if (name.endsWith(".path")) {
                    p.put("value", part.text());
                }
            }
            String idx = name.startsWith("files[") ? name.substring(6) : name;
            idx = idx.endsWith("].path") ? idx.substring(0, idx.length() - 6)
                    : idx.endsWith("].file") ? idx.substring(0, idx.length() - 6) : idx;
            if (name.endsWith(".path")) {
                String dest = part.text().trim();
                if (dest.isEmpty()) {
                    errors.add("path[" + idx + "]: empty path");
                } else {
                    dests.put(idx, dest);
                }
            } else if (name.endsWith(".file")) {
                String dest = dests.get(idx);
                if (dest == null) {
                    errors.add("file[" + idx + "]: missing .path metadata");
                    continue;
                }
                try {
                    String stored = SandboxPaths.storage(dest);
                    Machine m = s.machine();
                    if (m == null) {
                        throw new IOException("sandbox is not running");
                    }
                    m.writeFile(stored, part.content());
                    if (stored.startsWith(SandboxPaths.OUTSIDE + "/")) {
                        s.outsidePaths.add(SandboxPaths.absolute(dest));
                    }
                    files.addObject().put("path", dest).put("bytes", part.size());
                } catch (IOException | IllegalArgumentException | SecurityException e) {
                    errors.add(dest + ": " + e.getMessage());
                }
            }
        }
        if (recorded != null) {
            call.body = object().set("multipartParts", recorded);
        }
        ObjectNode answer = object();
        if (!errors.isEmpty()) {
            ArrayNode e = answer.putArray("errors");
            errors.forEach(e::add);
        }
        if (files.isEmpty()) {
            answer.putNull("files"); // Go marshals a nil slice as null
        } else {
            answer.set("files", files);
        }
        sendJson(exchange, call, errors.isEmpty() ? 200 : 400, answer);
    }

    // ------------------------------------------------------------------ toolbox request parsing (gin's binding)

    private JsonNode toolboxBody(HttpExchange exchange, Call call) throws Exception {
        byte[] raw = readBody(exchange, MAX_JSON_BYTES);
        JsonNode body;
        try {
            body = raw.length == 0 ? null : JSON.readTree(raw);
        } catch (IOException e) {
            throw invalidBody("invalid character in JSON body");
        }
        if (body == null) {
            throw invalidBody("EOF");
        }
        call.body = body;
        if (!body.isObject()) {
            throw invalidBody("json: cannot unmarshal " + jsonType(body) + " into Go value of type object");
        }
        return body;
    }

    private static String requiredString(JsonNode body, String field, String goField, String goName) throws WireException {
        JsonNode n = body.path(field);
        if (!n.isMissingNode() && !n.isNull() && !n.isTextual()) {
            throw invalidBody("json: cannot unmarshal " + jsonType(n) + " into Go struct field " + goField + " of type string");
        }
        if (!n.isTextual() || n.asText().isEmpty()) {
            throw invalidBody("Key: '" + goField + "' Error:Field validation for '" + goName + "' failed on the 'required' tag");
        }
        return n.asText();
    }

    private static String optionalBodyString(JsonNode body, String field) throws WireException {
        JsonNode n = body.path(field);
        if (n.isMissingNode() || n.isNull()) {
            return null;
        }
        if (!n.isTextual()) {
            throw invalidBody("json: cannot unmarshal " + jsonType(n) + " into Go struct field ." + field + " of type string");
        }
        return n.asText();
    }

    /** uint32 seconds; absent or 0 means no limit on the daemon. */
    private static Integer optionalTimeout(JsonNode body) throws WireException {
        JsonNode n = body.path("timeout");
        if (n.isMissingNode() || n.isNull()) {
            return null;
        }
        if (!n.isIntegralNumber() || n.asLong() < 0 || n.asLong() > 0xFFFFFFFFL) {
            throw invalidBody("json: cannot unmarshal " + (n.isNumber() ? "number " + n.asText() : jsonType(n))
                    + " into Go struct field .timeout of type uint32");
        }
        return (int) Math.min(Integer.MAX_VALUE, n.asLong());
    }

    private static Map<String, String> optionalEnvs(JsonNode body) throws WireException {
        JsonNode n = body.path("envs");
        Map<String, String> envs = new TreeMap<>();
        if (n.isMissingNode() || n.isNull()) {
            return envs;
        }
        if (!n.isObject()) {
            throw invalidBody("json: cannot unmarshal " + jsonType(n) + " into Go struct field .envs of type map[string]string");
        }
        Iterator<Map.Entry<String, JsonNode>> it = n.properties().iterator();
        while (it.hasNext()) {
            Map.Entry<String, JsonNode> e = it.next();
            if (!e.getValue().isTextual()) {
                throw invalidBody("json: cannot unmarshal " + jsonType(e.getValue()) + " into Go struct field .envs of type string");
            }
            envs.put(e.getKey(), e.getValue().asText());
        }
        return envs;
    }

    private static WireException invalidBody(String detail) {
        return new WireException(400, "invalid body request: " + detail, "INVALID_REQUEST_BODY");
    }

    private static String jsonType(JsonNode n) {
        if (n.isTextual()) {
            return "string";
        }
        if (n.isNumber()) {
            return "number";
        }
        if (n.isBoolean()) {
            return "bool";
        }
        if (n.isArray()) {
            return "array";
        }
        return n.isObject() ? "object" : "null";
    }

    private static String codeFor(int status) {
        switch (status) {
            case 400: return "BAD_REQUEST";
            case 401: return "UNAUTHORIZED";
            case 403: return "FORBIDDEN";
            case 404: return "NOT_FOUND";
            case 408: return "REQUEST_TIMEOUT";
            case 409: return "CONFLICT";
            case 410: return "GONE";
            case 413: return "BAD_REQUEST";
            case 422: return "UNPROCESSABLE_ENTITY";
            default: return "INTERNAL_SERVER_ERROR";
        }
    }

    // ------------------------------------------------------------------ error bodies

    /** The API's shape (NestJS all-exceptions filter). */
    @Override
    protected JsonNode error(int status, String message) {
        ObjectNode o = object();
        o.put("path", "");
        o.put("timestamp", Instant.now().toString());
        o.put("statusCode", status);
        o.put("error", reason(status));
        o.put("message", message);
        return o;
    }

    private void apiError(HttpExchange exchange, Call call, int status, String message) throws IOException {
        ObjectNode o = object();
        o.put("path", exchange.getRequestURI().getRawPath());
        o.put("timestamp", Instant.now().toString());
        o.put("statusCode", status);
        o.put("error", reason(status));
        o.put("message", message);
        sendJson(exchange, call, status, o);
    }

    private void toolboxError(HttpExchange exchange, Call call, int status, String message, String code) throws IOException {
        String path = call.toolboxPath != null ? call.toolboxPath : exchange.getRequestURI().getRawPath();
        toolboxError(exchange, call, status, message, code, path);
    }

    /** The daemon's shape ({@code libs/common-go/pkg/errors}); the path is what the daemon saw. */
    private void toolboxError(HttpExchange exchange, Call call, int status, String message, String code, String path)
            throws IOException {
        ObjectNode o = object();
        o.put("statusCode", status);
        o.put("message", message);
        o.put("code", code);
        o.put("timestamp", Instant.now().toString());
        o.put("path", path);
        o.put("method", exchange.getRequestMethod());
        sendJson(exchange, call, status, o);
    }

    private static String reason(int status) {
        switch (status) {
            case 400: return "Bad Request";
            case 401: return "Unauthorized";
            case 403: return "Forbidden";
            case 404: return "Not Found";
            case 408: return "Request Timeout";
            case 409: return "Conflict";
            case 413: return "Payload Too Large";
            case 429: return "Too Many Requests";
            case 500: return "Internal Server Error";
            case 502: return "Bad Gateway";
            case 503: return "Service Unavailable";
            case 504: return "Gateway Timeout";
            default: return "Error";
        }
    }

    // ------------------------------------------------------------------ test controls

    private void control(HttpExchange exchange, String method, String what) throws IOException {
        if (method.equals("GET") && what.equals("calls")) {
            ObjectNode o = object();
            ArrayNode a = o.putArray("calls");
            for (Call c : calls()) {
                a.add(c.toJson());
            }
            sendJson(exchange, 200, o);
        } else if (method.equals("GET") && what.equals("ledger")) {
            ObjectNode o = object().put("created", ledger.created()).put("destroyed", ledger.destroyed())
                    .put("live", ledger.live());
            ArrayNode ids = o.putArray("liveIds");
            ledger.liveIds().stream().sorted().forEach(ids::add);
            sendJson(exchange, 200, o);
        } else if (method.equals("POST") && what.equals("faults")) {
            JsonNode k;
            try {
                k = readJson(exchange);
            } catch (IOException e) {
                sendJson(exchange, 400, object().put("error", "not JSON"));
                return;
            }
            applyKnobs(k);
            sendJson(exchange, 200, object().put("ok", true));
        } else {
            sendJson(exchange, 404, object().put("error", "unknown control " + method + " " + what));
        }
    }

    private void applyKnobs(JsonNode k) {
        if (k.path("reset").asBoolean(false)) {
            faults.reset();
            startingPolls = 0;
            omitToolboxProxyUrl = false;
            startFailures.set(0);
        }
        if (k.has("failCreate")) {
            faults.failCreate(k.path("failCreate").path("status").asInt(503), k.path("failCreate").path("times").asInt(1));
        }
        if (k.has("rateLimitCreate")) {
            faults.rateLimitCreate(k.path("rateLimitCreate").path("times").asInt(1),
                    k.path("rateLimitCreate").path("retryAfterSeconds").asInt(1));
        }
        if (k.has("loseCreateResponse")) {
            faults.loseCreateResponse(k.get("loseCreateResponse").asInt());
        }
        if (k.has("dropStream")) {
            faults.dropStream(k.get("dropStream").asInt());
        }
        if (k.has("failTeardown")) {
            faults.failTeardown(k.path("failTeardown").path("status").asInt(409), k.path("failTeardown").path("times").asInt(1));
        }
        if (k.has("slowMs")) {
            faults.slow(Duration.ofMillis(k.get("slowMs").asLong()));
        }
        if (k.has("hostileFraming")) {
            faults.hostileFraming(k.get("hostileFraming").asBoolean());
        }
        if (k.has("startingPolls")) {
            startingPolls(k.get("startingPolls").asInt());
        }
        if (k.has("failStart")) {
            failStart(k.get("failStart").asInt());
        }
        if (k.has("omitToolboxProxyUrl")) {
            omitToolboxProxyUrl(k.get("omitToolboxProxyUrl").asBoolean());
        }
    }

    // ------------------------------------------------------------------ plumbing

    private boolean authorized(HttpExchange exchange) {
        String header = exchange.getRequestHeaders().getFirst("Authorization");
        return header != null && java.security.MessageDigest.isEqual(
                header.getBytes(StandardCharsets.UTF_8), ("Bearer " + apiKey).getBytes(StandardCharsets.UTF_8));
    }

    private Call record(HttpExchange exchange) {
        Call c = new Call();
        c.tMs = (System.nanoTime() - startNanos) / 1_000_000;
        c.method = exchange.getRequestMethod();
        c.path = exchange.getRequestURI().getRawPath();
        c.query = exchange.getRequestURI().getRawQuery();
        Headers h = exchange.getRequestHeaders();
        Map<String, String> headers = new TreeMap<>();
        for (Map.Entry<String, List<String>> e : h.entrySet()) {
            String name = e.getKey().toLowerCase(Locale.ROOT);
            String value = String.join(", ", e.getValue());
            if (name.equals("authorization")) {
                value = authorized(exchange) ? "Bearer ***" : "***not the emulator's key***";
            }
            headers.put(name, value);
        }
        c.headers = headers;
        synchronized (calls) {
            if (calls.size() >= MAX_CALLS) {
                calls.remove(0);
            }
            calls.add(c);
        }
        return c;
    }

    private JsonNode parseJson(byte[] raw, Call call) throws WireException {
        if (raw.length == 0) {
            call.body = object();
            return call.body;
        }
        try {
            call.body = JSON.readTree(raw);
        } catch (IOException e) {
            throw WireException.badRequest("Unexpected token in JSON body");
        }
        return call.body == null ? object() : call.body;
    }

    private static void requireObject(JsonNode body, String field) throws WireException {
        JsonNode n = body.path(field);
        if (!n.isMissingNode() && !n.isNull() && !n.isObject()) {
            throw WireException.badRequest(field + " must be an object");
        }
    }

    private static Map<String, String> stringMap(ObjectNode o) {
        Map<String, String> m = new TreeMap<>();
        o.properties().forEach(e -> m.put(e.getKey(), e.getValue().isTextual() ? e.getValue().asText() : e.getValue().toString()));
        return m;
    }

    /** Reads the request body, refusing one larger than {@code max} bytes with 413. */
    private static byte[] readBody(HttpExchange exchange, long max) throws IOException, WireException {
        try (InputStream in = exchange.getRequestBody()) {
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            byte[] buf = new byte[64 * 1024];
            long total = 0;
            int n;
            while ((n = in.read(buf)) > 0) {
                total += n;
                if (total > max) {
                    throw new WireException(413, "request body larger than " + max + " bytes");
                }
                out.write(buf, 0, n);
            }
            return out.toByteArray();
        }
    }

    private void sendJson(HttpExchange exchange, Call call, int status, JsonNode body) throws IOException {
        call.status = status;
        sendJson(exchange, status, body);
    }

    private static List<String> segments(String rest) {
        List<String> seg = new ArrayList<>();
        for (String s : rest.split("/")) {
            if (!s.isEmpty()) {
                seg.add(URLDecoder.decode(s.replace("+", "%2B"), StandardCharsets.UTF_8));
            }
        }
        return seg;
    }

    private static boolean takeOne(AtomicInteger counter) {
        return counter.getAndUpdate(n -> n > 0 ? n - 1 : 0) > 0;
    }

    /** One request as received: what the conformance run reports and the wire tests assert. */
    public static final class Call {
        private long tMs;
        private String method;
        private String path;
        private String query;
        private Map<String, String> headers;
        private volatile JsonNode body;
        private volatile String toolboxPath;
        /** The answer's status; -1 when the connection was dropped on purpose; 0 before an answer. */
        private volatile int status;

        public String method() {
            return method;
        }

        public String path() {
            return path;
        }

        /** The raw query string, or null. */
        public String query() {
            return query;
        }

        /** Header names in lower case; the key itself is never kept. */
        public Map<String, String> headers() {
            return headers;
        }

        /** The JSON body, a summary of multipart parts, or null. */
        public JsonNode body() {
            return body;
        }

        public int status() {
            return status;
        }

        ObjectNode toJson() {
            ObjectNode o = JSON.createObjectNode();
            o.put("t_ms", tMs);
            o.put("method", method);
            o.put("path", path);
            if (query != null) {
                o.put("query", query);
            }
            ObjectNode h = o.putObject("headers");
            headers.forEach(h::put);
            o.set("body", body);
            o.put("status", status);
            return o;
        }

        @Override
        public String toString() {
            return method + " " + path + (query == null ? "" : "?" + query) + " -> " + status;
        }
    }

    /** Settings fixed when the emulator starts. */
    public static final class Builder {
        private final MachineFactory machines;
        private int port;
        private String apiKey = DEFAULT_API_KEY;
        private List<String> canaryTargets = List.of("127.0.0.1");
        private long maxUploadBytes = 64L * 1024 * 1024;
        private long maxOutputBytes = 16L * 1024 * 1024;
        private Duration maxCommandTime = Duration.ofMinutes(30);
        private Duration minute = Duration.ofMinutes(1);
        private long hostileBytes = Long.MAX_VALUE;
        private int startingPolls;
        private boolean instant;

        private Builder(MachineFactory machines) {
            this.machines = Objects.requireNonNull(machines, "machines");
        }

        /** The loopback port; 0 (the default) picks a free one. */
        public Builder port(int port) {
            this.port = port;
            return this;
        }

        /** The API key clients must send as {@code Authorization: Bearer <key>}. */
        public Builder apiKey(String apiKey) {
            if (apiKey == null || apiKey.isEmpty()) {
                throw new IllegalArgumentException("apiKey must not be empty");
            }
            this.apiKey = apiKey;
            return this;
        }

        /**
         * The IPv4 addresses a test's canary listener is reached at. A {@code networkAllowList} whose
         * CIDR contains one of them gets the host network. Default {@code 127.0.0.1}.
         */
        public Builder canaryTargets(List<String> targets) {
            this.canaryTargets = List.copyOf(targets);
            return this;
        }

        /** Largest {@code files/bulk-upload} body. Default 64 MiB. */
        public Builder maxUploadBytes(long bytes) {
            this.maxUploadBytes = bytes;
            return this;
        }

        /**
         * Output kept per command before it is killed (the daemon itself buffers without a bound).
         * Default 16 MiB.
         */
        public Builder maxOutputBytes(long bytes) {
            this.maxOutputBytes = bytes;
            return this;
        }

        /** The budget of a command sent without a timeout (no limit on the v0.190 daemon). Default 30 min. */
        public Builder maxCommandTime(Duration d) {
            this.maxCommandTime = d;
            return this;
        }

        /** How long one of Daytona's minutes lasts here ({@code autoStopInterval} etc.), for tests. */
        public Builder minute(Duration d) {
            this.minute = d;
            return this;
        }

        /** How long a hostile {@code result} string is, in bytes, if the client never stops. Default unbounded. */
        public Builder hostileBytes(long bytes) {
            this.hostileBytes = bytes;
            return this;
        }

        /**
         * Instant mode ({@link HttpEmulator#instant()}): the machine factory is not used and no machine
         * opens; {@code process/execute} and {@code process/code-run} answer at once with
         * {@code {"exitCode":0,"result":""}}, uploads are accepted and dropped, downloads find nothing.
         * Default off.
         */
        public Builder instant(boolean on) {
            this.instant = on;
            return this;
        }

        /** The initial {@link DaytonaEmulator#startingPolls(int)}. */
        public Builder startingPolls(int n) {
            this.startingPolls = n;
            return this;
        }

        public DaytonaEmulator build() throws IOException {
            return new DaytonaEmulator(this);
        }
    }
}
