package dev.sandbox4j.emulators.e2b;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpExchange;
import dev.sandbox4j.emulators.HttpEmulator;
import dev.sandbox4j.local.LocalSandboxRunner;
import java.io.IOException;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * An E2B emulator: the control-plane API ({@code POST /v2/sandboxes} and the deprecated
 * {@code POST /sandboxes}, kill, set timeout, get, list by metadata, network update), envd's Connect
 * process API and {@code /files}, and the code interpreter's {@code /execute}, all on one loopback
 * port, in E2B's own wire formats. Each sandbox really runs its commands in a local sandbox with the
 * egress it received applied (see {@link Egress}).
 *
 * <p>Sandbox traffic is told apart from API traffic as E2B's edge proxy does: by a Host of the form
 * {@code <port>-<sandboxId>.<domain>}, or by the {@code E2b-Sandbox-Id} and {@code E2b-Sandbox-Port}
 * headers that the official SDK always sends to envd and the code interpreter. So the SDK works with
 * {@code E2B_API_URL} and {@code E2B_SANDBOX_URL} both set to {@link #baseUrl()}.
 *
 * @since 0.1.0
 */
public final class E2bEmulator extends HttpEmulator {
    private static final Logger log = LoggerFactory.getLogger(E2bEmulator.class);
    static final int ENVD_PORT = 49983;
    static final int INTERPRETER_PORT = 49999;
    static final String HOME = "/home/user";
    static final String DEBUG_SANDBOX_ID = "debug_sandbox_id";
    private static final String API_KEY_HELP =
            "Invalid API key, please visit https://e2b.dev/docs/quickstart/api-key for more information.";
    private static final Pattern SANDBOX_HOST = Pattern.compile("^(\\d{1,5})-([A-Za-z0-9_-]+)\\..+$");
    private static final Pattern SANDBOX_PATH = Pattern.compile("^/sandboxes/([^/]+)(/[a-z]+)?$");
    private static final Pattern CONNECT_PATH = Pattern.compile("^/v2/sandboxes/([^/]+)/connect$");
    private static final SecureRandom RANDOM = new SecureRandom();

    private final byte[] apiKey;
    private final String domain;
    private final Duration maxTimeout;
    private final boolean debugSandbox;
    private final boolean trace;
    final Workspace.Factory workspaces;
    private final LocalSandboxRunner ownRunner;
    final long hardCapBytes;
    final int maxUploadBytes;
    final Duration interpreterKeepalive;
    final String envdVersion;
    final Map<String, EmulatedSandbox> sandboxes = new ConcurrentHashMap<>();
    final ExecutorService commands = Executors.newCachedThreadPool(r -> {
        Thread t = new Thread(r, "E2bEmulator-command");
        t.setDaemon(true);
        return t;
    });
    private final ScheduledExecutorService clock = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "E2bEmulator-clock");
        t.setDaemon(true);
        return t;
    });
    private final Envd envd = new Envd(this);
    private final Interpreter interpreter = new Interpreter(this);
    private volatile HostileFrame hostileFrame = HostileFrame.HUGE_LENGTH_PREFIX;

    /** What a command stream sends when {@code faults().hostileFraming(true)} is on. */
    public enum HostileFrame {
        /** A Connect envelope whose length prefix is 0xFFFFFFFF, then endless payload. */
        HUGE_LENGTH_PREFIX,
        /** A Connect envelope declaring and streaming one gigabyte (an NDJSON line of a gigabyte on /execute). */
        GIGABYTE_FRAME
    }

    private E2bEmulator(Builder b) throws IOException {
        super(b.port, b.instant);
        this.apiKey = b.apiKey.getBytes(StandardCharsets.UTF_8);
        this.domain = b.domain;
        this.maxTimeout = b.maxTimeout;
        this.debugSandbox = b.debugSandbox;
        this.trace = b.trace;
        if (b.instant) {
            this.workspaces = InstantWorkspace.FACTORY;
            this.ownRunner = null;
        } else if (b.workspaces != null) {
            this.workspaces = b.workspaces;
            this.ownRunner = null;
        } else {
            this.ownRunner = b.localRunner == null ? LocalSandboxRunner.create() : null;
            LocalSandboxRunner runner = b.localRunner != null ? b.localRunner : ownRunner;
            this.workspaces = LocalWorkspace.factory(runner, b.maxTimeout.plusMinutes(1));
        }
        this.hardCapBytes = b.hardCapBytes;
        this.maxUploadBytes = b.maxUploadBytes;
        this.interpreterKeepalive = b.interpreterKeepalive;
        this.envdVersion = b.envdVersion;
    }

    public static Builder builder() {
        return new Builder();
    }

    /** Chooses the hostile frame sent while {@code faults().hostileFraming(true)} is on. */
    public E2bEmulator hostileFrame(HostileFrame frame) {
        this.hostileFrame = Objects.requireNonNull(frame);
        return this;
    }

    HostileFrame hostileFrameKind() {
        return hostileFrame;
    }

    @Override
    protected void handle(HttpExchange exchange) throws Exception {
        if (!trace) {
            route(exchange);
            return;
        }
        Trace t = Trace.start(exchange);
        try {
            route(exchange);
        } finally {
            String line = t.finish(exchange);
            synchronized (System.err) {
                System.err.println(line);
            }
        }
    }

    private void route(HttpExchange exchange) throws Exception {
        String host = exchange.getRequestHeaders().getFirst("Host");
        Matcher m = host == null ? null : SANDBOX_HOST.matcher(host.trim());
        if (m != null && m.matches()) {
            sandboxRoute(exchange, m.group(2), Integer.parseInt(m.group(1)));
            return;
        }
        String sandboxId = exchange.getRequestHeaders().getFirst("E2b-Sandbox-Id");
        String sandboxPort = exchange.getRequestHeaders().getFirst("E2b-Sandbox-Port");
        if (sandboxId != null && sandboxPort != null) {
            int port;
            try {
                port = Integer.parseInt(sandboxPort.trim());
            } catch (NumberFormatException e) {
                sendJson(exchange, 400, error(400, "invalid E2b-Sandbox-Port header"));
                return;
            }
            sandboxRoute(exchange, sandboxId.trim(), port);
            return;
        }
        apiRoute(exchange);
    }

    @Override
    protected Kind kind(HttpExchange exchange) {
        String method = exchange.getRequestMethod();
        String path = exchange.getRequestURI().getRawPath();
        boolean api = exchange.getRequestHeaders().getFirst("E2b-Sandbox-Id") == null
                && !SANDBOX_HOST.matcher(String.valueOf(exchange.getRequestHeaders().getFirst("Host")).trim()).matches();
        if (!api) {
            return method.equals("POST") && (path.equals("/process.Process/Start") || path.equals("/execute"))
                    ? Kind.EXEC : Kind.OTHER;
        }
        if (path.equals("/v2/sandboxes") || path.equals("/sandboxes")) {
            return method.equals("POST") ? Kind.CREATE : method.equals("GET") ? Kind.LOOKUP : Kind.OTHER;
        }
        return method.equals("DELETE") && SANDBOX_PATH.matcher(path).matches() ? Kind.TEARDOWN : Kind.OTHER;
    }

    @Override
    protected JsonNode error(int status, String message) {
        ObjectNode n = object();
        n.put("code", status);
        n.put("message", message);
        return n;
    }

    @Override
    protected void destroyAll() {
        for (String id : List.copyOf(sandboxes.keySet())) {
            destroy(id);
        }
        commands.shutdownNow();
        clock.shutdownNow();
        if (ownRunner != null) {
            ownRunner.close();
        }
    }

    // ---------------------------------------------------------------- routing to sandboxes (the edge proxy)

    private void sandboxRoute(HttpExchange exchange, String sandboxId, int port) throws Exception {
        EmulatedSandbox sb = sandboxes.get(sandboxId);
        if (sb == null && debugSandbox && sandboxId.equals(DEBUG_SANDBOX_ID)) {
            sb = debugSandbox();
        }
        if (sb == null || sb.isKilled()) {
            ObjectNode n = object();
            n.put("sandboxId", sandboxId);
            n.put("message", "The sandbox was not found");
            n.put("code", 502);
            sendJson(exchange, 502, n);
            return;
        }
        boolean interpreterOpen = sb.alias.startsWith("code-interpreter") || sandboxId.equals(DEBUG_SANDBOX_ID);
        if (port == ENVD_PORT) {
            envd.handle(exchange, sb);
        } else if (port == INTERPRETER_PORT && interpreterOpen) {
            interpreter.handle(exchange, sb);
        } else {
            ObjectNode n = object();
            n.put("sandboxId", sandboxId);
            n.put("message", "The sandbox is running but port is not open");
            n.put("port", port);
            n.put("code", 502);
            sendJson(exchange, 502, n);
        }
    }

    /** The SDK's debug mode creates nothing: its envd calls name {@code debug_sandbox_id} and carry no token. */
    private synchronized EmulatedSandbox debugSandbox() {
        EmulatedSandbox existing = sandboxes.get(DEBUG_SANDBOX_ID);
        if (existing != null) {
            return existing;
        }
        Egress egress = Egress.none();
        Instant now = Instant.now();
        EmulatedSandbox sb = new EmulatedSandbox(DEBUG_SANDBOX_ID, templateId("base"), "base", null, Map.of(), Map.of(),
                egress, workspaces.open(egress.hostNetwork(), Map.of()), now, now.plus(Duration.ofDays(3650)));
        sandboxes.put(DEBUG_SANDBOX_ID, sb);
        ledger.created(DEBUG_SANDBOX_ID);
        log.info("E2B emulator: debug sandbox opened for the SDK's debug mode");
        return sb;
    }

    // ---------------------------------------------------------------- control-plane API

    private void apiRoute(HttpExchange exchange) throws Exception {
        String method = exchange.getRequestMethod();
        String path = exchange.getRequestURI().getRawPath();
        if (method.equals("GET") && path.equals("/health")) {
            sendText(exchange, 200, "Health check successful");
            return;
        }
        String keyProblem = checkApiKey(exchange.getRequestHeaders().getFirst("X-API-Key"));
        if (keyProblem != null) {
            sendJson(exchange, 401, error(401, keyProblem));
            return;
        }
        try {
            if (path.equals("/v2/sandboxes") || path.equals("/sandboxes")) {
                if (method.equals("POST")) {
                    create(exchange, path.startsWith("/v2/"));
                    return;
                }
                if (method.equals("GET")) {
                    list(exchange, path.startsWith("/v2/"));
                    return;
                }
            }
            Matcher m = SANDBOX_PATH.matcher(path);
            if (m.matches()) {
                String id = URLDecoder.decode(m.group(1), StandardCharsets.UTF_8);
                String sub = m.group(2) == null ? "" : m.group(2);
                if (sub.isEmpty() && method.equals("DELETE")) {
                    kill(exchange, id);
                    return;
                }
                if (sub.isEmpty() && method.equals("GET")) {
                    sendJson(exchange, 200, detail(existing(id)));
                    return;
                }
                if (sub.equals("/timeout") && method.equals("POST")) {
                    setTimeout(exchange, id);
                    return;
                }
                if (sub.equals("/network") && method.equals("PUT")) {
                    updateNetwork(exchange, id);
                    return;
                }
            }
            Matcher c = CONNECT_PATH.matcher(path);
            if (c.matches() && method.equals("POST")) {
                connect(exchange, URLDecoder.decode(c.group(1), StandardCharsets.UTF_8));
                return;
            }
            sendJson(exchange, 404, error(404, "validation error: no matching operation was found"));
        } catch (ApiException e) {
            sendApiError(exchange, e);
        }
    }

    /** Null when the key is right; otherwise E2B's 401 message (never echoing the key). */
    private String checkApiKey(String key) {
        if (key == null || key.isEmpty()) {
            return API_KEY_HELP + " authorization header is missing";
        }
        if (!key.startsWith("e2b_")) {
            return API_KEY_HELP + " authorization header is malformed";
        }
        if (!MessageDigest.isEqual(apiKey, key.getBytes(StandardCharsets.UTF_8))) {
            return API_KEY_HELP + "\nCannot get the team for the given API key";
        }
        return null;
    }

    private void sendApiError(HttpExchange exchange, ApiException e) throws IOException {
        ObjectNode n = (ObjectNode) error(e.status, e.getMessage());
        if (e.errorCode != null) {
            n.put("error_code", e.errorCode);
        }
        sendJson(exchange, e.status, n);
    }

    private void create(HttpExchange exchange, boolean v2) throws Exception {
        JsonNode body = readBody(exchange);
        int failure = faults.takeCreateFailure();
        if (failure != 0) {
            if (failure == 429 && faults.retryAfterSeconds() >= 0) {
                exchange.getResponseHeaders().set("Retry-After", Integer.toString(faults.retryAfterSeconds()));
            }
            sendApiError(exchange, createFailure(failure));
            return;
        }
        JsonNode template = body.get("templateID");
        if (template == null || !template.isTextual() || template.textValue().isBlank()) {
            throw ApiException.badRequest("request body has an error: doesn't match schema: "
                    + "Error at \"/templateID\": property \"templateID\" is missing");
        }
        String alias = template.textValue().trim();
        int timeout = timeoutSeconds(body.get("timeout"), v2 ? 300 : 15);
        Map<String, String> metadata = stringMap(body.get("metadata"), "metadata");
        Map<String, String> envVars = stringMap(body.get("envVars"), "envVars");
        for (String name : envVars.keySet()) {
            if (!name.matches("[A-Za-z_][A-Za-z0-9_]*")) {
                throw ApiException.badRequest("invalid environment variable name '" + name + "'");
            }
        }
        Egress egress = Egress.parse(body.get("allow_internet_access"), body.get("network"));
        boolean secure = v2 || (body.has("secure") && body.get("secure").asBoolean(false));

        boolean late = createLate(exchange); // the client is gone: create, answer nothing
        String id = "i" + randomId(20);
        String token = secure ? "ea_" + randomId(36) : null;
        Workspace workspace;
        try {
            workspace = workspaces.open(egress.hostNetwork(), envVars);
        } catch (RuntimeException e) {
            log.warn("E2B emulator: could not open a local sandbox", e);
            throw new ApiException(500, "Failed to create sandbox: " + e.getMessage(), "sandbox_create_failed");
        }
        Instant now = Instant.now();
        Instant endAt = now.plusSeconds(timeout);
        EmulatedSandbox sb = new EmulatedSandbox(id, templateId(alias), alias, token, metadata, envVars, egress,
                workspace, now, endAt);
        sandboxes.put(id, sb);
        ledger.created(id, metadata);
        sb.expiry(endAt, clock.schedule(() -> expire(id), timeout, TimeUnit.SECONDS));
        log.debug("E2B emulator: created {} ({}, {}s, {})", id, alias, timeout, egress);
        if (late || faults.takeLostCreate()) {
            drop(exchange);
            return;
        }
        ObjectNode n = object();
        n.put("alias", alias);
        n.put("clientID", "6532622b");
        n.put("envdVersion", envdVersion);
        n.put("sandboxID", id);
        n.put("templateID", sb.templateId);
        if (token != null) {
            n.put("envdAccessToken", token);
        }
        n.putNull("trafficAccessToken");
        if (domain == null) {
            n.putNull("domain");
        } else {
            n.put("domain", domain);
        }
        sendJson(exchange, 201, n);
    }

    private static ApiException createFailure(int status) {
        switch (status) {
            case 429:
                return new ApiException(429, "You have reached the maximum number of concurrent E2B sandboxes (20). "
                        + "If you need more, please contact us at 'https://e2b.dev/docs/getting-help'", null);
            case 503:
                return new ApiException(503, "No capacity to place the sandbox right now, please try again later",
                        "sandbox_capacity_unavailable");
            case 504:
                return new ApiException(504, "Timed out placing the sandbox", "sandbox_placement_timeout");
            default:
                return new ApiException(status, "Failed to create sandbox", status >= 500 ? "internal_server_error" : null);
        }
    }

    private int timeoutSeconds(JsonNode node, int fallback) throws ApiException {
        if (node == null || node.isNull()) {
            return fallback;
        }
        if (!node.isIntegralNumber() || !node.canConvertToInt()) {
            throw ApiException.badRequest("request body has an error: doesn't match schema: "
                    + "Error at \"/timeout\": value must be an integer");
        }
        int t = node.intValue();
        if (t <= 0) {
            throw ApiException.badRequest("Timeout must be greater than 0");
        }
        if (t > maxTimeout.toSeconds()) {
            throw ApiException.badRequest("Timeout cannot be greater than " + maxTimeout.toHours() + " hours");
        }
        return t;
    }

    private static Map<String, String> stringMap(JsonNode node, String field) throws ApiException {
        Map<String, String> out = new LinkedHashMap<>();
        if (node == null || node.isNull()) {
            return out;
        }
        if (!node.isObject()) {
            throw ApiException.badRequest("request body has an error: doesn't match schema: Error at \"/" + field
                    + "\": value must be an object");
        }
        var it = node.properties().iterator();
        while (it.hasNext()) {
            var e = it.next();
            if (!e.getValue().isTextual()) {
                throw ApiException.badRequest("request body has an error: doesn't match schema: Error at \"/" + field
                        + "/" + e.getKey() + "\": value must be a string");
            }
            out.put(e.getKey(), e.getValue().textValue());
        }
        return out;
    }

    private void kill(HttpExchange exchange, String id) throws Exception {
        int failure = faults.takeTeardownFailure();
        if (failure != 0) {
            sendJson(exchange, failure, error(failure, "Error killing sandbox \"" + id + "\""));
            return;
        }
        ledger.killedByClient(id);
        if (!destroy(id)) {
            throw ApiException.notFound(id);
        }
        sendEmpty(exchange, 204);
    }

    /** Removes, kills and records a sandbox. False when there was none. */
    boolean destroy(String id) {
        EmulatedSandbox sb = sandboxes.remove(id);
        if (sb == null) {
            return false;
        }
        sb.kill();
        ledger.destroyed(id);
        log.debug("E2B emulator: killed {}", id);
        return true;
    }

    private void expire(String id) {
        EmulatedSandbox sb = sandboxes.get(id);
        if (sb != null && !sb.endAt().isAfter(Instant.now().plusMillis(50))) {
            log.debug("E2B emulator: {} reached its timeout", id);
            destroy(id);
        }
    }

    private EmulatedSandbox existing(String id) throws ApiException {
        EmulatedSandbox sb = sandboxes.get(id);
        if (sb == null || sb.isKilled()) {
            throw ApiException.notFound(id);
        }
        return sb;
    }

    private void setTimeout(HttpExchange exchange, String id) throws Exception {
        JsonNode body = readBody(exchange);
        EmulatedSandbox sb = existing(id);
        JsonNode t = body.get("timeout");
        if (t == null) {
            throw ApiException.badRequest("request body has an error: doesn't match schema: "
                    + "Error at \"/timeout\": property \"timeout\" is missing");
        }
        int seconds = timeoutSeconds(t, 0);
        reschedule(sb, seconds);
        sendEmpty(exchange, 204);
    }

    private void reschedule(EmulatedSandbox sb, int seconds) {
        sb.expiry(Instant.now().plusSeconds(seconds), clock.schedule(() -> expire(sb.id), seconds, TimeUnit.SECONDS));
    }

    private void updateNetwork(HttpExchange exchange, String id) throws Exception {
        JsonNode body = readBody(exchange);
        EmulatedSandbox sb = existing(id);
        ObjectNode network = body.isObject() ? ((ObjectNode) body).deepCopy() : object();
        network.remove("allow_internet_access");
        Egress egress = Egress.parse(body.get("allow_internet_access"), network);
        sb.egress(egress);
        log.debug("E2B emulator: {} network updated: {}", id, egress);
        sendEmpty(exchange, 204);
    }

    private void connect(HttpExchange exchange, String id) throws Exception {
        JsonNode body = readBody(exchange);
        EmulatedSandbox sb = existing(id);
        // connect only extends the TTL; an omitted timeout means 300 s
        int seconds = timeoutSeconds(body.get("timeout"), 300);
        if (Instant.now().plusSeconds(seconds).isAfter(sb.endAt())) {
            reschedule(sb, seconds);
        }
        ObjectNode n = object();
        n.put("alias", sb.alias);
        n.put("clientID", "6532622b");
        n.put("envdVersion", envdVersion);
        n.put("sandboxID", sb.id);
        n.put("templateID", sb.templateId);
        if (sb.accessToken != null) {
            n.put("envdAccessToken", sb.accessToken);
        }
        n.putNull("trafficAccessToken");
        if (domain == null) {
            n.putNull("domain");
        } else {
            n.put("domain", domain);
        }
        sendJson(exchange, 200, n);
    }

    private ObjectNode listed(EmulatedSandbox sb) {
        ObjectNode n = object();
        n.put("alias", sb.alias);
        n.put("clientID", "6532622b");
        n.put("cpuCount", sb.cpuCount);
        n.put("diskSizeMB", sb.diskMb);
        n.put("endAt", sb.endAt().truncatedTo(ChronoUnit.MILLIS).toString());
        n.put("envdVersion", envdVersion);
        n.put("memoryMB", sb.memoryMb);
        ObjectNode md = n.putObject("metadata");
        sb.metadata.forEach(md::put);
        n.put("sandboxID", sb.id);
        n.put("startedAt", sb.startedAt.truncatedTo(ChronoUnit.MILLIS).toString());
        n.put("state", "running");
        n.put("templateID", sb.templateId);
        return n;
    }

    private ObjectNode detail(EmulatedSandbox sb) {
        ObjectNode n = listed(sb);
        Egress egress = sb.egress();
        if (egress.allowInternetAccess() == null) {
            n.putNull("allowInternetAccess");
        } else {
            n.put("allowInternetAccess", egress.allowInternetAccess());
        }
        if (domain == null) {
            n.putNull("domain");
        } else {
            n.put("domain", domain);
        }
        if (sb.accessToken != null) {
            n.put("envdAccessToken", sb.accessToken);
        }
        ObjectNode network = egress.networkJson();
        if (network != null) {
            n.set("network", network);
        }
        ObjectNode lifecycle = n.putObject("lifecycle");
        lifecycle.put("onTimeout", "kill");
        lifecycle.put("autoResume", false);
        return n;
    }

    private void list(HttpExchange exchange, boolean v2) throws Exception {
        Map<String, List<String>> query = queryParams(exchange.getRequestURI().getRawQuery());
        Map<String, String> wanted = new LinkedHashMap<>();
        for (String md : query.getOrDefault("metadata", List.of())) {
            for (String pair : md.split("&")) {
                if (pair.isEmpty()) {
                    continue;
                }
                int eq = pair.indexOf('=');
                String k = URLDecoder.decode(eq < 0 ? pair : pair.substring(0, eq), StandardCharsets.UTF_8);
                String v = eq < 0 ? "" : URLDecoder.decode(pair.substring(eq + 1), StandardCharsets.UTF_8);
                wanted.put(k, v);
            }
        }
        List<String> states = new ArrayList<>();
        for (String s : query.getOrDefault("state", List.of())) {
            for (String one : s.split(",")) {
                if (!one.isBlank()) {
                    states.add(one.trim());
                }
            }
        }
        for (String s : states) {
            if (!s.equals("running") && !s.equals("paused")) {
                throw ApiException.badRequest("validation error: parameter \"state\" in query has an error: "
                        + "value is not one of the allowed values [\"running\",\"paused\"]");
            }
        }
        boolean running = states.isEmpty() || states.contains("running");
        List<EmulatedSandbox> matching = new ArrayList<>();
        if (running) {
            for (EmulatedSandbox sb : sandboxes.values()) {
                if (!sb.isKilled() && sb.metadata.entrySet().containsAll(wanted.entrySet())) {
                    matching.add(sb);
                }
            }
        }
        boolean asc = "asc".equals(first(query, "order"));
        Comparator<EmulatedSandbox> order = Comparator.comparing((EmulatedSandbox s) -> s.startedAt)
                .thenComparing(s -> s.id);
        matching.sort(asc ? order : order.reversed());
        int offset = 0;
        int limit = matching.size();
        if (v2) {
            limit = 100;
            String l = first(query, "limit");
            String token = first(query, "nextToken");
            try {
                if (l != null) {
                    limit = Integer.parseInt(l);
                }
                if (token != null) {
                    offset = Integer.parseInt(token);
                }
            } catch (NumberFormatException e) {
                throw ApiException.badRequest("validation error: invalid limit or nextToken");
            }
            if (limit < 1 || limit > 100) {
                throw ApiException.badRequest("validation error: parameter \"limit\" in query has an error: "
                        + "number must be between 1 and 100");
            }
        }
        ArrayNode out = JSON.createArrayNode();
        int end = Math.min(matching.size(), offset + limit);
        for (int i = Math.max(0, offset); i < end; i++) {
            out.add(listed(matching.get(i)));
        }
        if (end < matching.size()) {
            exchange.getResponseHeaders().set("X-Next-Token", Integer.toString(end));
        }
        exchange.getResponseHeaders().set("X-Total-Running", Integer.toString(matching.size()));
        sendJson(exchange, 200, out);
    }

    private static String first(Map<String, List<String>> query, String key) {
        List<String> v = query.get(key);
        return v == null || v.isEmpty() ? null : v.get(0);
    }

    private static JsonNode readBody(HttpExchange exchange) throws IOException, ApiException {
        byte[] body = exchange.getRequestBody().readNBytes(1 << 20);
        if (body.length == 0) {
            return object();
        }
        try {
            return JSON.readTree(body);
        } catch (IOException e) {
            throw ApiException.badRequest("Error when parsing request: invalid JSON body");
        }
    }

    // ---------------------------------------------------------------- ids

    static String randomId(int length) {
        String alphabet = "abcdefghijklmnopqrstuvwxyz0123456789";
        StringBuilder sb = new StringBuilder(length);
        for (int i = 0; i < length; i++) {
            sb.append(alphabet.charAt(RANDOM.nextInt(alphabet.length())));
        }
        return sb.toString();
    }

    /** A stable 20-character template id for a template name, as E2B returns ids rather than names. */
    static String templateId(String alias) {
        try {
            byte[] h = MessageDigest.getInstance("SHA-256").digest(alias.getBytes(StandardCharsets.UTF_8));
            String alphabet = "abcdefghijklmnopqrstuvwxyz0123456789";
            StringBuilder sb = new StringBuilder(20);
            for (int i = 0; i < 20; i++) {
                sb.append(alphabet.charAt((h[i] & 0xff) % alphabet.length()));
            }
            return sb.toString();
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    @Override
    public String toString() {
        return "E2bEmulator[" + baseUrl() + ", " + ledger + "]";
    }

    public static final class Builder {
        private int port;
        private String apiKey;
        private String domain;
        private Duration maxTimeout = Duration.ofHours(24);
        private boolean debugSandbox;
        private boolean trace;
        private Workspace.Factory workspaces;
        private LocalSandboxRunner localRunner;
        private long hardCapBytes = 64L * 1024 * 1024;
        private int maxUploadBytes = 64 * 1024 * 1024;
        private Duration interpreterKeepalive = Duration.ofSeconds(5);
        private String envdVersion = "0.6.13";
        private boolean instant;

        private Builder() {
        }

        /**
         * Instant mode ({@link HttpEmulator#instant()}): no local sandbox is opened; {@code Start} and
         * {@code /execute} answer at once (exit 0, no output), {@code /files} writes are accepted and
         * dropped, reads find nothing. Default off.
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

        /** The key the API accepts in {@code X-API-Key}; E2B keys start with {@code e2b_}. */
        public Builder apiKey(String apiKey) {
            if (apiKey == null || !apiKey.startsWith("e2b_") || apiKey.length() < 8) {
                throw new IllegalArgumentException("an E2B API key starts with e2b_");
            }
            this.apiKey = apiKey;
            return this;
        }

        /** The {@code domain} returned by create (null, the default, makes the SDK use its own). */
        public Builder domain(String domain) {
            this.domain = domain;
            return this;
        }

        /** The longest sandbox timeout accepted (E2B's team limit). Default 24 hours. */
        public Builder maxTimeout(Duration maxTimeout) {
            this.maxTimeout = Objects.requireNonNull(maxTimeout);
            return this;
        }

        /** Serve the SDK's debug mode, which creates nothing and talks to sandbox {@code debug_sandbox_id}. */
        public Builder debugSandbox(boolean on) {
            this.debugSandbox = on;
            return this;
        }

        /**
         * Prints every request to standard error: method, target, headers (API key, access token and
         * Authorization masked), the start of the body (Connect envelopes decoded) and the status.
         */
        public Builder trace(boolean on) {
            this.trace = on;
            return this;
        }

        /**
         * The local runner whose sandboxes run the commands. By default the emulator creates one
         * ({@code LocalSandboxRunner.create()}) and closes it with itself.
         */
        public Builder localRunner(LocalSandboxRunner runner) {
            this.localRunner = Objects.requireNonNull(runner);
            return this;
        }

        /** For tests: any workspaces instead of local sandboxes. */
        Builder workspaces(Workspace.Factory workspaces) {
            this.workspaces = Objects.requireNonNull(workspaces);
            return this;
        }

        /**
         * Bytes per stream after which the emulator kills a command that nobody stopped (E2B itself
         * has no such cap; this bounds the disk a flood can fill). Default 64 MiB.
         */
        public Builder hardCapBytes(long bytes) {
            this.hardCapBytes = bytes;
            return this;
        }

        /** The largest {@code /files} upload accepted. Default 64 MiB. */
        public Builder maxUploadBytes(int bytes) {
            this.maxUploadBytes = bytes;
            return this;
        }

        /** How often {@code /execute} sends a keepalive line while a cell runs. Default 5 s, as E2B. */
        public Builder interpreterKeepalive(Duration every) {
            this.interpreterKeepalive = Objects.requireNonNull(every);
            return this;
        }

        public E2bEmulator build() throws IOException {
            if (apiKey == null) {
                throw new IllegalStateException("apiKey is required");
            }
            return new E2bEmulator(this);
        }
    }
}
