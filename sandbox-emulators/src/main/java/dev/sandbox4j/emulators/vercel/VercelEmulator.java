package dev.sandbox4j.emulators.vercel;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpExchange;
import dev.sandbox4j.emulators.HttpEmulator;
import dev.sandbox4j.emulators.vercel.Requests.BadRequest;
import dev.sandbox4j.emulators.vercel.Requests.CreateParams;
import dev.sandbox4j.emulators.vercel.State.SandboxRecord;
import dev.sandbox4j.emulators.vercel.State.Session;
import dev.sandbox4j.emulators.vercel.internal.CommandRun;
import dev.sandbox4j.emulators.InstantMachine;
import dev.sandbox4j.emulators.LocalMachines;
import dev.sandbox4j.emulators.Machine;
import dev.sandbox4j.emulators.vercel.internal.WirePolicy;
import java.io.IOException;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import static dev.sandbox4j.emulators.vercel.Requests.MAX_TIMEOUT_MS;
import static dev.sandbox4j.emulators.vercel.VercelWire.body;
import static dev.sandbox4j.emulators.vercel.VercelWire.codeFor;
import static dev.sandbox4j.emulators.vercel.VercelWire.expect;
import static dev.sandbox4j.emulators.vercel.VercelWire.sendError;

/**
 * Vercel Sandbox emulator: speaks the v2/v3 REST API in Vercel's own formats (vercel.md) and runs
 * every command for real in a local sandbox, with the egress it received applied: a domain list through
 * the local runner's egress proxy ({@link WirePolicy#localPolicy()}, which says what fails closed),
 * switched by a live policy update at once when no command runs, else before the next command (a
 * command already running keeps the egress it started with).
 *
 * <p>Served: create ({@code POST /v3/sandboxes}, {@code /v2/sandboxes}), list ({@code GET /v2/sandboxes}),
 * named sandboxes (GET with {@code resume}, PATCH, DELETE), sessions (GET, stop, extend-timeout,
 * network-policy), commands (run with or without {@code wait}/{@code logs} as NDJSON, get with {@code wait}, logs, kill) and files
 * (gzip-tar write, read, mkdir). An optional {@code /api} prefix is accepted, so both
 * {@code http://host:port} and {@code http://host:port/api} work as a base URL. Every request needs
 * {@code Authorization: Bearer <token>} and {@code ?teamId=}; errors are {@code {"error":{code,message}}}.
 *
 * <p>Credential-injecting transforms are applied by the local runner's egress proxy, with each rule's
 * {@code match} as Vercel applies it (a domain's rules in order, the first matching one only), when
 * the proxy can do exactly that: methods and a path {@code startsWith}, under default deny (see
 * {@code WirePolicy.localPolicy}); any other policy with transforms gets no network at all. Echoed by
 * header name, never by value. Unlike Vercel, the proxy also removes a brokered header the sandbox sent
 * itself outside the rule's scope.
 *
 * <p>For tests and local development only. Not served: git/tarball/snapshot sources, ports, snapshots,
 * forks, interactive shells, forwards and canned responses (accepted and echoed, not applied).
 *
 * @since 0.1.0
 */
public final class VercelEmulator extends HttpEmulator {
    private static final Logger log = LoggerFactory.getLogger(VercelEmulator.class);
    private static final SecureRandom RANDOM = new SecureRandom();

