package dev.sandbox4j.emulators.e2b;

import dev.sandbox4j.emulators.Machine;

import com.fasterxml.jackson.databind.JsonNode;
import com.sun.net.httpserver.HttpExchange;
import dev.sandbox4j.api.Execution;
import dev.sandbox4j.api.RunResult;
import dev.sandbox4j.api.RunStatus;
import dev.sandbox4j.emulators.HttpEmulator;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.CharsetDecoder;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
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
    /** The last line of a Python traceback: {@code Name: value} or {@code Name}. */
    private static final Pattern PYTHON_EXCEPTION = Pattern.compile("^([A-Za-z_][\\w.]*)(?::\\s?(.*))?$");
    /** Node's line naming an uncaught error: {@code TypeError: value}. */
    private static final Pattern NODE_EXCEPTION = Pattern.compile("^([A-Za-z_$][\\w$]*(?:Error|Exception))(?::\\s?(.*))?$");
    private static final int MAX_KEPT_STDERR = 1 << 20;
    private static final Duration POLL = Duration.ofMillis(20);

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
        String interpreter;
        String ext;
        String lang = language == null ? "python" : language.toLowerCase();
        switch (lang) {
            case "python":
                interpreter = "python3";
                ext = ".py";
                break;
            case "js":
            case "javascript":
                interpreter = "node";
                ext = ".js";
                break;
            case "bash":
                interpreter = "bash";
                ext = ".sh";
                break;
            default:
                Http.text(exchange, 404, "No default context for language " + language);
                return;
        }
        Map<String, String> env = new LinkedHashMap<>();
        JsonNode envVars = body.get("env_vars");
        if (envVars != null && envVars.isObject()) {
            envVars.properties().forEach(e -> env.put(e.getKey(), e.getValue().asText()));
        }
        if (emulator.instant()) {
            // instant mode: recorded, not run; the cell ends at once with no output
            emulator.ledger().executed(sb.id, code, sb.egress().hostNetwork());
            int count = sb.executions.incrementAndGet();
            exchange.sendResponseHeaders(200, 0);
            try (OutputStream out = exchange.getResponseBody()) {
                line(out, obj("type", "number_of_executions", "execution_count", count));
                line(out, obj("type", "end_of_execution"));
            }
            return;
        }
        Execution execution;
        Machine workspace;
        OutputFiles output;
        int pid = sb.nextPid.incrementAndGet();
        String cellFile;
        try {
            workspace = sb.workspace(emulator.workspaces);
            Machine w = workspace;
            output = new OutputFiles(workspace, pid);
            // a kernel takes any cell; as a file it may be larger than an argument and hold a NUL
            cellFile = output.cellFile(ext);
            workspace.writeFile(cellFile, code.getBytes(StandardCharsets.UTF_8));
            List<String> argv = List.of(interpreter, w.workPath() + "/" + cellFile);
            execution = Commands.toExecution(argv, "", env, c -> sb.rewritePaths(c, w), output.inside, Envd.remaining(sb));
        } catch (IllegalArgumentException | IOException e) {
            Http.text(exchange, 500, e.getMessage());
            return;
        } catch (IllegalStateException e) {
            HttpEmulator.cut(exchange);
            return;
        }
        emulator.ledger().executed(sb.id, code, sb.egress().hostNetwork());
        Command task = sb.startCommand(pid, workspace, execution, emulator.commands);
        int count = sb.executions.incrementAndGet();
        if (emulator.faults().takeLostExecResponse()) {
            exchange.close(); // before any answer: the JDK server drops the connection
            return;
        }

        exchange.sendResponseHeaders(200, 0); // the server sets no media type
        OutputStream out = exchange.getResponseBody();
        try {
            if (emulator.faults().hostileFraming()) {
                hostileLine(out);
                return;
            }
            Cell cell = new Cell(out, emulator.faults().takeDroppedStream());
            line(out, obj("type", "number_of_executions", "execution_count", count));
            RunResult result;
            try {
                result = cell.follow(task, output);
            } catch (ExecutionException e) {
                log.warn("E2B emulator: {} cell {}: the local sandbox failed: {}", sb.id, count, e.getCause().toString());
                line(out, obj("type", "error", "name", "UnexpectedEndOfExecution",
                        "value", "emulator: the local sandbox failed: " + e.getCause().getMessage(), "traceback", ""));
                line(out, obj("type", "end_of_execution"));
                out.close();
                return;
            }
            if (cell.drop) {
                log.debug("E2B emulator: dropping the /execute stream of {} (fault)", sb.id);
                HttpEmulator.cut(exchange);
                return;
            }
            if (result == null || result.status() == RunStatus.TIMED_OUT) {
                HttpEmulator.cut(exchange); // the sandbox is gone (killed or timed out)
                return;
            }
            String stderr = cell.stderr();
            boolean failed = cell.capped || result.status() != RunStatus.EXITED || result.exitCode().orElse(0) != 0;
            if (failed && !lang.equals("bash")) {
                StringBuilder before = new StringBuilder();
                Map<String, Object> error = error(result, stderr, lang.equals("python"), before);
                stream(out, "stderr", before.toString());
                line(out, error);
            } else {
                stream(out, "stderr", stderr);
            }
            line(out, obj("type", "end_of_execution"));
            out.close();
            log.debug("E2B emulator: {} cell {} ended: {} ({} + {} bytes)", sb.id, count, result.status(),
                    output.stdoutBytes(), output.stderrBytes());
        } catch (IOException e) {
            // The client went away: like the real server, interrupt the cell (the sandbox's files stay).
            try {
                sb.killCommand(pid, emulator.workspaces);
            } catch (InterruptedException ie) {
                Thread.currentThread().interrupt();
            }
            log.debug("E2B emulator: client left /execute of {}: {}", sb.id, e.toString());
        } finally {
            task.whenEnded(() -> {
                output.delete();
                output.deleteCellFile(cellFile);
            });
        }
    }

    /**
     * Follows one cell: stdout as {@code stdout} lines while it runs, keepalives while it is quiet;
     * stderr kept (bounded) for the end, where a failed cell reports it as the error's traceback.
     */
    private final class Cell implements OutputFiles.Sink {
        private final OutputStream out;
        final boolean drop;
        private final CharsetDecoder stdoutDecoder = decoder();
        private final CharsetDecoder stderrDecoder = decoder();
        private final ByteBuffer pending = ByteBuffer.allocate(OutputFiles.CHUNK + 8);
        private final ByteBuffer pendingErr = ByteBuffer.allocate(OutputFiles.CHUNK + 8);
        private final StringBuilder stderr = new StringBuilder();
        private long lastWrite = System.nanoTime();
        private boolean dropNow;
        boolean capped;

        Cell(OutputStream out, boolean drop) {
            this.out = out;
            this.drop = drop;
        }

        @Override
        public void accept(boolean isStderr, byte[] chunk, int length) throws IOException {
            if (dropNow) {
                return;
            }
            if (isStderr) {
                String text = decode(stderrDecoder, pendingErr, chunk, length, false);
                if (stderr.length() < MAX_KEPT_STDERR) {
                    stderr.append(text, 0, Math.min(text.length(), MAX_KEPT_STDERR - stderr.length()));
                }
                return;
            }
            String text = decode(stdoutDecoder, pending, chunk, length, false);
            if (!text.isEmpty()) {
                stream(out, "stdout", text);
                lastWrite = System.nanoTime();
                dropNow = drop;
            }
        }

        String stderr() {
            stderr.append(decode(stderrDecoder, pendingErr, new byte[0], 0, true));
            return stderr.toString();
        }

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
                    String rest = decode(stdoutDecoder, pending, new byte[0], 0, true);
                    if (!rest.isEmpty() && !dropNow) {
                        stream(out, "stdout", rest);
                    }
                    return r;
                } catch (TimeoutException e) {
                    if (System.nanoTime() - lastWrite >= emulator.interpreterKeepalive.toNanos()) {
                        line(out, obj("type", "keepalive"));
                        lastWrite = System.nanoTime();
                    }
                } catch (CancellationException e) {
                    if (capped) {
                        task.awaitEnd(Duration.ofSeconds(10));
                        output.drain(this);
                        return RunResult.builder().status(RunStatus.OUTPUT_LIMIT).build();
                    }
                    return null;
                }
            }
        }
    }

    private static CharsetDecoder decoder() {
        return StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPLACE)
                .onUnmappableCharacter(CodingErrorAction.REPLACE);
    }

    /** Decodes a chunk, keeping an incomplete character for the next one. */
    private static String decode(CharsetDecoder decoder, ByteBuffer pending, byte[] chunk, int length, boolean end) {
        pending.put(chunk, 0, length);
        pending.flip();
        CharBuffer chars = CharBuffer.allocate(pending.remaining() + 8);
        decoder.decode(pending, chars, end);
        if (end) {
            decoder.flush(chars);
        }
        pending.compact();
        chars.flip();
        return chars.toString();
    }

    private static void stream(OutputStream out, String type, String text) throws IOException {
        int off = 0;
        while (off < text.length()) {
            int end = Math.min(text.length(), off + OutputFiles.CHUNK);
            if (end < text.length() && Character.isHighSurrogate(text.charAt(end - 1))) {
                end--; // never split a surrogate pair across lines
            }
            line(out, obj("type", type, "text", text.substring(off, end),
                    "timestamp", Instant.now().truncatedTo(ChronoUnit.MICROS).toString()));
            off = end;
        }
    }

    /**
     * A failed cell's {@code error} line, and the stderr printed before the error, as a kernel reports
     * them: a Python traceback becomes the error (its last line is {@code Name: value}); a Python exit
     * without one was {@code sys.exit(n)}, a {@code SystemExit}.
     */
    private static Map<String, Object> error(RunResult result, String stderr, boolean python, StringBuilder before) {
        if (result.status() != RunStatus.EXITED) {
            before.append(stderr);
            return obj("type", "error", "name", "ExecutionAborted", "value", "the cell was killed (" + result.status() + ")",
                    "traceback", "");
        }
        String traceback = stderr;
        if (python) {
            int t = stderr.lastIndexOf("Traceback (most recent call last):");
            if (t < 0 && stderr.strip().matches("(?s).*\\n\\w*Error: [^\\n]*")) {
                t = stderr.indexOf("  File \""); // a SyntaxError has no Traceback header
            }
            if (t < 0) {
                before.append(stderr);
                String code = Integer.toString(result.exitCode().orElse(1));
                return obj("type", "error", "name", "SystemExit", "value", code, "traceback", "SystemExit: " + code);
            }
            before.append(stderr, 0, t);
            traceback = stderr.substring(t);
        }
        String[] lines = traceback.strip().split("\n");
        String name = "Error";
        String value = lines.length == 0 ? "" : lines[lines.length - 1].strip();
        for (int i = 0; i < lines.length; i++) {
            // Python's exception is its traceback's last line; Node's is the first line that names one
            String candidate = python ? lines[lines.length - 1 - i].strip() : lines[i].strip();
            Matcher m = (python ? PYTHON_EXCEPTION : NODE_EXCEPTION).matcher(candidate);
            if (m.matches()) {
                name = m.group(1);
                value = m.group(2) == null ? "" : m.group(2);
                break;
            }
            if (python) {
                break;
            }
        }
        return obj("type", "error", "name", name, "value", value, "traceback", traceback);
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
