package dev.sandbox4j.emulators.e2b;

import static dev.sandbox4j.emulators.HttpEmulator.JSON;
import static dev.sandbox4j.emulators.HttpEmulator.drop;
import static dev.sandbox4j.emulators.HttpEmulator.object;
import static dev.sandbox4j.emulators.HttpEmulator.queryParams;
import static dev.sandbox4j.emulators.HttpEmulator.sendEmpty;
import static dev.sandbox4j.emulators.HttpEmulator.sendJson;
import static dev.sandbox4j.emulators.HttpEmulator.sendText;
import static dev.sandbox4j.emulators.e2b.E2bEmulator.API_KEY_HELP;
import static dev.sandbox4j.emulators.e2b.E2bEmulator.CONNECT_PATH;
import static dev.sandbox4j.emulators.e2b.E2bEmulator.SANDBOX_PATH;
import static dev.sandbox4j.emulators.e2b.E2bEmulator.randomId;
import static dev.sandbox4j.emulators.e2b.E2bEmulator.templateId;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpExchange;
import dev.sandbox4j.emulators.Machine;
import java.io.IOException;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * E2B's control-plane API (what {@code E2B_API_URL} points at): create ({@code POST /v2/sandboxes}
 * and the deprecated {@code POST /sandboxes}), kill, get, list by metadata, set timeout, connect and
 * the network update, behind the {@code X-API-Key} check, in E2B's error shape.
 */
final class ControlPlane {
    private static final Logger log = LoggerFactory.getLogger(E2bEmulator.class);
    private final E2bEmulator emu;

    ControlPlane(E2bEmulator emu) {
        this.emu = emu;
    }

    void handle(HttpExchange exchange) throws Exception {
        String method = exchange.getRequestMethod();
        String path = exchange.getRequestURI().getRawPath();
        if (method.equals("GET") && path.equals("/health")) {
            sendText(exchange, 200, "Health check successful");
            return;
        }
        String keyProblem = checkApiKey(exchange.getRequestHeaders().getFirst("X-API-Key"));
        if (keyProblem != null) {
            sendJson(exchange, 401, emu.error(401, keyProblem));
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
            sendJson(exchange, 404, emu.error(404, "validation error: no matching operation was found"));
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
        if (!MessageDigest.isEqual(emu.apiKey, key.getBytes(StandardCharsets.UTF_8))) {
            return API_KEY_HELP + "\nCannot get the team for the given API key";
        }
        return null;
    }

    private void sendApiError(HttpExchange exchange, ApiException e) throws IOException {
        ObjectNode n = (ObjectNode) emu.error(e.status, e.getMessage());
        if (e.errorCode != null) {
            n.put("error_code", e.errorCode);
        }
        sendJson(exchange, e.status, n);
    }

    private void create(HttpExchange exchange, boolean v2) throws Exception {
        JsonNode body = readBody(exchange);
        int failure = emu.faults().takeCreateFailure();
        if (failure != 0) {
            if (failure == 429 && emu.faults().retryAfterSeconds() >= 0) {
                exchange.getResponseHeaders().set("Retry-After", Integer.toString(emu.faults().retryAfterSeconds()));
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

        boolean late = emu.late(exchange); // the client is gone: create, answer nothing
        String id = "i" + randomId(20);
        String token = secure ? "ea_" + randomId(36) : null;
        Machine workspace;
        try {
            workspace = emu.openMachine(egress.localPolicy(), envVars);
        } catch (RuntimeException e) {
            log.warn("E2B emulator: could not open a local sandbox", e);
            throw new ApiException(500, "Failed to create sandbox: " + e.getMessage(), "sandbox_create_failed");
        }
        Instant now = Instant.now();
        Instant endAt = now.plusSeconds(timeout);
        EmulatedSandbox sb = new EmulatedSandbox(id, templateId(alias), alias, token, metadata, envVars, egress,
                workspace, now, endAt);
        emu.sandboxes.put(id, sb);
        emu.ledger().created(id, metadata);
        emu.expireAt(sb, endAt, timeout);
        log.debug("E2B emulator: created {} ({}, {}s, {})", id, alias, timeout, egress);
        if (late || emu.faults().takeLostCreate()) {
            drop(exchange);
            return;
        }
        ObjectNode n = object();
        n.put("alias", alias);
        n.put("clientID", "6532622b");
        n.put("envdVersion", emu.envdVersion);
        n.put("sandboxID", id);
        n.put("templateID", sb.templateId);
        if (token != null) {
            n.put("envdAccessToken", token);
        }
        n.putNull("trafficAccessToken");
        if (emu.domain == null) {
            n.putNull("domain");
        } else {
            n.put("domain", emu.domain);
        }
        sendJson(exchange, 201, n);
    }

    private static ApiException createFailure(int status) {
        switch (status) {
            case 429:
                return new ApiException(429, "You have reached the maximum number of concurrent E2B emu.sandboxes (20). "
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
        if (t > emu.maxTimeout.toSeconds()) {
            throw ApiException.badRequest("Timeout cannot be greater than " + emu.maxTimeout.toHours() + " hours");
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
        int failure = emu.faults().takeTeardownFailure();
        if (failure != 0) {
            sendJson(exchange, failure, emu.error(failure, "Error killing sandbox \"" + id + "\""));
            return;
        }
        emu.ledger().killedByClient(id);
        if (!emu.destroy(id)) {
            throw ApiException.notFound(id);
        }
        sendEmpty(exchange, 204);
    }

    private EmulatedSandbox existing(String id) throws ApiException {
        EmulatedSandbox sb = emu.sandboxes.get(id);
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
        emu.reschedule(sb, seconds);
        sendEmpty(exchange, 204);
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
            emu.reschedule(sb, seconds);
        }
        ObjectNode n = object();
        n.put("alias", sb.alias);
        n.put("clientID", "6532622b");
        n.put("envdVersion", emu.envdVersion);
        n.put("sandboxID", sb.id);
        n.put("templateID", sb.templateId);
        if (sb.accessToken != null) {
            n.put("envdAccessToken", sb.accessToken);
        }
        n.putNull("trafficAccessToken");
        if (emu.domain == null) {
            n.putNull("domain");
        } else {
            n.put("domain", emu.domain);
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
        n.put("envdVersion", emu.envdVersion);
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
        if (emu.domain == null) {
            n.putNull("domain");
        } else {
            n.put("domain", emu.domain);
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
            for (EmulatedSandbox sb : emu.sandboxes.values()) {
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
}
