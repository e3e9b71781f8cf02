package dev.sandbox4j.emulators.e2b;

import dev.sandbox4j.emulators.Machine;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpExchange;
import dev.sandbox4j.api.Execution;
import dev.sandbox4j.api.RunResult;
import dev.sandbox4j.api.RunStatus;
import dev.sandbox4j.emulators.HttpEmulator;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.security.MessageDigest;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CancellationException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * envd, the in-sandbox daemon on port 49983: the Connect process API ({@code process.Process/Start}
 * as a server stream, {@code SendSignal} unary), {@code filesystem.Filesystem/ListDir} (depth 1) and
 * {@code /files}, behind envd's access-token check. Reads and listings go through the workspace, which
 * follows no symbolic link, so a link the code plants never makes the emulator read a host file.
 */
final class Envd {
    private static final Logger log = LoggerFactory.getLogger(Envd.class);
    static final String UNAUTHORIZED = "unauthorized access, please provide a valid access token or method signing if supported";
    private static final int MAX_REQUEST_MESSAGE = 8 * 1024 * 1024;
    private static final Duration POLL = Duration.ofMillis(20);
    private static final Duration DEFAULT_KEEPALIVE = Duration.ofSeconds(90);

    private final E2bEmulator emulator;
    private final EnvdFiles files;

    Envd(E2bEmulator emulator) {
        this.emulator = emulator;
        this.files = new EnvdFiles(emulator);
    }

    void handle(HttpExchange exchange, EmulatedSandbox sb) throws Exception {
        String method = exchange.getRequestMethod();
        String path = exchange.getRequestURI().getRawPath();
        if (method.equals("GET") && path.equals("/health")) {
            Http.bytes(exchange, 204, new byte[0], null);
            return;
        }
        boolean signable = path.equals("/files") && (method.equals("GET") || method.equals("POST"));
        if (sb.accessToken != null && !signable && !tokenMatches(exchange, sb)) {
            Http.envdError(exchange, 401, UNAUTHORIZED);
            return;
        }
        if (path.equals("/files")) {
            if (method.equals("POST")) {
                files.upload(exchange, sb);
                return;
            }
            if (method.equals("GET")) {
                files.download(exchange, sb);
                return;
            }
        }
        if (method.equals("POST") && path.equals("/process.Process/Start")) {
            start(exchange, sb);
            return;
        }
        if (method.equals("POST") && path.equals("/process.Process/SendSignal")) {
            sendSignal(exchange, sb);
            return;
        }
        if (method.equals("POST") && path.equals("/filesystem.Filesystem/ListDir")) {
            files.listDir(exchange, sb);
            return;
        }
        if (method.equals("POST") && (path.startsWith("/process.Process/") || path.startsWith("/filesystem.Filesystem/"))) {
            unaryError(exchange, new ConnectException("unimplemented", path.substring(1) + " is not implemented by the emulator"));
            return;
        }
        Http.text(exchange, 404, "404 page not found\n");
    }

    static boolean tokenMatches(HttpExchange exchange, EmulatedSandbox sb) {
        String token = exchange.getRequestHeaders().getFirst("X-Access-Token");
        return token != null && MessageDigest.isEqual(token.getBytes(StandardCharsets.UTF_8),
                sb.accessToken.getBytes(StandardCharsets.UTF_8));
    }

    // ---------------------------------------------------------------- process.Process/Start

