package dev.sandbox4j.emulators.daytona;

import static dev.sandbox4j.emulators.HttpEmulator.JSON;
import static dev.sandbox4j.emulators.HttpEmulator.cut;
import static dev.sandbox4j.emulators.HttpEmulator.drop;
import static dev.sandbox4j.emulators.HttpEmulator.object;
import static dev.sandbox4j.emulators.HttpEmulator.sendText;
import static dev.sandbox4j.emulators.daytona.DaytonaEmulator.readWireBody;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpExchange;
import dev.sandbox4j.api.Execution;
import dev.sandbox4j.api.RunResult;
import dev.sandbox4j.api.RunStatus;
import dev.sandbox4j.emulators.Machine;
import dev.sandbox4j.emulators.RecordedCall;
import dev.sandbox4j.emulators.daytona.internal.ToolboxScripts;
import dev.sandbox4j.emulators.daytona.internal.WireException;
import dev.sandbox4j.policy.Language;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Iterator;
import java.util.Map;
import java.util.TreeMap;

/**
 * The toolbox's process plane ({@code /toolbox/{id}/...}, the daemon inside each sandbox): routing,
 * {@code process/execute} and {@code process/code-run} run on the sandbox's machine, the daemon's
 * error shape and gin's request binding. Files are {@link ToolboxFiles}'.
 */
final class Toolbox {
    private final DaytonaEmulator emu;
    private final ToolboxFiles files;
    final ToolboxSessions sessions;

    Toolbox(DaytonaEmulator emu) {
        this.emu = emu;
        this.files = new ToolboxFiles(emu, this);
        this.sessions = new ToolboxSessions(emu, this);
    }

    void handle(HttpExchange exchange, RecordedCall call, String method, String rest) throws Exception {
        int slash = rest.indexOf('/');
        String id = slash < 0 ? rest : rest.substring(0, slash);
        String op = slash < 0 ? "" : rest.substring(slash);
        if (!emu.authorized(exchange)) {
            error(exchange, call, 401, "unauthorized: invalid or missing API key", "UNAUTHORIZED");
            return;
        }
        EmulatedSandbox s = emu.sandboxes.get(id);
        if (s == null) {
            error(exchange, call, 404, "not found: sandbox " + id + " not found", "NOT_FOUND");
            return;
        }
        if (!"started".equals(s.currentState()) || s.machine() == null) {
            error(exchange, call, 409, "conflict: sandbox " + id + " is not started (state "
                    + s.currentState() + ")", "CONFLICT");
            return;
        }
        s.touch(Instant.now());
        call.route(op);
        if (method.equals("POST") && op.equals("/process/execute")) {
            execute(exchange, call, s, op);
        } else if (method.equals("POST") && op.equals("/process/code-run")) {
            codeRun(exchange, call, s, op);
        } else if (method.equals("POST") && op.equals("/files/bulk-upload")) {
            files.upload(exchange, call, s);
        } else if (method.equals("GET") && op.equals("/files/download")) {
            files.download(exchange, call, s);
        } else if (method.equals("POST") && op.equals("/files/bulk-download")) {
            files.bulkDownload(exchange, call, s);
        } else if ((op.equals("/process/session") || op.startsWith("/process/session/"))
                && sessions.handle(exchange, call, s, method, op.substring("/process/session".length()))) {
            // served
        } else {
            // gin's own answer for an unknown route
            call.status(404);
            sendText(exchange, 404, "404 page not found");
        }
    }

    private void execute(HttpExchange exchange, RecordedCall call, EmulatedSandbox s, String op) throws Exception {
        JsonNode body = body(exchange, call);
        String command = requiredString(body, "command", "ExecuteRequest.Command", "Command");
        Integer timeout = optionalTimeout(body);
        String cwd = optionalBodyString(body, "cwd");
        Map<String, String> envs = optionalEnvs(body);
        ToolboxScripts.validateEnvNames(envs);
        emu.ledger().executed(s.id, command, s.hostNetwork);
        String script;
        try {
            script = ToolboxScripts.execute(command, cwd, envs, List.copyOf(s.outsidePaths), emu.cwdFailureMarker);
        } catch (IllegalArgumentException e) {
            throw WireException.badRequest("bad request: invalid cwd");
        }
        runCommand(exchange, call, s, op, script, timeout, false, cwd);
    }

    private void codeRun(HttpExchange exchange, RecordedCall call, EmulatedSandbox s, String op) throws Exception {
        JsonNode body = body(exchange, call);
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
        emu.ledger().executed(s.id, code, s.hostNetwork);
        String script = ToolboxScripts.codeRun(language, code, argv, envs, List.copyOf(s.outsidePaths));
        ToolboxScripts.validateEnvNames(envs);
        runCommand(exchange, call, s, op, script, timeout, true, null);
    }

