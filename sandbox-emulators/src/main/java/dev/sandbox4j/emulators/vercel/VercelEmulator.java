package dev.sandbox4j.emulators.vercel;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpExchange;
import dev.sandbox4j.api.Execution;
import dev.sandbox4j.emulators.HttpEmulator;
import dev.sandbox4j.emulators.vercel.Requests.BadRequest;
import dev.sandbox4j.emulators.vercel.Requests.CommandParams;
import dev.sandbox4j.emulators.vercel.Requests.CreateParams;
import dev.sandbox4j.emulators.vercel.State.SandboxRecord;
import dev.sandbox4j.emulators.vercel.State.Session;
import dev.sandbox4j.emulators.vercel.internal.CommandLine;
import dev.sandbox4j.emulators.vercel.internal.CommandRun;
import dev.sandbox4j.emulators.vercel.internal.InstantMachines;
import dev.sandbox4j.emulators.vercel.internal.LocalMachines;
import dev.sandbox4j.emulators.vercel.internal.Machine;
import dev.sandbox4j.emulators.vercel.internal.MachineFactory;
import dev.sandbox4j.emulators.vercel.internal.TarGz;
import dev.sandbox4j.emulators.vercel.internal.WirePolicy;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
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
import static dev.sandbox4j.emulators.vercel.VercelPaths.SESSION_CWD;
import static dev.sandbox4j.emulators.vercel.VercelPaths.resolve;
import static dev.sandbox4j.emulators.vercel.VercelPaths.storagePath;

/**
 * Vercel Sandbox emulator: speaks the v2/v3 REST API in Vercel's own formats (vercel.md) and runs
 * every command for real in a local sandbox, with the egress it received applied.
 *
 * <p>Served: create ({@code POST /v3/sandboxes}, {@code /v2/sandboxes}), list ({@code GET /v2/sandboxes}),
 * named sandboxes (GET with {@code resume}, PATCH, DELETE), sessions (GET, stop, extend-timeout,
 * network-policy), commands (run with or without {@code wait}/{@code logs} as NDJSON, get with {@code wait}, logs, kill) and files
 * (gzip-tar write, read, mkdir). An optional {@code /api} prefix is accepted, so both
 * {@code http://host:port} and {@code http://host:port/api} work as a base URL. Every request needs
 * {@code Authorization: Bearer <token>} and {@code ?teamId=}; errors are {@code {"error":{code,message}}}.
 *
 * <p>For tests and local development only. Not served: git/tarball/snapshot sources, ports, snapshots,
 * forks, interactive shells, credential-injecting transforms (accepted and echoed by header name, not
 * applied).
 *
 * @since 0.1.0
 */
public final class VercelEmulator extends HttpEmulator {
    private static final Logger log = LoggerFactory.getLogger(VercelEmulator.class);
    private static final SecureRandom RANDOM = new SecureRandom();
    private static final byte[] NEWLINE = {'\n'};