    private void start(HttpExchange exchange, EmulatedSandbox sb) throws Exception {
        String contentType = exchange.getRequestHeaders().getFirst("Content-Type");
        if (contentType == null || !contentType.toLowerCase().startsWith("application/connect+json")) {
            exchange.getResponseHeaders().set("Accept-Post", "application/connect+json");
            Http.bytes(exchange, 415, new byte[0], null);
            return;
        }
        int pid = sb.nextPid.incrementAndGet();
        JsonNode request;
        Duration timeout;
        Execution execution;
        Machine workspace;
        OutputFiles output;
        try {
            try (InputStream in = exchange.getRequestBody()) {
                request = Envelopes.readSingle(in, MAX_REQUEST_MESSAGE);
            }
            timeout = timeout(exchange.getRequestHeaders().getFirst("Connect-Timeout-Ms"));
            checkUser(exchange);
            if (emulator.instant()) {
                instantStart(exchange, sb, pid, request);
                return;
            }
            workspace = sb.workspace(emulator.workspaces);
            output = new OutputFiles(workspace, pid);
            execution = execution(request, sb, workspace, output, timeout);
        } catch (ConnectException e) {
            streamError(exchange, e);
            return;
        } catch (IllegalStateException e) {
            HttpEmulator.cut(exchange); // killed meanwhile: the proxy resets
            return;
        }
        emulator.ledger().executed(sb.id, request.path("process").toString(), sb.egress().hostNetwork());
        Command task = sb.startCommand(pid, workspace, execution, emulator.commands);
        log.debug("E2B emulator: {} pid {} started", sb.id, pid);
        if (emulator.faults().takeLostExecResponse()) {
            exchange.close(); // before any answer: the JDK server drops the connection
            return;
        }

        exchange.getResponseHeaders().set("Content-Type", "application/connect+json");
        exchange.sendResponseHeaders(200, 0);
        OutputStream out = exchange.getResponseBody();
        try {
            Envelopes.write(out, Envelopes.FLAG_MESSAGE, event("start", JsonNodeFactory.instance.objectNode().put("pid", pid)));
            if (emulator.faults().hostileFraming()) {
                hostile(out);
                return;
            }
            Stream stream = new Stream(out, emulator.faults().takeDroppedStream(),
                    keepalive(exchange.getRequestHeaders().getFirst("Keepalive-Ping-Interval")));
            RunResult result;
            try {
                result = stream.follow(task, output);
            } catch (ExecutionException e) {
                // the local sandbox failed (not the command): report it as envd reports its own failures
                log.warn("E2B emulator: {} pid {}: the local sandbox failed: {}", sb.id, pid, e.getCause().toString());
                Envelopes.write(out, Envelopes.FLAG_END_STREAM, endStreamError("internal",
                        "emulator: the local sandbox failed: " + e.getCause().getMessage()));
                return;
            }
            if (stream.drop) {
                log.debug("E2B emulator: dropping the stream of {} pid {} (fault)", sb.id, pid);
                HttpEmulator.cut(exchange);
                return;
            }
            if (result == null && sb.isKilled()) {
                HttpEmulator.cut(exchange); // the sandbox is gone: so is the stream
                return;
            }
            if (result != null && result.status() == RunStatus.TIMED_OUT) {
                if (timeout == null) {
                    HttpEmulator.cut(exchange); // ran into the sandbox's own timeout: the sandbox goes
                    return;
                }
                // connect-go's deadline on the request context wins the race with the end event
                Envelopes.write(out, Envelopes.FLAG_END_STREAM, endStreamError("deadline_exceeded", "context deadline exceeded"));
                return;
            }
            if (result == null || stream.capped || result.status() != RunStatus.EXITED || result.exitCode().isEmpty()) {
                writeEnd(out, -1, false, "signal: killed", "signal: killed");
            } else {
                int code = result.exitCode().getAsInt();
                writeEnd(out, code, true, "exit status " + code, code == 0 ? null : "exit status " + code);
            }
            Envelopes.write(out, Envelopes.FLAG_END_STREAM, JsonNodeFactory.instance.objectNode());
            log.debug("E2B emulator: {} pid {} ended: {} ({} + {} bytes)", sb.id, pid,
                    result == null ? "killed" : result.status(), output.stdoutBytes(), output.stderrBytes());
        } catch (IOException e) {
            // The client went away. As in envd the command keeps running unless a deadline was set
            // (its budget still applies) or the sandbox is killed; its output files go when it ends.
            log.debug("E2B emulator: client left the stream of {} pid {}: {}", sb.id, pid, e.toString());
        } finally {
            task.whenEnded(output::delete);
        }
    }