    /** Runs a script on the machine and answers as the daemon does; faults replace or cut the answer. */
    private void runCommand(HttpExchange exchange, RecordedCall call, EmulatedSandbox s, String op, String script,
            Integer timeout, boolean codeRun, String cwd) throws Exception {
        if (emu.instant()) {
            emu.sendJson(exchange, call, 200, object().put("exitCode", 0).put("result", ""));
            return;
        }
        if (emu.faults().hostileFraming()) {
            hostileAnswer(exchange, call);
            return;
        }
        Duration budget = timeout == null || timeout == 0 ? emu.maxCommandTime : Duration.ofSeconds(timeout);
        Execution execution = Execution.builder(script).language(Language.BASH).budget(budget)
                .outputLimit((int) Math.min(Integer.MAX_VALUE, emu.maxOutputBytes)).hardCapBytes(emu.maxOutputBytes).build();
        if (emu.faults().takeLostExecResponse()) {
            // the command runs on; the client hears nothing, not even a status line
            Thread runner = new Thread(() -> runLocked(s, execution), "DaytonaEmulator-orphaned-command");
            runner.setDaemon(true);
            runner.start();
            call.status(-1);
            drop(exchange);
            return;
        }
        if (emu.faults().takeDroppedStream()) {
            Thread runner = new Thread(() -> runLocked(s, execution), "DaytonaEmulator-orphaned-command");
            runner.setDaemon(true);
            runner.start();
            call.status(-1);
            exchange.getResponseHeaders().set("Content-Type", "application/json");
            exchange.sendResponseHeaders(200, 0);
            OutputStream out = exchange.getResponseBody();
            out.write("{\"result\":\"".getBytes(StandardCharsets.US_ASCII));
            out.flush();
            cut(exchange);
            return;
        }
        RunResult r = runLocked(s, execution);
        if (r == null || !emu.sandboxes.containsKey(s.id)) {
            // the sandbox was deleted under the command: there is no daemon left to answer
            call.status(-1);
            drop(exchange);
            return;
        }
        s.touch(Instant.now());
        if (r.status() == RunStatus.TIMED_OUT) {
            error(exchange, call, 408, "command execution timeout", "REQUEST_TIMEOUT", op);
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
        if (!codeRun && exitCode == 255 && output.equals(emu.cwdFailureMarker)) {
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
        emu.sendJson(exchange, call, 200, answer);
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
            if (!emu.sandboxes.containsKey(s.id)) {
                return null;
            }
            throw e;
        } finally {
            s.execLock.unlock();
        }
    }

    /** A 200 whose {@code result} string goes on and on, written lazily until the client gives up. */
    private void hostileAnswer(HttpExchange exchange, RecordedCall call) throws IOException {
        call.status(200);
        exchange.getResponseHeaders().set("Content-Type", "application/json");
        exchange.sendResponseHeaders(200, 0);
        OutputStream out = exchange.getResponseBody();
        try {
            out.write("{\"result\":\"".getBytes(StandardCharsets.US_ASCII));
            for (long sent = 0; sent < emu.hostileBytes; sent += HOSTILE_CHUNK.length) {
                out.write(HOSTILE_CHUNK);
            }
            out.write("\",\"exitCode\":0}".getBytes(StandardCharsets.US_ASCII));
            out.close();
        } catch (IOException e) {
            // the client stopped reading: exactly what a bounded client should do
            drop(exchange);
        }
    }

    JsonNode body(HttpExchange exchange, RecordedCall call) throws Exception {
        byte[] raw = readWireBody(exchange, DaytonaEmulator.MAX_JSON_BYTES);
        JsonNode body;
        try {
            body = raw.length == 0 ? null : JSON.readTree(raw);
        } catch (IOException e) {
            throw invalidBody("invalid character in JSON body");
        }
        if (body == null) {
            throw invalidBody("EOF");
        }
        call.body(body);
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

    static String codeFor(int status) {
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

    void error(HttpExchange exchange, RecordedCall call, int status, String message, String code) throws IOException {
        String path = call.route() != null ? call.route() : exchange.getRequestURI().getRawPath();
        error(exchange, call, status, message, code, path);
    }

    /** The daemon's shape ({@code libs/common-go/pkg/errors}); the path is what the daemon saw. */
    void error(HttpExchange exchange, RecordedCall call, int status, String message, String code, String path)
            throws IOException {
        ObjectNode o = object();
        o.put("statusCode", status);
        o.put("message", message);
        o.put("code", code);
        o.put("timestamp", Instant.now().toString());
        o.put("path", path);
        o.put("method", exchange.getRequestMethod());
        emu.sendJson(exchange, call, status, o);
    }

    private static final byte[] HOSTILE_CHUNK = "A".repeat(64 * 1024).getBytes(StandardCharsets.US_ASCII);
}