    private final byte[] expectedAuthorization;
    private final String teamId;
    private final String projectId;
    private final MachineFactory machines;
    private final long maxUploadBytes;
    private final int maxLogChars;
    private final Map<String, SandboxRecord> sandboxes = new ConcurrentHashMap<>();
    private final Map<String, Session> sessions = new ConcurrentHashMap<>();
    private final ExecutorService workers = Executors.newCachedThreadPool(r -> {
        Thread t = new Thread(r, "VercelEmulator-command");
        t.setDaemon(true);
        return t;
    });
    private final ScheduledExecutorService clock = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "VercelEmulator-clock");
        t.setDaemon(true);
        return t;
    });

    private VercelEmulator(Builder b) throws IOException {
        super(b.port, b.instant);
        this.expectedAuthorization = ("Bearer " + b.token).getBytes(StandardCharsets.UTF_8);
        this.teamId = b.teamId;
        this.projectId = b.projectId;
        this.machines = b.machines;
        this.maxUploadBytes = b.maxUploadBytes;
        this.maxLogChars = b.maxLogChars;
    }

    public static Builder builder() {
        return new Builder();
    }

    public String teamId() {
        return teamId;
    }

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
            commandRoute(ex, method, s, sub.subList(1, sub.size()), query);
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
                fs(ex, s, sub.get(1));
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

    private void commandRoute(HttpExchange ex, String method, Session s, List<String> sub, Map<String, String> query)
            throws Exception {
        if (sub.isEmpty()) {
            if (expect(ex, method, "POST")) {
                runCommand(ex, s);
            }
            return;
        }
        CommandRun run = s.command(sub.get(0));
        if (run == null) {
            sendError(ex, 404, "not_found", "Command not found: " + sub.get(0));
            return;
        }
        if (sub.size() == 1) {
            if (expect(ex, method, "GET")) {
                if ("true".equals(query.get("wait"))) {
                    // Blocks until the exit; a stopped session kills its commands, so this ends too.
                    while (!run.awaitFinished(1000)) {
                        if (s.stopped() && !run.awaitFinished(30_000)) {
                            break;
                        }
                    }
                }
                ObjectNode out = object();
                out.set("command", run.json());
                sendJson(ex, 200, out);
            }
        } else if (sub.size() == 2 && sub.get(1).equals("logs")) {
            if (expect(ex, method, "GET")) {
                streamLogs(ex, run);
            }
        } else if (sub.size() == 2 && sub.get(1).equals("kill")) {
            if (expect(ex, method, "POST")) {
                kill(ex, s, run);
            }
        } else {
            sendError(ex, 404, "not_found", "No route for " + method + " " + ex.getRequestURI().getPath());
        }
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
        Machine machine = machines.open(policy.grantsHostNetwork(), rec.env, Duration.ofMillis(rec.timeoutMs));
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
    private boolean stopSession(Session s) {
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
            run.kill(9, s.machine::kill);
        }
        s.machine.destroy();
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
        ObjectNode out = object();
        out.set("session", s.json());
        sendJson(ex, 200, out);
    }

    // ---------------------------------------------------------------- commands

    private void runCommand(HttpExchange ex, Session s) throws Exception {
        JsonNode body = body(ex);
        if (body == null || !running(ex, s)) {
            return;
        }
        CommandParams p;
        try {
            p = CommandParams.parse(body);
        } catch (BadRequest e) {
            sendError(ex, e.status, e.code, e.getMessage());
            return;
        }
        long now = System.currentTimeMillis();
        String cwd = p.cwd == null ? SESSION_CWD : p.cwd;
        CommandRun run = new CommandRun("cmd_" + random(24), p.command, p.args, cwd, s.id, now, maxLogChars);
        Map<String, String> env = new LinkedHashMap<>(p.env);
        long budgetMs;
        synchronized (s) {
            if (s.status.equals("stopped")) {
                sendError(ex, 410, "sandbox_stopped", "Sandbox is stopped");
                return;
            }
            // without its own timeout a command lives as long as its session, whose stop kills it: the
            // local budget is only a backstop a little later, so it never races the session's clock
            budgetMs = p.timeoutMs != null ? p.timeoutMs : Math.max(1000, s.createdAt + s.timeoutMs - now) + 2000;
            s.addCommand(run);
            List<String> argv = new ArrayList<>(p.args);
            argv.add(0, p.command);
            ledger.executed(s.id, String.join(" ", argv), s.policy.grantsHostNetwork());
        }
        boolean dropStream = !instant() && p.wait && faults.takeDroppedStream();
        boolean hostile = !instant() && p.wait && faults.hostileFraming();
        if (instant()) {
            run.finish(0, now); // recorded, not run: it ended as it started
        } else {
            Execution execution = CommandLine.toExecution(p.command, p.args, env, p.cwd, s::machinePath,
                    s.machine.workPath(), Duration.ofMillis(budgetMs), maxLogChars);
            workers.execute(() -> execute(s, run, execution));
        }
        if (faults.takeLostExecResponse()) {
            drop(ex); // the command runs on; the client hears nothing
            return;
        }
        if (!p.wait) {
            ObjectNode out = object();
            out.set("command", run.json());
            sendJson(ex, 200, out);
            return;
        }
        ex.getResponseHeaders().set("Content-Type", "application/x-ndjson");
        ex.sendResponseHeaders(200, 0);
        OutputStream out = ex.getResponseBody();
        try {
            ObjectNode first = object();
            first.set("command", run.json());
            writeLine(out, first);
            if (hostile) {
                writeHostileLine(out);
                cut(ex);
                return;
            }
            int index = 0;
            while (true) {
                CommandRun.Next next = run.await(index, 1000);
                if (next == null) {
                    continue;
                }
                if (next == CommandRun.Next.CHUNK) {
                    CommandRun.Chunk c = run.chunk(index++);
                    if (p.logs) {
                        writeLine(out, object().put("stream", c.stream()).put("data", c.data()));
                    }
                    if (dropStream) {
                        // Mid-run: the command keeps going, as after a real dropped connection.
                        cut(ex);
                        return;
                    }
                } else if (next == CommandRun.Next.FINISHED) {
                    if (dropStream) {
                        cut(ex);
                        return;
                    }
                    ObjectNode last = object();
                    last.set("command", run.json());
                    writeLine(out, last);
                    return;
                } else {
                    writeLine(out, streamError("sandbox_stream_closed",
                            "Sandbox stream was closed and is not accepting commands."));
                    return;
                }
            }
        } catch (IOException e) {
            // The client went away (an abort): like Vercel, the command keeps running.
            log.debug("VercelEmulator: client left the stream of {}", run.id());
        }
    }

    private void execute(Session s, CommandRun run, Execution execution) {
        run.worker(Thread.currentThread());
        int code;
        try {
            s.execLock.lockInterruptibly();
            try {
                boolean network;
                synchronized (s) {
                    if (s.status.equals("stopped")) {
                        throw new InterruptedException();
                    }
                    network = s.policy.grantsHostNetwork();
                }
                if (run.killSignal() != 0) {
                    throw new InterruptedException();
                }
                s.machine.setNetwork(network);
                run.executing(true);
                try {
                    code = s.machine.run(execution, run).exitCode();
                } finally {
                    run.executing(false);
                }
                if (run.killSignal() != 0) {
                    code = 128 + run.killSignal();
                }
            } finally {
                s.execLock.unlock();
            }
        } catch (InterruptedException e) {
            int signal = run.killSignal();
            code = 128 + (signal == 0 ? 9 : signal);
        } catch (RuntimeException e) {
            if (s.stopped()) {
                code = 137;
            } else {
                log.warn("VercelEmulator: command {} failed in the local sandbox", run.id(), e);
                run.stderr("emulator: the local sandbox failed: " + e.getMessage() + "\n");
                code = 255;
            }
        } finally {
            Thread.interrupted();
        }
        run.finish(code, System.currentTimeMillis());
    }

    private void kill(HttpExchange ex, Session s, CommandRun run) throws Exception {
        JsonNode body = body(ex);
        if (body == null) {
            return;
        }
        JsonNode signal = body.get("signal");
        int sig = 15;
        if (signal != null) {
            if (!signal.canConvertToInt() || signal.asInt() < 1 || signal.asInt() > 64) {
                sendError(ex, 400, "bad_request", "signal must be a POSIX signal number");
                return;
            }
            sig = signal.asInt();
        }
        if (run.kill(sig, s.machine::kill)) {
            // The local sandbox kills with SIGKILL whatever the signal; answer once it is gone.
            run.awaitFinished(10_000);
        }
        ObjectNode out = object();
        out.set("command", run.json());
        sendJson(ex, 200, out);
    }

    private void streamLogs(HttpExchange ex, CommandRun run) throws Exception {
        ex.getResponseHeaders().set("Content-Type", "application/x-ndjson");
        ex.sendResponseHeaders(200, 0);
        OutputStream out = ex.getResponseBody();
        try {
            int index = 0;
            while (true) {
                CommandRun.Next next = run.await(index, 1000);
                if (next == null) {
                    continue;
                }
                if (next == CommandRun.Next.CHUNK) {
                    CommandRun.Chunk c = run.chunk(index++);
                    writeLine(out, object().put("stream", c.stream()).put("data", c.data()));
                } else if (next == CommandRun.Next.FINISHED) {
                    return;
                } else {
                    writeLine(out, streamError("sandbox_stream_closed",
                            "Sandbox stream was closed and is not accepting commands."));
                    return;
                }
            }
        } catch (IOException e) {
            log.debug("VercelEmulator: client left the logs of {}", run.id());
        }
    }

    private static ObjectNode streamError(String code, String message) {
        ObjectNode line = object().put("stream", "error");
        line.putObject("data").put("code", code).put("message", message);
        return line;
    }

    private static void writeLine(OutputStream out, JsonNode line) throws IOException {
        out.write(JSON.writeValueAsBytes(line));
        out.write(NEWLINE);
        out.flush();
    }

    /** One gigabyte-long stdout line, written lazily from a small buffer and never finished. */
    private static void writeHostileLine(OutputStream out) throws IOException {
        out.write("{\"stream\":\"stdout\",\"data\":\"".getBytes(StandardCharsets.US_ASCII));
        byte[] filler = new byte[64 * 1024];
        Arrays.fill(filler, (byte) 'A');
        long total = 1L << 30;
        for (long sent = 0; sent < total; sent += filler.length) {
            out.write(filler);
        }
        out.flush();
    }

    // ---------------------------------------------------------------- files

    private void fs(HttpExchange ex, Session s, String op) throws Exception {
        switch (op) {
            case "write":
                writeFiles(ex, s);
                return;
            case "read":
                readFile(ex, s);
                return;
            case "mkdir":
                mkdir(ex, s);
                return;
            default:
                sendError(ex, 404, "not_found", "No filesystem operation " + op);
        }
    }

    private void writeFiles(HttpExchange ex, Session s) throws Exception {
        if (!running(ex, s)) {
            return;
        }
        String type = ex.getRequestHeaders().getFirst("Content-Type");
        if (type == null || !type.toLowerCase().startsWith("application/gzip")) {
            sendError(ex, 400, "bad_request", "Files must be uploaded as a gzipped tarball (Content-Type: application/gzip)");
            return;
        }
        String base = ex.getRequestHeaders().getFirst("x-cwd");
        if (base == null || base.isEmpty()) {
            // The OpenAPI says "the home directory"; the emulator's home is the session directory.
            base = SESSION_CWD;
        }
        List<TarGz.Entry> entries;
        try (InputStream in = ex.getRequestBody()) {
            entries = TarGz.read(in, maxUploadBytes);
        } catch (TarGz.BadArchiveException e) {
            sendError(ex, 400, "bad_request", "Invalid archive: " + e.getMessage());
            return;
        }
        List<String> targets = new ArrayList<>();
        for (TarGz.Entry e : entries) {
            String abs = resolve(base, e.name());
            if (abs == null || abs.equals("/")) {
                sendError(ex, 400, "bad_request", "Invalid path in archive: " + e.name());
                return;
            }
            targets.add(abs);
        }
        for (int i = 0; i < entries.size(); i++) {
            TarGz.Entry e = entries.get(i);
            String abs = targets.get(i);
            String stored = storagePath(abs);
            if (e.directory()) {
                if (!stored.isEmpty()) {
                    s.machine.mkdir(stored);
                }
            } else {
                if (stored.isEmpty()) {
                    sendError(ex, 400, "bad_request", "Cannot write a file over " + SESSION_CWD);
                    return;
                }
                s.machine.writeFile(stored, e.content(), e.mode());
            }
            s.remember(abs);
        }
        sendJson(ex, 200, object());
    }

    private void readFile(HttpExchange ex, Session s) throws Exception {
        JsonNode body = body(ex);
        if (body == null || !running(ex, s)) {
            return;
        }
        String abs = pathParam(ex, body);
        if (abs == null) {
            return;
        }
        byte[] content = s.machine.readFile(storagePath(abs), maxUploadBytes);
        if (content == null) {
            sendError(ex, 404, "file_not_found", "File not found");
            return;
        }
        ex.getResponseHeaders().set("Content-Type", "application/octet-stream");
        ex.sendResponseHeaders(200, content.length == 0 ? -1 : content.length);
        try (OutputStream out = ex.getResponseBody()) {
            out.write(content);
        }
    }

    private void mkdir(HttpExchange ex, Session s) throws Exception {
        JsonNode body = body(ex);
        if (body == null || !running(ex, s)) {
            return;
        }
        String abs = pathParam(ex, body);
        if (abs == null) {
            return;
        }
        if (storagePath(abs).isEmpty()) {
            sendError(ex, 400, "bad_request", "mkdir failed: " + SESSION_CWD + " exists");
            return;
        }
        s.machine.mkdir(storagePath(abs));
        s.remember(abs);
        sendJson(ex, 200, object());
    }

    /** The {path, cwd?} body of read and mkdir, as an absolute Vercel path; null after answering 400. */
    private static String pathParam(HttpExchange ex, JsonNode body) throws IOException {
        JsonNode path = body.get("path");
        JsonNode cwd = body.get("cwd");
        if (path == null || !path.isTextual() || path.asText().isEmpty() || (cwd != null && !cwd.isTextual())) {
            sendError(ex, 400, "bad_request", "path must be a non-empty string");
            return null;
        }
        String abs = resolve(cwd == null ? SESSION_CWD : cwd.asText(), path.asText());
        if (abs == null || abs.equals("/")) {
            sendError(ex, 400, "bad_request", "Invalid path: " + path.asText());
            return null;
        }
        return abs;
    }

    // ---------------------------------------------------------------- helpers

    private boolean running(HttpExchange ex, Session s) throws IOException {
        if (s.stopped()) {
            sendError(ex, 410, "sandbox_stopped", "Sandbox is stopped");
            return false;
        }
        return true;
    }

    private static boolean expect(HttpExchange ex, String method, String wanted) throws IOException {
        if (method.equals(wanted)) {
            return true;
        }
        sendError(ex, 405, "method_unknown", "This endpoint only responds to " + wanted);
        return false;
    }

    /** The JSON body, or null after answering 400 for a body that is not a JSON object. */
    private static JsonNode body(HttpExchange ex) throws IOException {
        JsonNode body;
        try {
            body = readJson(ex);
        } catch (JsonProcessingException e) {
            sendError(ex, 400, "bad_request", "The request body is not valid JSON");
            return null;
        }
        if (!body.isObject()) {
            sendError(ex, 400, "bad_request", "The request body must be a JSON object");
            return null;
        }
        return body;
    }

    static String codeFor(int status) {
        switch (status) {
            case 400: return "bad_request";
            case 401: return "unauthorized";
            case 402: return "payment_required";
            case 403: return "forbidden";
            case 404: return "not_found";
            case 405: return "method_unknown";
            case 409: return "conflict";
            case 410: return "sandbox_stopped";
            case 422: return "sandbox_stopping";
            case 429: return "rate_limited";
            case 502: return "bad_gateway";
            case 503: return "service_unavailable";
            case 504: return "gateway_timeout";
            default: return status >= 500 ? "internal_server_error" : "bad_request";
        }
    }

    private static void sendError(HttpExchange ex, int status, String code, String message) throws IOException {
        ObjectNode body = object();
        body.putObject("error").put("code", code).put("message", message);
        sendJson(ex, status, body);
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

    private static String random(int n) {
        String alphabet = "abcdefghijklmnopqrstuvwxyz0123456789";
        char[] c = new char[n];
        for (int i = 0; i < n; i++) {
            c[i] = alphabet.charAt(RANDOM.nextInt(alphabet.length()));
        }
        return new String(c);
    }

    // ---------------------------------------------------------------- builder

    public static final class Builder {
        private int port;
        private String token = "emulator-token";
        private String teamId = "team_emulator";
        private String projectId = "prj_emulator";
        private MachineFactory machines;
        private long maxUploadBytes = 64L * 1024 * 1024;
        private int maxLogChars = 16 * 1024 * 1024;
        private boolean instant;

        private Builder() {
        }

        /**
         * Instant mode ({@link HttpEmulator#instant()}): no machine opens (the factory is not used);
         * every command is finished with exit 0 and no output as it is created, file writes and mkdir
         * are accepted and dropped, reads find nothing. Default off.
         */
        public Builder instant(boolean on) {
            this.instant = on;
            return this;
        }

        /** 0 (the default) picks a free port. */
        public Builder port(int port) {
            this.port = port;
            return this;
        }

        /** The bearer token every request must carry. */
        public Builder token(String token) {
            this.token = Objects.requireNonNull(token, "token");
            return this;
        }

        /** The {@code teamId} every request must carry in its query. */
        public Builder teamId(String teamId) {
            this.teamId = Objects.requireNonNull(teamId, "teamId");
            return this;
        }

        /** The project create and named-sandbox calls must name. */
        public Builder projectId(String projectId) {
            this.projectId = Objects.requireNonNull(projectId, "projectId");
            return this;
        }

        /** Where sessions run (internal; tests may wrap the default). Defaults to local sandboxes. */
        public Builder machines(MachineFactory machines) {
            this.machines = Objects.requireNonNull(machines, "machines");
            return this;
        }

        /** Bound on an uploaded archive, uncompressed. */
        public Builder maxUploadBytes(long bytes) {
            this.maxUploadBytes = bytes;
            return this;
        }

        /** Characters of output a command keeps for its stream and logs; the rest is dropped. */
        public Builder maxLogChars(int chars) {
            this.maxLogChars = chars;
            return this;
        }

        /** Starts the server. */
        public VercelEmulator build() throws IOException {
            if (instant) {
                machines = InstantMachines.INSTANCE;
            } else if (machines == null) {
                machines = LocalMachines.create();
            }
            return new VercelEmulator(this);
        }
    }
}