    /** Instant mode: the command is recorded, not run; the stream is start, an exit 0 end, end of stream. */
    private void instantStart(HttpExchange exchange, EmulatedSandbox sb, int pid, JsonNode request) throws IOException {
        JsonNode cmd = request.path("process").path("cmd");
        if (!cmd.isTextual() || cmd.textValue().isEmpty()) {
            streamError(exchange, new ConnectException("invalid_argument", "error starting process '': exec: no command"));
            return;
        }
        emulator.ledger().executed(sb.id, request.path("process").toString(), sb.egress().hostNetwork());
        exchange.getResponseHeaders().set("Content-Type", "application/connect+json");
        exchange.sendResponseHeaders(200, 0);
        try (OutputStream out = exchange.getResponseBody()) {
            Envelopes.write(out, Envelopes.FLAG_MESSAGE, event("start", JsonNodeFactory.instance.objectNode().put("pid", pid)));
            writeEnd(out, 0, true, "exit status 0", null);
            Envelopes.write(out, Envelopes.FLAG_END_STREAM, JsonNodeFactory.instance.objectNode());
        }
    }

    /** Follows one command: its output as data events while it runs, keepalives while it is quiet. */
    private final class Stream implements OutputFiles.Sink {
        private final OutputStream out;
        /** The dropped-stream fault applies: cut after the first output, or at the end if there is none. */
        final boolean drop;
        private final long keepaliveNanos;
        private long lastWrite = System.nanoTime();
        /** The fault: cut after the first output. */
        boolean dropNow;
        /** The emulator's own cap on a stream was reached and the command killed. */
        boolean capped;

        Stream(OutputStream out, boolean drop, Duration keepalive) {
            this.out = out;
            this.drop = drop;
            this.keepaliveNanos = keepalive.toNanos();
        }

        @Override
        public void accept(boolean stderr, byte[] chunk, int length) throws IOException {
            if (dropNow) {
                return;
            }
            ObjectNode data = JsonNodeFactory.instance.objectNode();
            data.put(stderr ? "stderr" : "stdout", Base64.getEncoder().encodeToString(Arrays.copyOf(chunk, length)));
            Envelopes.write(out, Envelopes.FLAG_MESSAGE, event("data", data));
            lastWrite = System.nanoTime();
            dropNow = drop;
        }

        /** The result, or null when the command was killed. */
        RunResult follow(Command task, OutputFiles output) throws IOException, InterruptedException, ExecutionException {
            while (true) {
                boolean read = output.pump(this);
                if (dropNow) {
                    return null;
                }
                if (!capped && Math.max(output.stdoutBytes(), output.stderrBytes()) > emulator.hardCapBytes) {
                    capped = true; // the emulator's safety cap, not E2B's: a flood nobody stops
                    task.kill();
                }
                try {
                    RunResult r = task.get(read ? Duration.ZERO : POLL);
                    output.drain(this);
                    return r;
                } catch (TimeoutException e) {
                    if (System.nanoTime() - lastWrite >= keepaliveNanos) {
                        Envelopes.write(out, Envelopes.FLAG_MESSAGE, event("keepalive", JsonNodeFactory.instance.objectNode()));
                        lastWrite = System.nanoTime();
                    }
                } catch (CancellationException e) {
                    task.awaitEnd(Duration.ofSeconds(10));
                    output.drain(this);
                    return null;
                }
            }
        }
    }

    /** protojson leaves zero values out: no exitCode for 0, no exited for false. */
    private static void writeEnd(OutputStream out, int exitCode, boolean exited, String status, String error) throws IOException {
        ObjectNode end = JsonNodeFactory.instance.objectNode();
        if (exitCode != 0) {
            end.put("exitCode", exitCode);
        }
        if (exited) {
            end.put("exited", true);
        }
        end.put("status", status);
        if (error != null) {
            end.put("error", error);
        }
        Envelopes.write(out, Envelopes.FLAG_MESSAGE, event("end", end));
    }

    private void hostile(OutputStream out) throws IOException {
        if (emulator.hostileFrameKind() == E2bEmulator.HostileFrame.GIGABYTE_FRAME) {
            Envelopes.writeHostile(out, 1L << 30, 1L << 30);
        } else {
            Envelopes.writeHostile(out, 0xFFFFFFFFL, 0xFFFFFFFFL);
        }
    }

