package dev.sandbox4j.emulators.e2b;

import com.fasterxml.jackson.databind.JsonNode;
import com.sun.net.httpserver.HttpExchange;
import dev.sandbox4j.api.Execution;
import dev.sandbox4j.api.RunResult;
import dev.sandbox4j.api.RunStatus;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CancellationException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeoutException;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The code interpreter on port 49999: {@code POST /execute} answers with NDJSON lines as the
 * template's FastAPI server writes them (Python's {@code json.dumps}: {@code ", "} and {@code ": "}
 * separators, non-ASCII escaped), keepalives while the cell runs, and {@code end_of_execution} last.
 *
 * <p>Each cell runs as a fresh process ({@code python3 -c}, {@code node -e} or {@code bash -c}), so
 * unlike a Jupyter kernel no state is kept between cells and the value of a last expression is not
 * shown as a {@code result}.
 */
final class Interpreter {
    private static final Logger log = LoggerFactory.getLogger(Interpreter.class);
    private static final Pattern EXCEPTION_LINE = Pattern.compile("^([A-Za-z_][\\w.]*)(?::\\s?(.*))?$");
    private static final int CHUNK = 32 * 1024;

    private final E2bEmulator emulator;

    Interpreter(E2bEmulator emulator) {
        this.emulator = emulator;
    }

    void handle(HttpExchange exchange, EmulatedSandbox sb) throws Exception {
        String method = exchange.getRequestMethod();
        String path = exchange.getRequestURI().getRawPath();
        if (method.equals("GET") && path.equals("/health")) {
            Http.json(exchange, 200, Http.JSON.getNodeFactory().textNode("OK"), "application/json");
            return;
        }
        if (!(method.equals("POST") && path.equals("/execute"))) {
            Http.json(exchange, 404, Http.JSON.createObjectNode().put("detail", "Not Found"), "application/json");
            return;
        }
        JsonNode body;
        try (InputStream in = exchange.getRequestBody()) {
            body = Http.JSON.readTree(in.readNBytes(8 << 20));
        } catch (IOException e) {
            Http.json(exchange, 422, Http.JSON.createObjectNode().put("detail", "invalid JSON body"), "application/json");
            return;
        }
        if (body == null || !body.path("code").isTextual()) {
            Http.json(exchange, 422, Http.JSON.createObjectNode().put("detail", "field required: code"), "application/json");
            return;
        }
        String contextId = text(body.get("context_id"));
        String language = text(body.get("language"));
        if (contextId != null && language != null) {
            Http.text(exchange, 400, "Only one of context_id or language can be provided");
            return;
        }
        if (contextId != null) {
            Http.text(exchange, 404, "Context " + contextId + " not found");
            return;
        }
        String code = body.get("code").textValue();
        List<String> argv;
        String lang = language == null ? "python" : language.toLowerCase();
        switch (lang) {
            case "python":
                argv = List.of("python3", "-c", code);
                break;
            case "js":
            case "javascript":
                argv = List.of("node", "-e", code);
                break;
            case "bash":
                argv = List.of("bash", "-c", code);
                break;
            default:
                Http.text(exchange, 404, "No default context for language " + language);
                return;
        }
        Map<String, String> env = new LinkedHashMap<>();
        JsonNode envVars = body.get("env_vars");
        if (envVars != null && envVars.isObject()) {
            envVars.fields().forEachRemaining(e -> env.put(e.getKey(), e.getValue().asText()));
        }
        Execution execution;
        Workspace workspace;
        try {
            workspace = sb.workspace(emulator.workspaces);
            Workspace w = workspace;
            execution = Commands.toExecution(argv, "", env, c -> sb.rewritePaths(c, w), Envd.remaining(sb),
                    emulator.outputLimitChars, emulator.hardCapBytes);
        } catch (IllegalArgumentException e) {
            Http.text(exchange, 500, e.getMessage());
            return;
        } catch (IllegalStateException e) {
            E2bEmulator.cutConnection(exchange);
            return;
        }
        int pid = sb.nextPid.incrementAndGet();
        Command[] self = new Command[1];
        Command task = new Command(pid, workspace, execution, () -> sb.processes.remove(pid, self[0]));
        self[0] = task;
        sb.processes.put(pid, task);
        task.start(emulator.commands);
        int count = sb.executions.incrementAndGet();

        exchange.sendResponseHeaders(200, 0); // the server sets no media type
        OutputStream out = exchange.getResponseBody();
        try {
            if (emulator.faults().hostileFraming()) {
                hostileLine(out);
                return;
            }
            boolean drop = emulator.faults().takeDroppedStream();
            line(out, obj("type", "number_of_executions", "execution_count", count));
            RunResult result;
            try {
                result = await(task, out);
            } catch (ExecutionException e) {
                log.warn("E2B emulator: {} cell {}: the local sandbox failed: {}", sb.id, count, e.getCause().toString());
                line(out, obj("type", "error", "name", "UnexpectedEndOfExecution",
                        "value", "emulator: the local sandbox failed: " + e.getCause().getMessage(), "traceback", ""));
                line(out, obj("type", "end_of_execution"));
                out.close();
                return;
            }
            if (result == null || result.status() == RunStatus.TIMED_OUT) {
                E2bEmulator.cutConnection(exchange); // the sandbox is gone (killed or timed out)
                return;
            }
            boolean failed = result.status() != RunStatus.EXITED || result.exitCode().orElse(0) != 0;
            boolean sent = stream(out, "stdout", result.stdout(), drop);
            if (drop) {
                log.debug("E2B emulator: dropping the /execute stream of {} (fault)", sb.id);
                E2bEmulator.cutConnection(exchange);
                return;
            }
            if (failed && !lang.equals("bash")) {
                line(out, error(result));
            } else {
                sent |= stream(out, "stderr", result.stderr(), false);
            }
            line(out, obj("type", "end_of_execution"));
            out.close();
            log.debug("E2B emulator: {} cell {} ended: {} (output sent: {})", sb.id, count, result.status(), sent);
        } catch (IOException e) {
            // The client went away: like the real server, interrupt the cell (the sandbox's files stay).
            try {
                sb.killCommand(pid, emulator.workspaces);
            } catch (InterruptedException ie) {
                Thread.currentThread().interrupt();
            }
            log.debug("E2B emulator: client left /execute of {}: {}", sb.id, e.toString());
        }
    }