    private final byte[] expectedAuthorization;
    private final String teamId;
    private final String projectId;
    private final Machine.Factory machines;
    final long maxUploadBytes;
    final int maxLogChars;
    final Map<String, SandboxRecord> sandboxes = new ConcurrentHashMap<>();
    final Map<String, Session> sessions = new ConcurrentHashMap<>();
    final ExecutorService workers = Executors.newCachedThreadPool(r -> {
        Thread t = new Thread(r, "VercelEmulator-command");
        t.setDaemon(true);
        return t;
    });
    private final ScheduledExecutorService clock = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "VercelEmulator-clock");
        t.setDaemon(true);
        return t;
    });

    private final Commands commands = new Commands(this);
    private final SessionFiles files = new SessionFiles(this);

    private VercelEmulator(Builder b) throws IOException {
        super(b.port, b.instant);
        this.expectedAuthorization = ("Bearer " + b.token).getBytes(StandardCharsets.UTF_8);
        this.teamId = b.teamId;
        this.projectId = b.projectId;
        this.machines = b.machines;
        this.maxUploadBytes = b.maxUploadBytes;
        this.maxLogChars = b.maxLogChars;
    }

    /** {@return a new builder with the defaults: a free port and fixed local credentials} */
    public static Builder builder() {
        return new Builder();
    }

    /** {@return the team id every request must carry in its {@code teamId} query parameter} */
    public String teamId() {
        return teamId;
    }

    /** {@return the project id that creates and named-sandbox calls must name} */
    public String projectId() {
        return projectId;
    }

    // ---------------------------------------------------------------- routing

    @Override
    protected void handle(HttpExchange ex) throws Exception {
        String path = ex.getRequestURI().getRawPath();
        if (path.equals("/api") || path.startsWith("/api/")) {
            path = path.substring(4);
        }
        Map<String, String> query = queryFirst(ex.getRequestURI().getRawQuery());
        String auth = ex.getRequestHeaders().getFirst("Authorization");
        if (auth == null || !MessageDigest.isEqual(expectedAuthorization, auth.getBytes(StandardCharsets.UTF_8))) {
            // Vercel's documented answer for a missing or wrong token (docs: rest-api/errors).
            sendError(ex, 403, "forbidden", "Not authorized");
            return;
        }
        if (!teamId.equals(query.get("teamId"))) {
            sendError(ex, 403, "forbidden", query.containsKey("teamId")
                    ? "You don't have access to this team" : "The teamId query parameter is required");
            return;
        }
        String method = ex.getRequestMethod();
        List<String> seg = new ArrayList<>();
        for (String s : path.split("/")) {
            if (!s.isEmpty()) {
                seg.add(URLDecoder.decode(s, StandardCharsets.UTF_8));
            }
        }
        if (seg.size() < 2 || !seg.get(1).equals("sandboxes") || !(seg.get(0).equals("v2") || seg.get(0).equals("v3"))) {
            sendError(ex, 404, "not_found", "No route for " + method + " " + path);
            return;
        }
        boolean v3 = seg.get(0).equals("v3");
        List<String> rest = seg.subList(2, seg.size());
        if (rest.isEmpty()) {
            if (method.equals("POST")) {
                create(ex, v3);
            } else if (method.equals("GET") && !v3) {
                list(ex, query);
            } else {
                sendError(ex, 405, "method_unknown", "This endpoint only responds to " + (v3 ? "POST" : "GET, POST"));
            }
            return;
        }
        if (v3) {
            sendError(ex, 404, "not_found", "No route for " + method + " " + path);
            return;
        }
        if (rest.get(0).equals("sessions") && rest.size() >= 2) {
            sessionRoute(ex, method, rest.get(1), rest.subList(2, rest.size()), query);
            return;
        }
        if (rest.size() == 1 && !rest.get(0).equals("sessions") && !rest.get(0).equals("snapshots")) {
            namedRoute(ex, method, rest.get(0), query);
            return;
        }
        sendError(ex, 404, "not_found", "No route for " + method + " " + path);
    }

    @Override
    protected Kind kind(HttpExchange ex) {
        String method = ex.getRequestMethod();
        List<String> seg = new ArrayList<>();
        for (String s : ex.getRequestURI().getRawPath().split("/")) {
            if (!s.isEmpty()) {
                seg.add(s);
            }
        }
        if (!seg.isEmpty() && seg.get(0).equals("api")) {
            seg.remove(0);
        }
        if (seg.size() < 2 || !seg.get(1).equals("sandboxes")) {
            return Kind.OTHER;
        }
        if (seg.size() == 2) {
            return method.equals("POST") ? Kind.CREATE : Kind.OTHER;
        }
        if (seg.size() == 3 && method.equals("GET") && !seg.get(2).equals("sessions")) {
            return Kind.LOOKUP; // the adapter finds a sandbox by its name, which carries the run id
        }
        if (seg.size() == 5 && seg.get(2).equals("sessions") && method.equals("POST")) {
            return seg.get(4).equals("stop") ? Kind.TEARDOWN : seg.get(4).equals("cmd") ? Kind.EXEC : Kind.OTHER;
        }
        return Kind.OTHER;
    }

    private void sessionRoute(HttpExchange ex, String method, String sessionId, List<String> sub,
            Map<String, String> query) throws Exception {
        Session s = sessions.get(sessionId);
        if (s == null) {
            sendError(ex, 404, "not_found", "Session not found: " + sessionId);
            return;
        }
        String op = sub.isEmpty() ? "" : sub.get(0);
        if (op.equals("cmd")) {
            commands.route(ex, method, s, sub.subList(1, sub.size()), query);
            return;
        }
        if (op.isEmpty()) {
            if (expect(ex, method, "GET")) {
                ObjectNode out = object();
                out.set("session", s.json());
                out.putArray("routes");
                sendJson(ex, 200, out);
            }
            return;
        }
        if (sub.size() == 2 && op.equals("fs")) {
            if (expect(ex, method, "POST")) {
                files.handle(ex, s, sub.get(1));
            }
            return;
        }
        if (sub.size() == 1 && List.of("stop", "extend-timeout", "network-policy").contains(op)) {
            if (expect(ex, method, "POST")) {
                if (op.equals("stop")) {
                    stop(ex, s);
                } else if (op.equals("extend-timeout")) {
                    extend(ex, s);
                } else {
                    updateNetworkPolicy(ex, s);
                }
            }
            return;
        }
        sendError(ex, 404, "not_found", "No route for " + method + " " + ex.getRequestURI().getPath());
    }

    private void namedRoute(HttpExchange ex, String method, String name, Map<String, String> query) throws Exception {
        String project = query.get("projectId");
        if (project == null) {
            sendError(ex, 400, "bad_request", "The projectId query parameter is required");
            return;
        }
        if (!project.equals(projectId)) {
            sendError(ex, 404, "not_found", "Project not found: " + project);
            return;
        }
        SandboxRecord rec = sandboxes.get(name);
        if (rec == null || !hasSession(rec)) {
            // a record whose create is still opening its first session is not visible yet
            sendError(ex, 404, "not_found", "Sandbox not found: " + name);
            return;
        }
        switch (method) {
            case "GET":
                getNamed(ex, rec, "true".equals(query.get("resume")));
                return;
            case "PATCH":
                patch(ex, rec);
                return;
            case "DELETE":
                delete(ex, rec);
                return;
            default:
                sendError(ex, 405, "method_unknown", "This endpoint only responds to GET, PATCH, DELETE");
        }
    }

    // ---------------------------------------------------------------- sandboxes

    private void create(HttpExchange ex, boolean v3) throws Exception {
        JsonNode body = body(ex);
        if (body == null) {
            return;
        }
        int failure = faults.takeCreateFailure();
        if (failure != 0) {
            if (failure == 429 && faults.retryAfterSeconds() >= 0) {
                ex.getResponseHeaders().set("Retry-After", Integer.toString(faults.retryAfterSeconds()));
            }
            sendError(ex, failure, codeFor(failure), failure == 429
                    ? "Too many requests: rate limit exceeded" : "Injected failure: the sandbox was not created");
            return;
        }
        CreateParams p;
        try {
            p = CreateParams.parse(body, v3, projectId);
        } catch (BadRequest e) {
            sendError(ex, e.status, e.code, e.getMessage());
            return;
        }
        boolean late = createLate(ex); // the client is gone: create, answer nothing
        String name = p.name != null ? p.name : "sbx-" + random(12);
        SandboxRecord rec = new SandboxRecord(name, p);
        if (sandboxes.putIfAbsent(name, rec) != null) {
            sendError(ex, 409, "conflict", "A sandbox named " + name + " already exists in this project");
            return;
        }
        Session s;
        try {
            s = startSession(rec);
        } catch (Exception e) {
            sandboxes.remove(name);
            log.warn("VercelEmulator: could not open a local sandbox", e);
            sendError(ex, 500, "internal_server_error", "Could not start the sandbox: " + e.getMessage());
            return;
        }
        if (late || faults.takeLostCreate()) {
            // The sandbox exists and runs on its clock; the client never hears about it.
            drop(ex);
            return;
        }
        sendJson(ex, 200, sandboxAndSession(rec, s, null));
    }

    private Session startSession(SandboxRecord rec) throws Exception {
        long now = System.currentTimeMillis();
        WirePolicy policy = rec.policy;
        // the emulator stops the session at its timeout; the machine's own clock is the backstop after it
        Machine machine = machines.open(policy.localPolicy(), rec.env, Duration.ofMillis(rec.timeoutMs).plusSeconds(30));
        Session s = new Session("sbx_" + random(24), rec, machine, policy, now);
        sessions.put(s.id, s);
        synchronized (rec) {
            ledger.created(s.id, rec.tags);
        }
        synchronized (rec) {
            rec.currentSessionId = s.id;
            rec.updatedAt = now;
        }
        synchronized (s) {
            s.expiry = clock.schedule(() -> expire(s), rec.timeoutMs, TimeUnit.MILLISECONDS);
        }
        return s;
    }

    /**
     * Changes one label of a sandbox (by name, or by the id of one of its sessions), as anyone holding the account's key could through the
     * provider's console or API: for tests of what a client trusts in a label (attach compares the
     * policy label with the spec it expects). The sandbox itself (its network, its clock) is unchanged.
     *
     * @param sandboxId the sandbox's name, or the id of one of its sessions
     * @param key the tag to set
     * @param value its new value
     * @return false when there is no such live sandbox
     */
    public boolean alterLabel(String sandboxId, String key, String value) {
        SandboxRecord rec = sandboxes.get(sandboxId);
        if (rec == null) {
            Session s = sessions.get(sandboxId);
            rec = s == null ? null : sandboxes.get(s.sandboxName);
        }
        if (rec == null) {
            return false;
        }
        synchronized (rec) {
            Map<String, String> t = new java.util.LinkedHashMap<>(rec.tags);
            t.put(key, value);
            rec.tags = t;
        }
        return true;
    }

    private void expire(Session s) {
        if (stopSession(s)) {
            log.info("VercelEmulator: session {} reached its timeout and was stopped", s.id);
        }
    }

    /**
     * {@code GET /v2/sandboxes?project=} (the list's key is {@code project}, vercel.md section 1), newest
     * first, filtered by {@code namePrefix} and {@code tags=key:value}, cut at {@code limit}; one page.
     */
    private void list(HttpExchange ex, Map<String, String> query) throws IOException {
        String project = query.get("project");
        if (project == null) {
            sendError(ex, 400, "bad_request", "The project query parameter is required");
            return;
        }
        if (!project.equals(projectId)) {
            sendError(ex, 404, "not_found", "Project not found: " + project);
            return;
        }
        String prefix = query.getOrDefault("namePrefix", "");
        String tag = query.get("tags");
        int limit;
        try {
            limit = Integer.parseInt(query.getOrDefault("limit", "50"));
        } catch (NumberFormatException e) {
            sendError(ex, 400, "bad_request", "limit must be a number");
            return;
        }
        List<SandboxRecord> matching = new ArrayList<>();
        for (SandboxRecord rec : sandboxes.values()) {
            if (rec.name.startsWith(prefix) && (tag == null || rec.hasTag(tag)) && hasSession(rec)) {
                matching.add(rec);
            }
        }
        matching.sort((a, b) -> Long.compare(b.createdAt, a.createdAt));
        ObjectNode out = object();
        ArrayNode list = out.putArray("sandboxes");
        int count = 0;
        for (SandboxRecord rec : matching) {
            if (count++ >= Math.max(1, limit)) {
                break;
            }
            list.add(rec.json(sessions.get(rec.currentSessionId)));
        }
        out.putObject("pagination").put("count", list.size()).putNull("next");
        sendJson(ex, 200, out);
    }

    private static boolean hasSession(SandboxRecord rec) {
        synchronized (rec) {
            return rec.currentSessionId != null;
        }
    }

    private void getNamed(HttpExchange ex, SandboxRecord rec, boolean resume) throws Exception {
        Session s = sessions.get(rec.currentSessionId);
        Boolean resumed = null;
        if (resume) {
            resumed = false;
            if (s == null || s.stopped()) {
                try {
                    s = startSession(rec);
                } catch (Exception e) {
                    log.warn("VercelEmulator: could not resume {}", rec.name, e);
                    sendError(ex, 500, "internal_server_error", "Could not resume the sandbox: " + e.getMessage());
                    return;
                }
                resumed = true;
            }
        }
        sendJson(ex, 200, sandboxAndSession(rec, s, resumed));
    }

    private void patch(HttpExchange ex, SandboxRecord rec) throws Exception {
        JsonNode body = body(ex);
        if (body == null) {
            return;
        }
        try {
            rec.patch(body);
        } catch (BadRequest e) {
            sendError(ex, e.status, e.code, e.getMessage());
            return;
        }
        ObjectNode out = object();
        out.set("sandbox", rec.json(sessions.get(rec.currentSessionId)));
        sendJson(ex, 200, out);
    }

    private void delete(HttpExchange ex, SandboxRecord rec) throws Exception {
        int failure = faults.takeTeardownFailure();
        if (failure != 0) {
            sendError(ex, failure, codeFor(failure), "Injected failure: the sandbox was not deleted");
            return;
        }
        Session s = sessions.get(rec.currentSessionId);
        if (s != null) {
            ledger.killedByClient(s.id);
            stopSession(s);
        }
        sandboxes.remove(rec.name, rec);
        ObjectNode out = object();
        out.set("sandbox", rec.json(s));
        sendJson(ex, 200, out);
    }

    private ObjectNode sandboxAndSession(SandboxRecord rec, Session s, Boolean resumed) {
        ObjectNode out = object();
        out.set("sandbox", rec.json(s));
        out.set("session", s.json());
        out.putArray("routes");
        if (resumed != null) {
            out.put("resumed", resumed);
        }
        return out;
    }

    // ---------------------------------------------------------------- sessions

    private void stop(HttpExchange ex, Session s) throws Exception {
        int failure = faults.takeTeardownFailure();
        if (failure != 0) {
            sendError(ex, failure, codeFor(failure), "Injected failure: the session was not stopped");
            return;
        }
        ledger.killedByClient(s.id);
        stopSession(s);
        ObjectNode out = object();
        out.set("session", s.json());
        SandboxRecord rec = sandboxes.get(s.sandboxName);
        if (rec != null) {
            out.set("sandbox", rec.json(s));
        }
        sendJson(ex, 200, out);
    }

    /** Stops a running session: kills its commands, destroys its machine. False if it was already stopped. */
    boolean stopSession(Session s) {
        List<CommandRun> running;
        synchronized (s) {
            if (s.status.equals("stopped")) {
                return false;
            }
            long now = System.currentTimeMillis();
            s.status = "stopped";
            s.requestedStopAt = now;
            s.stoppedAt = now;
            s.updatedAt = now;
            if (s.expiry != null) {
                s.expiry.cancel(false);
            }
            running = new ArrayList<>(s.commands.values());
        }
        // recorded before the kills: a client woken by its command's death must find the session gone
        ledger.destroyed(s.id);
        for (CommandRun run : running) {
            run.sessionGone();
            run.kill(9, s.machine::killRunning);
        }
        s.machine.close();
        SandboxRecord rec = sandboxes.get(s.sandboxName);
        if (rec != null) {
            synchronized (rec) {
                rec.updatedAt = System.currentTimeMillis();
            }
        }
        return true;
    }

    private void extend(HttpExchange ex, Session s) throws Exception {
        JsonNode body = body(ex);
        if (body == null || !running(ex, s)) {
            return;
        }
        JsonNode d = body.get("duration");
        if (d == null || !d.canConvertToLong() || d.asLong() < 1000) {
            sendError(ex, 400, "bad_request", "duration must be a number of milliseconds, at least 1000");
            return;
        }
        synchronized (s) {
            long total = s.timeoutMs + d.asLong();
            if (total > MAX_TIMEOUT_MS) {
                sendError(ex, 400, "bad_request", "The total timeout would exceed the maximum of " + MAX_TIMEOUT_MS + " ms");
                return;
            }
            s.timeoutMs = total;
            s.updatedAt = System.currentTimeMillis();
            if (s.expiry != null) {
                s.expiry.cancel(false);
            }
            long left = Math.max(0, s.createdAt + total - System.currentTimeMillis());
            s.expiry = clock.schedule(() -> expire(s), left, TimeUnit.MILLISECONDS);
        }
        ObjectNode out = object();
        out.set("session", s.json());
        sendJson(ex, 200, out);
    }

    private void updateNetworkPolicy(HttpExchange ex, Session s) throws Exception {
        JsonNode body = body(ex);
        if (body == null || !running(ex, s)) {
            return;
        }
        WirePolicy p;
        try {
            p = WirePolicy.parse(body);
        } catch (WirePolicy.BadPolicyException e) {
            sendError(ex, 400, "bad_request", e.getMessage());
            return;
        }
        synchronized (s) {
            // A full replacement; commands started from now on run under it.
            s.policy = p;
            s.updatedAt = System.currentTimeMillis();
        }
        // switched now when no command runs (else the next command switches it: a running one keeps its egress)
        if (s.execLock.tryLock()) {
            try {
                if (!s.stopped()) {
                    s.applyEgress();
                }
            } catch (RuntimeException e) {
                log.warn("VercelEmulator: the egress of session {} did not switch yet (the next command retries): {}",
                        s.id, e.toString());
            } finally {
                s.execLock.unlock();
            }
        }
        ObjectNode out = object();
        out.set("session", s.json());
        sendJson(ex, 200, out);
    }

    // ---------------------------------------------------------------- commands

    // ---------------------------------------------------------------- files

    // ---------------------------------------------------------------- helpers

    boolean running(HttpExchange ex, Session s) throws IOException {
        if (s.stopped()) {
            sendError(ex, 410, "sandbox_stopped", "Sandbox is stopped");
            return false;
        }
        return true;
    }

    @Override
    protected JsonNode error(int status, String message) {
        ObjectNode body = object();
        body.putObject("error").put("code", codeFor(status)).put("message", message);
        return body;
    }

    @Override
    protected void destroyAll() {
        for (Session s : sessions.values()) {
            try {
                stopSession(s);
            } catch (RuntimeException e) {
                log.warn("VercelEmulator: could not stop session {}", s.id, e);
            }
        }
        clock.shutdownNow();
        workers.shutdownNow();
        machines.close();
    }

    static String random(int n) {
        String alphabet = "abcdefghijklmnopqrstuvwxyz0123456789";
        char[] c = new char[n];
        for (int i = 0; i < n; i++) {
            c[i] = alphabet.charAt(RANDOM.nextInt(alphabet.length()));
        }
        return new String(c);
    }

    // ---------------------------------------------------------------- builder

    /**
     * Settings for {@link VercelEmulator}: its port, the token, team and project it accepts, the machines it runs sessions on, and its upload and log caps.
     *
     * @since 0.1.0
     */
    public static final class Builder {
        private int port;
        private String token = "emulator-token";
        private String teamId = "team_emulator";
        private String projectId = "prj_emulator";
        private Machine.Factory machines;
        private long maxUploadBytes = 64L * 1024 * 1024;
        private int maxLogChars = 16 * 1024 * 1024;
        private boolean instant;

        private Builder() {
        }

        /**
         * Instant mode ({@link HttpEmulator#instant()}): no machine opens (the factory is not used);
         * every command is finished with exit 0 and no output as it is created, file writes and mkdir
         * are accepted and dropped, reads find nothing. Default off.
         *
         * @param on whether to run in instant mode
         * @return this builder
         */
        public Builder instant(boolean on) {
            this.instant = on;
            return this;
        }

        /**
         * The loopback port to listen on; 0 (the default) picks a free port.
         *
         * @param port the port number, or 0
         * @return this builder
         */
        public Builder port(int port) {
            this.port = port;
            return this;
        }

        /**
         * The bearer token every request must carry. Default {@code emulator-token}.
         *
         * @param token the token; not null
         * @return this builder
         */
        public Builder token(String token) {
            this.token = Objects.requireNonNull(token, "token");
            return this;
        }

        /**
         * The {@code teamId} every request must carry in its query. Default {@code team_emulator}.
         *
         * @param teamId the team id; not null
         * @return this builder
         */
        public Builder teamId(String teamId) {
            this.teamId = Objects.requireNonNull(teamId, "teamId");
            return this;
        }

        /**
         * The project create and named-sandbox calls must name. Default {@code prj_emulator}.
         *
         * @param projectId the project id; not null
         * @return this builder
         */
        public Builder projectId(String projectId) {
            this.projectId = Objects.requireNonNull(projectId, "projectId");
            return this;
        }

        /**
         * Where sessions run (internal; tests may wrap the default). Defaults to local sandboxes.
         * Ignored in instant mode. The emulator closes the factory when it closes.
         *
         * @param machines the factory to open machines from; not null
         * @return this builder
         */
        public Builder machines(Machine.Factory machines) {
            this.machines = Objects.requireNonNull(machines, "machines");
            return this;
        }

        /**
         * Bound on an uploaded archive, uncompressed, and on a file read back. Default 64 MiB.
         *
         * @param bytes the limit in bytes
         * @return this builder
         */
        public Builder maxUploadBytes(long bytes) {
            this.maxUploadBytes = bytes;
            return this;
        }

        /**
         * Characters of output a command keeps for its stream and logs; the rest is dropped.
         * Default {@code 16 * 1024 * 1024}.
         *
         * @param chars the limit in characters
         * @return this builder
         */
        public Builder maxLogChars(int chars) {
            this.maxLogChars = chars;
            return this;
        }

        /**
         * Starts the server.
         *
         * @return the running emulator; close it to stop its sessions and the server
         * @throws IOException if the server cannot bind the port
         */
        public VercelEmulator build() throws IOException {
            if (instant) {
                machines = InstantMachine.FACTORY;
            } else if (machines == null) {
                machines = LocalMachines.create();
            }
            return new VercelEmulator(this);
        }
    }
}