    static ObjectNode event(String kind, ObjectNode body) {
        ObjectNode root = JsonNodeFactory.instance.objectNode();
        root.putObject("event").set(kind, body);
        return root;
    }

    private static ObjectNode endStreamError(String code, String message) {
        ObjectNode root = JsonNodeFactory.instance.objectNode();
        root.set("error", new ConnectException(code, message).json());
        return root;
    }

    /** A streaming call's error: HTTP 200, then only the end-of-stream frame carrying it. */
    private static void streamError(HttpExchange exchange, ConnectException e) throws IOException {
        exchange.getResponseHeaders().set("Content-Type", "application/connect+json");
        exchange.sendResponseHeaders(200, 0);
        try (OutputStream out = exchange.getResponseBody()) {
            Envelopes.write(out, Envelopes.FLAG_END_STREAM, endStreamError(e.code, e.getMessage()));
        }
    }

    static void unaryError(HttpExchange exchange, ConnectException e) throws IOException {
        Http.json(exchange, e.httpStatus(), e.json(), "application/json");
    }

    private static Duration timeout(String header) throws ConnectException {
        if (header == null || header.isBlank()) {
            return null;
        }
        long ms;
        try {
            ms = Long.parseLong(header.trim());
        } catch (NumberFormatException e) {
            throw new ConnectException("invalid_argument", "protocol error: invalid timeout \"" + header + "\"");
        }
        return ms > 0 ? Duration.ofMillis(ms) : null;
    }

    private static Duration keepalive(String header) {
        try {
            long s = header == null ? 0 : Long.parseLong(header.trim());
            return s > 0 ? Duration.ofSeconds(s) : DEFAULT_KEEPALIVE;
        } catch (NumberFormatException e) {
            return DEFAULT_KEEPALIVE;
        }
    }

    /** The Linux user from {@code Authorization: Basic base64(user:)}: user and root exist. */
    private static String checkUser(HttpExchange exchange) throws ConnectException {
        String auth = exchange.getRequestHeaders().getFirst("Authorization");
        if (auth == null) {
            return "user";
        }
        if (!auth.startsWith("Basic ")) {
            throw new ConnectException("unauthenticated", "invalid authorization header");
        }
        String decoded;
        try {
            decoded = new String(Base64.getDecoder().decode(auth.substring(6).trim()), StandardCharsets.UTF_8);
        } catch (IllegalArgumentException e) {
            throw new ConnectException("unauthenticated", "invalid authorization header");
        }
        String user = decoded.contains(":") ? decoded.substring(0, decoded.indexOf(':')) : decoded;
        if (!user.equals("user") && !user.equals("root")) {
            throw new ConnectException("unauthenticated", "error looking up user '" + user + "': user: unknown user " + user);
        }
        return user;
    }

    private Execution execution(JsonNode request, EmulatedSandbox sb, Machine w, OutputFiles output, Duration timeout)
            throws ConnectException {
        JsonNode process = request.get("process");
        if (process == null || !process.isObject()) {
            throw new ConnectException("invalid_argument", "process config is required");
        }
        JsonNode cmd = process.get("cmd");
        if (cmd == null || !cmd.isTextual() || cmd.textValue().isEmpty()) {
            throw new ConnectException("invalid_argument", "error starting process '': exec: no command");
        }
        List<String> argv = new ArrayList<>();
        argv.add(cmd.textValue());
        JsonNode args = process.get("args");
        if (args != null && !args.isNull()) {
            if (!args.isArray()) {
                throw new ConnectException("invalid_argument", "unmarshal message: args must be an array");
            }
            for (JsonNode a : args) {
                if (!a.isTextual()) {
                    throw new ConnectException("invalid_argument", "unmarshal message: args must be strings");
                }
                argv.add(a.textValue());
            }
        }
        Map<String, String> env = new LinkedHashMap<>();
        JsonNode envs = process.get("envs");
        if (envs != null && envs.isObject()) {
            envs.properties().forEach(e -> env.put(e.getKey(), e.getValue().asText()));
        }
        String cwd = "";
        JsonNode cwdNode = process.get("cwd");
        if (cwdNode != null && cwdNode.isTextual() && !cwdNode.textValue().isEmpty()) {
            String abs = Paths.resolve(cwdNode.textValue());
            String stored = Paths.storage(abs);
            boolean inHome = Paths.relativeToHome(abs) != null;
            boolean exists = Files.isDirectory(w.workDirectory().resolve(stored));
            if (inHome && !exists) {
                throw new ConnectException("invalid_argument", "cwd '" + abs + "' does not exist");
            }
            // outside the home: a directory files were uploaded into, else the sandbox's own (e.g. /tmp)
            cwd = inHome ? stored : exists ? w.workPath() + "/" + stored : abs;
        }
        Duration budget = timeout != null ? timeout : remaining(sb);
        try {
            return Commands.toExecution(argv, cwd, env, s -> sb.rewritePaths(s, w), output.inside, budget);
        } catch (IllegalArgumentException e) {
            throw new ConnectException("invalid_argument", "error starting process '" + String.join(" ", argv) + "': "
                    + e.getMessage());
        }
    }