    /** Waits for the cell, writing a keepalive line at the interval: a failed write means the client left. */
    private RunResult await(Command task, OutputStream out) throws IOException, InterruptedException, ExecutionException {
        while (true) {
            try {
                return task.get(emulator.interpreterKeepalive);
            } catch (TimeoutException e) {
                line(out, obj("type", "keepalive"));
            } catch (CancellationException e) {
                return null;
            }
        }
    }

    private static boolean stream(OutputStream out, String type, String text, boolean stopAfterFirst) throws IOException {
        boolean any = false;
        int off = 0;
        while (off < text.length()) {
            int end = Math.min(text.length(), off + CHUNK);
            if (end < text.length() && Character.isHighSurrogate(text.charAt(end - 1))) {
                end--; // never split a surrogate pair across lines
            }
            line(out, obj("type", type, "text", text.substring(off, end),
                    "timestamp", Instant.now().truncatedTo(ChronoUnit.MICROS).toString()));
            any = true;
            if (stopAfterFirst) {
                return true;
            }
            off = end;
        }
        return any;
    }

    /** The exception line Python prints last: {@code Name: value}. */
    private static Map<String, Object> error(RunResult result) {
        String stderr = result.stderr();
        String last = "";
        String[] lines = stderr.strip().split("\n");
        if (lines.length > 0) {
            last = lines[lines.length - 1].strip();
        }
        String name = "Error";
        String value = last;
        Matcher m = EXCEPTION_LINE.matcher(last);
        if (last.isEmpty() && result.status() == RunStatus.EXITED) {
            name = "SystemExit"; // sys.exit(n) prints nothing; a kernel reports it as an error
            value = Integer.toString(result.exitCode().orElse(1));
        } else if (m.matches()) {
            name = m.group(1);
            value = m.group(2) == null ? "" : m.group(2);
        } else if (result.status() != RunStatus.EXITED) {
            name = "ExecutionAborted";
            value = "the cell was killed (" + result.status() + ")";
        }
        return obj("type", "error", "name", name, "value", value, "traceback", stderr);
    }

    private void hostileLine(OutputStream out) throws IOException {
        byte[] prefix = "{\"type\": \"stdout\", \"text\": \"".getBytes(StandardCharsets.US_ASCII);
        out.write(prefix);
        byte[] chunk = new byte[64 * 1024];
        Arrays.fill(chunk, (byte) 'A');
        long total = 1L << 30;
        for (long sent = prefix.length; sent < total; sent += chunk.length) {
            out.write(chunk, 0, (int) Math.min(chunk.length, total - sent));
        }
        out.flush();
    }

    private static Map<String, Object> obj(Object... kv) {
        Map<String, Object> m = new LinkedHashMap<>();
        for (int i = 0; i < kv.length; i += 2) {
            m.put((String) kv[i], kv[i + 1]);
        }
        return m;
    }

    /** One line as Python's {@code json.dumps} writes it, then a newline, flushed. */
    private static void line(OutputStream out, Map<String, Object> fields) throws IOException {
        StringBuilder sb = new StringBuilder("{");
        for (Map.Entry<String, Object> e : fields.entrySet()) {
            if (sb.length() > 1) {
                sb.append(", ");
            }
            sb.append(Http.JSON.writeValueAsString(e.getKey())).append(": ")
                    .append(Http.JSON.writeValueAsString(e.getValue()));
        }
        sb.append("}\n");
        out.write(asciiOnly(sb).getBytes(StandardCharsets.US_ASCII));
        out.flush();
    }

    /** Python's ensure_ascii: every non-ASCII character as a backslash-u escape (only strings hold any). */
    private static String asciiOnly(CharSequence json) {
        StringBuilder sb = new StringBuilder(json.length());
        for (int i = 0; i < json.length(); i++) {
            char c = json.charAt(i);
            if (c < 0x80) {
                sb.append(c);
            } else {
                sb.append(String.format("\\u%04x", (int) c));
            }
        }
        return sb.toString();
    }

    private static String text(JsonNode n) {
        return n == null || n.isNull() || !n.isTextual() ? null : n.textValue();
    }
}
