package dev.sandbox4j.emulators.daytona;

import static dev.sandbox4j.emulators.HttpEmulator.JSON;
import static dev.sandbox4j.emulators.HttpEmulator.drop;
import static dev.sandbox4j.emulators.HttpEmulator.object;
import static dev.sandbox4j.emulators.HttpEmulator.queryFirst;
import static dev.sandbox4j.emulators.daytona.DaytonaEmulator.DAEMON_VERSION;
import static dev.sandbox4j.emulators.daytona.DaytonaEmulator.DEFAULT_SNAPSHOT;
import static dev.sandbox4j.emulators.daytona.DaytonaEmulator.MAX_JSON_BYTES;
import static dev.sandbox4j.emulators.daytona.DaytonaEmulator.ORGANIZATION_ID;
import static dev.sandbox4j.emulators.daytona.DaytonaEmulator.readWireBody;
import static dev.sandbox4j.emulators.daytona.DaytonaEmulator.segments;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpExchange;
import dev.sandbox4j.emulators.Machine;
import dev.sandbox4j.emulators.RecordedCall;
import dev.sandbox4j.emulators.daytona.internal.WireEgress;
import dev.sandbox4j.emulators.daytona.internal.WireException;
import dev.sandbox4j.policy.EgressPolicy;
import java.io.IOException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/**
 * The control plane under {@code /api}: create, get, list by labels, delete, the toolbox proxy URL and
 * {@code /config}, answering in the API's shapes (NestJS errors). The sandboxes and their lifecycle are
 * the emulator's; this class reads and writes the wire.
 */
final class SandboxApi {
    private final DaytonaEmulator emu;

    SandboxApi(DaytonaEmulator emu) {
        this.emu = emu;
    }