    /** Without a deadline a command may run until the sandbox's own timeout kills the sandbox. */
    static Duration remaining(EmulatedSandbox sb) {
        Duration left = Duration.between(Instant.now(), sb.endAt());
        return left.compareTo(Duration.ofSeconds(1)) < 0 ? Duration.ofSeconds(1) : left.plusSeconds(1);
    }

    // ---------------------------------------------------------------- process.Process/SendSignal

    /** Whether a unary Connect call came as JSON; false after answering 415 as connect-go does. */
    static boolean acceptsJson(HttpExchange exchange) throws IOException {
        String contentType = exchange.getRequestHeaders().getFirst("Content-Type");
        if (contentType == null || !contentType.toLowerCase().startsWith("application/json")) {
            exchange.getResponseHeaders().set("Accept-Post", "application/json");
            Http.bytes(exchange, 415, new byte[0], null);
            return false;
        }
        return true;
    }

    /** A unary Connect call's JSON message (null for an empty body), up to 1 MiB. */
    static JsonNode unaryBody(HttpExchange exchange) throws ConnectException {
        try (InputStream in = exchange.getRequestBody()) {
            return Http.JSON.readTree(in.readNBytes(1 << 20));
        } catch (IOException e) {
            throw new ConnectException("invalid_argument", "unmarshal message: invalid JSON");
        }
    }

    private void sendSignal(HttpExchange exchange, EmulatedSandbox sb) throws IOException, InterruptedException {
        if (!Envd.acceptsJson(exchange)) {
            return;
        }
        try {
            JsonNode body = Envd.unaryBody(exchange);
            JsonNode pidNode = body == null ? null : body.path("process").get("pid");
            if (pidNode == null || !pidNode.canConvertToInt()) {
                throw new ConnectException("invalid_argument", "process selector is required");
            }
            JsonNode signal = body.get("signal");
            String name = signal == null ? "SIGNAL_UNSPECIFIED" : signal.isInt()
                    ? (signal.intValue() == 9 ? "SIGNAL_SIGKILL" : signal.intValue() == 15 ? "SIGNAL_SIGTERM" : "SIGNAL_UNSPECIFIED")
                    : signal.asText();
            if (!name.equals("SIGNAL_SIGKILL") && !name.equals("SIGNAL_SIGTERM")) {
                throw new ConnectException("unimplemented", "invalid signal: " + name);
            }
            int pid = pidNode.intValue();
            if (!sb.killCommand(pid, emulator.workspaces)) {
                throw new ConnectException("not_found", "process with pid " + pid + " not found");
            }
            log.debug("E2B emulator: {} pid {} killed by {}", sb.id, pid, name);
            Http.json(exchange, 200, JsonNodeFactory.instance.objectNode(), "application/json");
        } catch (ConnectException e) {
            unaryError(exchange, e);
        }
    }

    // ---------------------------------------------------------------- filesystem.Filesystem/ListDir

    // ---------------------------------------------------------------- /files

}
