package dev.sandbox4j.emulators.daytona;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpExchange;
import dev.sandbox4j.emulators.HttpEmulator;
import dev.sandbox4j.emulators.InstantMachine;
import dev.sandbox4j.emulators.Machine;
import dev.sandbox4j.emulators.RecordedCall;
import dev.sandbox4j.emulators.daytona.internal.WireException;
import java.io.IOException;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
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
 * ({@code /work/shared/providers/daytona.md}), with each sandbox a real local machine whose egress
 * follows the egress fields it was created with (a domain or CIDR list through the local runner's egress
 * proxy, see {@code WireEgress.localPolicy}).
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
 *       multipart answer), both read through the local runner, which follows no link; the daemon's
 *       sessions ({@link ToolboxSessions}: create, exec with {@code runAsync}, command, logs, delete),
 *       each command's log labelled line by line with the daemon's stream markers, and followed over
 *       the WebSocket {@code process/session/{s}/command/{c}/logs?follow=true} as it is written (on the
 *       toolbox proxy's own port, {@link ToolboxProxy}).</li>
 *   <li>{@code POST /api/sandbox/{id}/network-settings}: merged as the v0.190 service does, the machine's
 *       egress switched before the answer (after a running command ends).</li>
 *   <li>{@code Authorization: Bearer <key>} on both; errors in Daytona's shapes (API
 *       {@code {statusCode,error,message,path,timestamp}}, toolbox
 *       {@code {statusCode,message,code,timestamp,path,method}}, upload {@code {errors,files}}).</li>
 *   <li>Test controls (no auth): {@code GET /_emulator/calls}, {@code GET /_emulator/ledger},
 *       {@code POST /_emulator/faults}.</li>
 * </ul>
 *
 * <p>Faults (the shared {@link #faults()} knobs): failed and rate-limited creates answer before
 * anything is created; a lost create creates the sandbox and drops the connection; a lost exec answer
 * (execute, code-run or a session exec) starts the command and drops the connection; a dropped stream
 * starts the command, sends the 200 headers and the first bytes of the body, then cuts the connection
 * (the command runs on, as on Daytona, whose daemon does not tie it to the request), and cuts a
 * followed session log after its first bytes, without a close frame; a failing teardown answers its
 * status and leaves the sandbox; slow delays every answer (not the log WebSocket); hostile framing
 * answers an exec with a {@code result} string that never ends, streamed without being allocated,
 * and a followed session log with an endless stdout line. A session exec counts as an exec
 * ({@link Kind#EXEC}); the log WebSocket's upgrade is in {@link #calls()}.
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
    static final Logger log = LoggerFactory.getLogger(DaytonaEmulator.class);
    /** The key the emulator accepts unless told otherwise. */
    public static final String DEFAULT_API_KEY = "daytona-emulator-key";
    static final String DEFAULT_SNAPSHOT = "daytonaio/sandbox:emulated";
    static final String DAEMON_VERSION = "v0.190.0-emulated";
    static final String ORGANIZATION_ID = "org-emulated-0000";
    static final int MAX_JSON_BYTES = 32 * 1024 * 1024;

    private final String apiKey;
    final Machine.Factory machines;
    final List<String> canaryTargets;
    final long maxUploadBytes;
    final long maxOutputBytes;
    final Duration maxCommandTime;
    private final Duration minute;
    final long hostileBytes;
    final Map<String, EmulatedSandbox> sandboxes = new ConcurrentHashMap<>();
    private final ScheduledExecutorService reaper;
    final String cwdFailureMarker = "\u0001dtn-emulator-cwd-failed-" + UUID.randomUUID();

    volatile int startingPolls;
    volatile boolean omitToolboxProxyUrl;
    final AtomicInteger startFailures = new AtomicInteger();
    private final Toolbox toolbox = new Toolbox(this);
    private final SandboxApi api = new SandboxApi(this);
    private final ToolboxProxy toolboxProxy;

    private DaytonaEmulator(Builder b) throws IOException {
        super(b.port, b.instant);
        this.apiKey = b.apiKey;
        this.machines = b.instant ? InstantMachine.FACTORY : b.machines;
        this.canaryTargets = List.copyOf(b.canaryTargets);
        this.maxUploadBytes = b.maxUploadBytes;
        this.maxOutputBytes = b.maxOutputBytes;
        this.maxCommandTime = b.maxCommandTime;
        this.minute = b.minute;
        this.hostileBytes = b.hostileBytes;
        this.startingPolls = b.startingPolls;
        this.toolboxProxy = new ToolboxProxy(this);
        this.reaper = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "DaytonaEmulator-autostop");
            t.setDaemon(true);
            return t;
        });
        long period = Math.max(10, minute.toMillis() / 4);
        reaper.scheduleAtFixedRate(this::autoStop, period, period, TimeUnit.MILLISECONDS);
    }

    /**
     * Starts the settings of a new emulator.
     *
     * @param machines opens the local machine behind each sandbox (unused in {@link Builder#instant(boolean)
     *     instant} mode, but still required)
     * @return a builder with the defaults, for {@link Builder#build()}
     * @throws NullPointerException if {@code machines} is null
     */
    public static Builder builder(Machine.Factory machines) {
        return new Builder(machines);
    }

    /**
     * The API base URL, for {@code DAYTONA_API_URL}: {@code http://127.0.0.1:<port>/api}.
     *
     * @return the base URL of the API, without a trailing slash
     */
    public String apiUrl() {
        return baseUrl() + "/api";
    }

    /**
     * What sandboxes carry as {@code toolboxProxyUrl}: {@code http://127.0.0.1:<proxy port>/toolbox}, a
     * port of its own that also serves the session log WebSocket (the same toolbox answers under
     * {@code /toolbox} on the API's port, without the WebSocket).
     *
     * @return the toolbox proxy's base URL, without a trailing slash
     */
    public String toolboxProxyUrl() {
        return toolboxProxy.baseUrl() + "/toolbox";
    }

    /** {@return the API key clients must send as {@code Authorization: Bearer <key>}} */
    public String apiKey() {
        return apiKey;
    }

    /**
     * How many status reads see a new sandbox in its transitional state ({@code starting}, or
     * {@code pending_build} for an image create) before {@code started}. With {@code n > 0} the create
     * answer is transitional too. A DELETE refused with 409 for the pending change counts as a read.
     *
     * @param n how many status reads stay transitional; not negative
     * @return this emulator
     * @throws IllegalArgumentException if {@code n} is negative
     */
    public DaytonaEmulator startingPolls(int n) {
        if (n < 0) {
            throw new IllegalArgumentException("startingPolls must not be negative");
        }
        this.startingPolls = n;
        return this;
    }

    /**
     * Sandbox records leave out {@code toolboxProxyUrl}, so clients must look it up.
     *
     * @param omit true to leave the field out of sandbox records, false to include it again
     * @return this emulator
     */
    public DaytonaEmulator omitToolboxProxyUrl(boolean omit) {
        this.omitToolboxProxyUrl = omit;
        return this;
    }

    /**
     * The next {@code times} creates insert the sandbox in state {@code error} and answer 400
     * {@code Sandbox failed to start: ...}, as Daytona does when a start fails within its wait.
     *
     * @param times how many of the next creates fail; replaces any count still pending
     * @return this emulator
     */
    public DaytonaEmulator failStart(int times) {
        startFailures.set(times);
        return this;
    }

    /**
     * Ids of sandboxes not deleted (stopped ones included).
     *
     * @return a snapshot of the ids, unmodifiable
     */
    public Set<String> sandboxIds() {
        return Set.copyOf(sandboxes.keySet());
    }

    /**
     * Whether the sandbox's machine got the host network; null when there is no such sandbox.
     *
     * @param id the sandbox's id
     * @return true if it got the host network, false if not, null for an unknown id
     */
    public Boolean hostNetwork(String id) {
        EmulatedSandbox s = sandboxes.get(id);
        return s == null ? null : s.hostNetwork;
    }

    /**
     * Changes one label of a live sandbox, as anyone holding the account's key could through the
     * provider's console or API: for tests of what a client trusts in a label (attach compares the
     * policy label with the spec it expects). The sandbox itself (its network, its clock) is unchanged.
     *
     * @param sandboxId the live sandbox's id
     * @param key the label's key
     * @param value the label's new value
     * @return false when there is no such live sandbox
     */
    public boolean alterLabel(String sandboxId, String key, String value) {
        EmulatedSandbox s = sandboxes.get(sandboxId);
        if (s == null) {
            return false;
        }
        s.label(key, value);
        return true;
    }

    @Override
    public void close() {
        reaper.shutdownNow();
        toolboxProxy.close();
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
        RecordedCall call = call(exchange);
        try {
            if (path.equals("/api") || path.startsWith("/api/")) {
                api.api(exchange, call, method, path.substring(4));
            } else if (path.startsWith("/toolbox/")) {
                toolbox.handle(exchange, call, method, path.substring("/toolbox/".length()));
            } else {
                api.apiError(exchange, call, 404, "Cannot " + method + " " + path);
            }
        } catch (WireException e) {
            // a toolbox handler's refusal in the daemon's shape
            toolbox.error(exchange, call, e.status(), e.getMessage(), e.code() != null ? e.code() : Toolbox.codeFor(e.status()));
        }
    }

    @Override
    protected Kind kind(HttpExchange exchange) {
        String method = exchange.getRequestMethod();
        String path = exchange.getRequestURI().getRawPath();
        if (path.startsWith("/toolbox/")) {
            List<String> t = segments(path.substring("/toolbox/".length()));
            boolean sessionExec = t.size() == 5 && t.get(1).equals("process") && t.get(2).equals("session")
                    && t.get(4).equals("exec");
            return method.equals("POST") && (path.endsWith("/process/execute") || path.endsWith("/process/code-run") || sessionExec)
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

    // ------------------------------------------------------------------ API

    void destroy(EmulatedSandbox s) {
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

    // ------------------------------------------------------------------ toolbox

    // ------------------------------------------------------------------ toolbox request parsing (gin's binding)

    // ------------------------------------------------------------------ error bodies

    /** The API's shape (NestJS all-exceptions filter). */
    /** The create-late knob, for the control plane's create. */
    boolean late(HttpExchange exchange) throws InterruptedException {
        return createLate(exchange);
    }

    @Override
    protected JsonNode error(int status, String message) {
        ObjectNode o = object();
        o.put("path", "");
        o.put("timestamp", Instant.now().toString());
        o.put("statusCode", status);
        o.put("error", SandboxApi.reason(status));
        o.put("message", message);
        return o;
    }

    // ------------------------------------------------------------------ test controls

    private void control(HttpExchange exchange, String method, String what) throws IOException {
        if (method.equals("GET") && what.equals("ledger")) {
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

    boolean authorized(HttpExchange exchange) {
        String header = exchange.getRequestHeaders().getFirst("Authorization");
        return header != null && java.security.MessageDigest.isEqual(
                header.getBytes(StandardCharsets.UTF_8), ("Bearer " + apiKey).getBytes(StandardCharsets.UTF_8));
    }

    /** The authorization header shows whether it carried the emulator's key, never the key. */
    @Override
    protected String maskSecret(HttpExchange exchange, String lowerCaseName, String value) {
        if (lowerCaseName.equals("authorization")) {
            return authorized(exchange) ? "Bearer ***" : "***not the emulator's key***";
        }
        return super.maskSecret(exchange, lowerCaseName, value);
    }

    /** A WebSocket upgrade the toolbox proxy read itself, into the record of calls. */
    RecordedCall recordUpgrade(String method, String rawTarget, Map<String, String> headers) {
        return recordRaw(method, rawTarget, headers);
    }

    static Map<String, String> stringMap(ObjectNode o) {
        Map<String, String> m = new TreeMap<>();
        o.properties().forEach(e -> m.put(e.getKey(), e.getValue().isTextual() ? e.getValue().asText() : e.getValue().toString()));
        return m;
    }

    /** Reads the request body, refusing one larger than {@code max} bytes with 413. */
    static byte[] readWireBody(HttpExchange exchange, long max) throws IOException, WireException {
        try {
            return HttpEmulator.readBody(exchange, max);
        } catch (BodyTooLargeException e) {
            throw new WireException(413, e.getMessage());
        }
    }

    void sendJson(HttpExchange exchange, RecordedCall call, int status, JsonNode body) throws IOException {
        call.status(status);
        sendJson(exchange, status, body);
    }

    static List<String> segments(String rest) {
        List<String> seg = new ArrayList<>();
        for (String s : rest.split("/")) {
            if (!s.isEmpty()) {
                seg.add(URLDecoder.decode(s.replace("+", "%2B"), StandardCharsets.UTF_8));
            }
        }
        return seg;
    }

    static boolean takeOne(AtomicInteger counter) {
        return counter.getAndUpdate(n -> n > 0 ? n - 1 : 0) > 0;
    }

    /**
     * Settings fixed when the emulator starts.
     *
     * @since 0.1.0
     */
    public static final class Builder {
        final Machine.Factory machines;
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

        private Builder(Machine.Factory machines) {
            this.machines = Objects.requireNonNull(machines, "machines");
        }

        /**
         * The loopback port; 0 (the default) picks a free one.
         *
         * @param port the API's port, or 0 for any free one
         * @return this builder
         */
        public Builder port(int port) {
            this.port = port;
            return this;
        }

        /**
         * The API key clients must send as {@code Authorization: Bearer <key>}.
         *
         * @param apiKey the key; default {@link DaytonaEmulator#DEFAULT_API_KEY}
         * @return this builder
         * @throws IllegalArgumentException if {@code apiKey} is null or empty
         */
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
         *
         * @param targets the addresses, copied
         * @return this builder
         */
        public Builder canaryTargets(List<String> targets) {
            this.canaryTargets = List.copyOf(targets);
            return this;
        }

        /**
         * Largest {@code files/bulk-upload} body. Default 64 MiB.
         *
         * @param bytes the limit in bytes; a larger upload body is answered with 413
         * @return this builder
         */
        public Builder maxUploadBytes(long bytes) {
            this.maxUploadBytes = bytes;
            return this;
        }

        /**
         * Output kept per command before it is killed (the daemon itself buffers without a bound).
         * Default 16 MiB.
         *
         * @param bytes the limit in bytes
         * @return this builder
         */
        public Builder maxOutputBytes(long bytes) {
            this.maxOutputBytes = bytes;
            return this;
        }

        /**
         * The budget of a command sent without a timeout (no limit on the v0.190 daemon). Default 30 min.
         *
         * @param d the time a command may run
         * @return this builder
         */
        public Builder maxCommandTime(Duration d) {
            this.maxCommandTime = d;
            return this;
        }

        /**
         * How long one of Daytona's minutes lasts here ({@code autoStopInterval} etc.), for tests.
         *
         * @param d the length of one emulated minute; default one minute
         * @return this builder
         */
        public Builder minute(Duration d) {
            this.minute = d;
            return this;
        }

        /**
         * How long a hostile {@code result} string is, in bytes, if the client never stops. Default unbounded.
         *
         * @param bytes the most bytes of the string streamed
         * @return this builder
         */
        public Builder hostileBytes(long bytes) {
            this.hostileBytes = bytes;
            return this;
        }

        /**
         * Instant mode ({@link HttpEmulator#instant()}): the machine factory is not used and no machine
         * opens; {@code process/execute} and {@code process/code-run} answer at once with
         * {@code {"exitCode":0,"result":""}}, uploads are accepted and dropped, downloads find nothing.
         * Default off.
         *
         * @param on true for instant mode
         * @return this builder
         */
        public Builder instant(boolean on) {
            this.instant = on;
            return this;
        }

        /**
         * The initial {@link DaytonaEmulator#startingPolls(int)}.
         *
         * @param n how many status reads stay transitional
         * @return this builder
         */
        public Builder startingPolls(int n) {
            this.startingPolls = n;
            return this;
        }

        /**
         * Starts the emulator: the API on its port and the toolbox proxy on a free one, both on loopback.
         *
         * @return the running emulator; close it to stop both servers and delete its sandboxes
         * @throws IOException if a server cannot bind its port
         */
        public DaytonaEmulator build() throws IOException {
            return new DaytonaEmulator(this);
        }
    }
}