    void api(HttpExchange exchange, RecordedCall call, String method, String rest) throws Exception {
        List<String> seg = segments(rest);
        if (seg.size() == 1 && seg.get(0).equals("socket.io")) {
            // no event stream here: the SDK handles the refused upgrade and polls instead
            apiError(exchange, call, 404, "Cannot " + method + " " + exchange.getRequestURI().getRawPath());
            return;
        }
        if (seg.size() == 1 && seg.get(0).equals("health") && method.equals("GET")) {
            emu.sendJson(exchange, call, 200, object().put("status", "ok"));
            return;
        }
        if (!emu.authorized(exchange)) {
            apiError(exchange, call, 401, "Unauthorized");
            return;
        }
        if (seg.size() == 1 && seg.get(0).equals("config") && method.equals("GET")) {
            emu.sendJson(exchange, call, 200, config());
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
            } else if (seg.size() == 3 && seg.get(2).equals("network-settings") && method.equals("POST")) {
                networkSettings(exchange, call, seg.get(1));
            } else if (seg.size() == 3 && seg.get(2).equals("toolbox-proxy-url") && method.equals("GET")) {
                find(seg.get(1));
                emu.sendJson(exchange, call, 200, object().put("url", emu.toolboxProxyUrl()));
            } else {
                apiError(exchange, call, 404, "Cannot " + method + " " + exchange.getRequestURI().getRawPath());
            }
        } catch (WireException e) {
            apiError(exchange, call, e.status(), e.getMessage());
        }
    }

    void create(HttpExchange exchange, RecordedCall call) throws Exception {
        int failure = emu.faults().takeCreateFailure();
        if (failure != 0) {
            readWireBody(exchange, MAX_JSON_BYTES); // the request is consumed; nothing is created
            if (failure == 429) {
                int seconds = emu.faults().retryAfterSeconds();
                if (seconds >= 0) {
                    exchange.getResponseHeaders().set("Retry-After", Integer.toString(seconds));
                }
                apiError(exchange, call, 429, "ThrottlerException: Too Many Requests");
            } else {
                apiError(exchange, call, failure, failure >= 500 ? "An unexpected error occurred." : "Request failed");
            }
            return;
        }
        JsonNode body = parseJson(readWireBody(exchange, MAX_JSON_BYTES), call);
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

        boolean late = emu.late(exchange); // the client is gone: create, answer nothing
        EgressPolicy local = egress.localPolicy(emu.canaryTargets);
        boolean host = local.isAllowAll();
        String id = UUID.randomUUID().toString();
        Instant now = Instant.now();
        EmulatedSandbox sandbox = new EmulatedSandbox(id, body, ORGANIZATION_ID, egress, host, resources, now);
        emu.sandboxes.put(id, sandbox);
        emu.ledger().created(id, emu.stringMap(sandbox.labels));
        emu.log.debug("daytona emulator: sandbox {} created ({}, {})", id, local, egress);

        if (emu.takeOne(emu.startFailures)) {
            sandbox.fail("emulated start failure", now);
            apiError(exchange, call, 400, "Sandbox failed to start: emulated start failure");
            return;
        }
        try {
            Machine machine = emu.machines.open(local, emu.stringMap(sandbox.env), Duration.ofHours(24));
            if (!sandbox.start(machine, emu.startingPolls)) {
                machine.close(); // deleted while the machine opened
                emu.log.debug("daytona emulator: sandbox {} was deleted while its machine opened", id);
            }
        } catch (Exception e) {
            emu.log.warn("daytona emulator: the machine for sandbox {} did not open", id, e);
            sandbox.fail(String.valueOf(e.getMessage()), now);
            apiError(exchange, call, 400, "Sandbox failed to start: " + e.getMessage());
            return;
        }
        if (late || emu.faults().takeLostCreate()) {
            call.status(-1);
            drop(exchange);
            return;
        }
        emu.sendJson(exchange, call, 200, sandbox.toJson(proxyUrlField(), false));
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

    /**
     * {@code POST /sandbox/{idOrName}/network-settings}: the body merged into the stored settings as the
     * v0.190 service does ({@link WireEgress#update}), the machine's egress switched before the answer
     * (as a v0 runner applies it inside the request; the record then shows what is in force), 200 with
     * the sandbox. Guess: a sandbox that is not started answers 409.
     */
    void networkSettings(HttpExchange exchange, RecordedCall call, String idOrName) throws Exception {
        JsonNode body = parseJson(readWireBody(exchange, MAX_JSON_BYTES), call);
        if (!body.isObject()) {
            throw WireException.badRequest("Request body must be a JSON object");
        }
        EmulatedSandbox s = find(idOrName);
        WireEgress next = s.egress.update(body);
        EgressPolicy local = next.localPolicy(emu.canaryTargets);
        s.execLock.lock(); // never under a running command: the next command runs under the new network
        try {
            Machine m = s.machine();
            if (m == null || !"started".equals(s.currentState())) {
                throw new WireException(409, "Sandbox " + s.id + " is not started");
            }
            m.setEgress(local);
            s.egress = next;
            s.hostNetwork = local.isAllowAll();
        } finally {
            s.execLock.unlock();
        }
        s.touch(Instant.now());
        emu.log.debug("daytona emulator: sandbox {} network settings now {} ({})", s.id, next, local);
        emu.sendJson(exchange, call, 200, s.toJson(proxyUrlField(), false));
    }

    void get(HttpExchange exchange, RecordedCall call, String idOrName) throws Exception {
        EmulatedSandbox s = find(idOrName);
        String shown = s.read();
        emu.sendJson(exchange, call, 200, s.toJson(shown, proxyUrlField(), false));
    }

    void list(HttpExchange exchange, RecordedCall call) throws Exception {
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
        for (EmulatedSandbox s : emu.sandboxes.values()) {
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
        emu.sendJson(exchange, call, 200, out);
    }

    void delete(HttpExchange exchange, RecordedCall call, String idOrName) throws Exception {
        EmulatedSandbox s = find(idOrName);
        int failure = emu.faults().takeTeardownFailure();
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
        emu.ledger().killedByClient(s.id);
        emu.destroy(s);
        answer.put("desiredState", "destroyed");
        emu.sendJson(exchange, call, 200, answer);
    }

    ObjectNode config() {
        ObjectNode c = object();
        c.put("version", DAEMON_VERSION);
        c.putObject("oidc").put("issuer", emu.baseUrl() + "/oidc").put("clientId", "emulated").put("audience", "emulated");
        c.put("linkedAccountsEnabled", false);
        c.putObject("announcements");
        c.put("proxyTemplateUrl", emu.baseUrl() + "/preview/{{PORT}}-{{sandboxId}}");
        c.put("proxyToolboxUrl", emu.toolboxProxyUrl());
        c.put("defaultSnapshot", DEFAULT_SNAPSHOT);
        c.put("dashboardUrl", emu.baseUrl() + "/dashboard");
        c.put("maxAutoArchiveInterval", 43200);
        c.put("maintananceMode", false);
        c.put("environment", "emulated");
        return c;
    }

    void apiError(HttpExchange exchange, RecordedCall call, int status, String message) throws IOException {
        ObjectNode o = object();
        o.put("path", exchange.getRequestURI().getRawPath());
        o.put("timestamp", Instant.now().toString());
        o.put("statusCode", status);
        o.put("error", reason(status));
        o.put("message", message);
        emu.sendJson(exchange, call, status, o);
    }

    static String reason(int status) {
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

    JsonNode parseJson(byte[] raw, RecordedCall call) throws WireException {
        if (raw.length == 0) {
            call.body(object());
            return call.body();
        }
        try {
            call.body(JSON.readTree(raw));
        } catch (IOException e) {
            throw WireException.badRequest("Unexpected token in JSON body");
        }
        return call.body() == null ? object() : call.body();
    }

    private static void requireObject(JsonNode body, String field) throws WireException {
        JsonNode n = body.path(field);
        if (!n.isMissingNode() && !n.isNull() && !n.isObject()) {
            throw WireException.badRequest(field + " must be an object");
        }
    }

    String proxyUrlField() {
        return emu.omitToolboxProxyUrl ? null : emu.toolboxProxyUrl();
    }

    EmulatedSandbox find(String idOrName) throws WireException {
        EmulatedSandbox s = emu.sandboxes.get(idOrName);
        if (s == null) {
            s = findByName(idOrName);
        }
        if (s == null) {
            throw new WireException(404, "Sandbox with ID or name " + idOrName + " not found");
        }
        return s;
    }

    EmulatedSandbox findByName(String name) {
        for (EmulatedSandbox s : emu.sandboxes.values()) {
            if (s.name.equals(name)) {
                return s;
            }
        }
        return null;
    }
}
