package dev.sandbox4j.emulators.daytona;

import static dev.sandbox4j.emulators.HttpEmulator.object;
import static dev.sandbox4j.emulators.HttpEmulator.sendEmpty;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpExchange;
import dev.sandbox4j.api.Execution;
import dev.sandbox4j.api.OutputListener;
import dev.sandbox4j.api.RunResult;
import dev.sandbox4j.api.RunStatus;
import dev.sandbox4j.emulators.Machine;
import dev.sandbox4j.emulators.RecordedCall;
import dev.sandbox4j.emulators.WebSockets;
import dev.sandbox4j.emulators.daytona.internal.ToolboxScripts;
import dev.sandbox4j.emulators.daytona.internal.WireException;
import dev.sandbox4j.policy.Language;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The daemon's sessions ({@code /toolbox/{id}/process/session...}, daytonaio/daytona v0.190
 * {@code apps/daemon/pkg/session}): create (201), exec (202 {@code {cmdId}} with {@code runAsync},
 * else 200 when it ends), read a session or a command ({@code exitCode} once it ended), the command's
 * log (JSON {@code {output,stdout,stderr}}, or followed over a WebSocket by {@link ToolboxProxy}),
 * delete (204; kills the running command). Each command's log is what the daemon's shell labelers
 * write: every line of stdout after {@code 01 01 01}, every line of stderr after {@code 02 02 02}, a
 * last line without its newline given one. Commands run on the sandbox's machine one at a time, in
 * the home (the daemon's working directory), with files uploaded elsewhere linked into place first.
 *
 * <p>Simplified: the session is not one long-lived shell, so {@code cd} or variables do not carry over
 * between its commands; stdin is not served ({@code input} answers 404 as an unknown route).
 */
final class ToolboxSessions {
    static final byte[] STDOUT_MARK = {1, 1, 1};
    static final byte[] STDERR_MARK = {2, 2, 2};

    private final DaytonaEmulator emu;
    private final Toolbox toolbox;

    ToolboxSessions(DaytonaEmulator emu, Toolbox toolbox) {
        this.emu = emu;
        this.toolbox = toolbox;
    }

    /** One session of one sandbox. */
    static final class Session {
        final String id;
        final Map<String, Command> commands = new ConcurrentHashMap<>();
        volatile boolean deleted;

        Session(String id) {
            this.id = id;
        }
    }

    /** One command and its log, which followers read as it grows. */
    static final class Command {
        final String id;
        final String command;
        private final ByteArrayOutputStream log = new ByteArrayOutputStream();
        private final StringBuilder[] partial = {new StringBuilder(), new StringBuilder()};
        private final long maxBytes;
        private Integer exitCode;

        Command(String id, String command, long maxBytes) {
            this.id = id;
            this.command = command;
            this.maxBytes = maxBytes;
        }

        /** A chunk as the local machine hands it: labelled line by line, as the daemon's shell does. */
        synchronized void output(OutputListener.Stream stream, String text) {
            StringBuilder p = partial[stream.ordinal()];
            for (int i = 0; i < text.length(); i++) {
                char c = text.charAt(i);
                p.append(c);
                if (c == '\n') {
                    line(stream, p);
                }
            }
        }

        private void line(OutputListener.Stream stream, StringBuilder p) {
            byte[] b = p.toString().getBytes(StandardCharsets.UTF_8);
            p.setLength(0);
            if (log.size() + 3L + b.length <= maxBytes) {
                log.writeBytes(stream == OutputListener.Stream.STDOUT ? STDOUT_MARK : STDERR_MARK);
                log.writeBytes(b);
            }
            notifyAll();
        }

        /** The command ended: last lines get their newline, then the exit code is set. */
        synchronized void end(int exit) {
            for (OutputListener.Stream s : OutputListener.Stream.values()) {
                if (partial[s.ordinal()].length() > 0) {
                    partial[s.ordinal()].append('\n');
                    line(s, partial[s.ordinal()]);
                }
            }
            exitCode = exit;
            notifyAll();
        }

        synchronized Integer exitCode() {
            return exitCode;
        }

        synchronized byte[] log() {
            return log.toByteArray();
        }

        /**
         * The log's bytes from {@code offset} on, waiting up to {@code millis} for new ones; an empty
         * array once the command ended and all was read.
         */
        synchronized byte[] since(int offset, long millis) throws InterruptedException {
            if (log.size() <= offset && exitCode == null) {
                wait(millis);
            }
            byte[] all = log.toByteArray();
            return java.util.Arrays.copyOfRange(all, Math.min(offset, all.length), all.length);
        }

        ObjectNode toJson() {
            ObjectNode o = object().put("id", id).put("command", command);
            Integer e = exitCode();
            if (e != null) {
                o.put("exitCode", e);
            }
            return o;
        }
    }

    /** Routes {@code op} (after {@code /process/session}); false when it is not a session route. */
    boolean handle(HttpExchange exchange, RecordedCall call, EmulatedSandbox s, String method, String op) throws Exception {
        List<String> seg = DaytonaEmulator.segments(op);
        if (seg.isEmpty()) {
            if (method.equals("POST")) {
                create(exchange, call, s);
                return true;
            }
            if (method.equals("GET")) {
                ArrayNode a = dev.sandbox4j.emulators.HttpEmulator.JSON.createArrayNode();
                s.sessions.values().forEach(x -> a.add(sessionJson(x)));
                emu.sendJson(exchange, call, 200, a);
                return true;
            }
            return false;
        }
        Session session = s.sessions.get(seg.get(0));
        if (seg.size() == 1 && method.equals("GET")) {
            emu.sendJson(exchange, call, 200, sessionJson(existing(session)));
        } else if (seg.size() == 1 && method.equals("DELETE")) {
            delete(s, existing(session));
            call.status(204);
            sendEmpty(exchange, 204);
        } else if (seg.size() == 2 && seg.get(1).equals("exec") && method.equals("POST")) {
            exec(exchange, call, s, existing(session));
        } else if (seg.size() == 4 && seg.get(1).equals("command") && seg.get(3).equals("logs") && method.equals("GET")) {
            byte[] log = command(existing(session), seg.get(2)).log();
            emu.sendJson(exchange, call, 200, object().put("output", new String(log, StandardCharsets.UTF_8))
                    .put("stdout", new String(demux(log, STDOUT_MARK), StandardCharsets.UTF_8))
                    .put("stderr", new String(demux(log, STDERR_MARK), StandardCharsets.UTF_8)));
        } else if (seg.size() == 3 && seg.get(1).equals("command") && method.equals("GET")) {
            emu.sendJson(exchange, call, 200, command(existing(session), seg.get(2)).toJson());
        } else {
            return false;
        }
        return true;
    }

    private void create(HttpExchange exchange, RecordedCall call, EmulatedSandbox s) throws Exception {
        JsonNode body = toolbox.body(exchange, call);
        JsonNode id = body.path("sessionId");
        if (!id.isTextual() || id.asText().isEmpty()) {
            throw new WireException(400, "invalid request body: Key: 'CreateSessionRequest.SessionId' Error:Field"
                    + " validation for 'SessionId' failed on the 'required' tag", "INVALID_REQUEST_BODY");
        }
        if (s.sessions.putIfAbsent(id.asText(), new Session(id.asText())) != null) {
            throw new WireException(409, "session already exists", "CONFLICT");
        }
        call.status(201);
        sendEmpty(exchange, 201);
    }

    private void exec(HttpExchange exchange, RecordedCall call, EmulatedSandbox s, Session session) throws Exception {
        JsonNode body = toolbox.body(exchange, call);
        String command = body.path("command").asText("");
        if (command.isBlank()) {
            throw WireException.badRequest("command cannot be empty");
        }
        boolean async = body.path("runAsync").asBoolean(false) || body.path("async").asBoolean(false);
        Command c = new Command(UUID.randomUUID().toString(), command, emu.maxOutputBytes);
        session.commands.put(c.id, c);
        emu.ledger().executed(s.id, command, s.hostNetwork);
        String script = ToolboxScripts.session(command, List.copyOf(s.outsidePaths));
        Execution e = Execution.builder(script).language(Language.BASH).budget(emu.maxCommandTime)
                .outputLimit((int) Math.min(Integer.MAX_VALUE, emu.maxOutputBytes)).hardCapBytes(emu.maxOutputBytes)
                .stripControlCharacters(false).listener(c::output).build();
        if (async) {
            Thread t = new Thread(() -> run(s, c, e), "DaytonaEmulator-session-command");
            t.setDaemon(true);
            t.start();
            emu.sendJson(exchange, call, 202, object().put("cmdId", c.id));
            return;
        }
        run(s, c, e);
        byte[] log = c.log();
        ObjectNode answer = object().put("cmdId", c.id).put("output", new String(log, StandardCharsets.UTF_8))
                .put("stdout", new String(demux(log, STDOUT_MARK), StandardCharsets.UTF_8))
                .put("stderr", new String(demux(log, STDERR_MARK), StandardCharsets.UTF_8));
        answer.put("exitCode", c.exitCode());
        emu.sendJson(exchange, call, 200, answer);
    }

    /** Runs a command to its end on the machine; the exit code is what {@code $?} would be. */
    private void run(EmulatedSandbox s, Command c, Execution e) {
        int exit;
        if (emu.instant()) {
            exit = 0;
        } else {
            s.execLock.lock();
            try {
                Machine m = s.machine();
                RunResult r = m == null ? null : m.exec(e);
                exit = r == null ? 1 : r.status() == RunStatus.EXITED && r.exitCode().isPresent() ? r.exitCode().getAsInt() : 137;
            } catch (RuntimeException x) {
                DaytonaEmulator.log.debug("daytona emulator: session command in {} failed", s.id, x);
                exit = 1;
            } finally {
                s.execLock.unlock();
            }
        }
        c.end(exit);
        s.touch(java.time.Instant.now());
    }

    /** Deletes a session: its running command is killed, as the daemon signals the session's process group. */
    void delete(EmulatedSandbox s, Session session) {
        session.deleted = true;
        s.sessions.remove(session.id, session);
        boolean running = session.commands.values().stream().anyMatch(c -> c.exitCode() == null);
        Machine m = s.machine();
        if (running && m != null) {
            m.killRunning();
        }
    }

    private static Session existing(Session s) throws WireException {
        if (s == null || s.deleted) {
            throw new WireException(404, "session not found", "NOT_FOUND");
        }
        return s;
    }

    static Command command(Session s, String id) throws WireException {
        Command c = s.commands.get(id);
        if (c == null) {
            throw new WireException(404, "command not found", "NOT_FOUND");
        }
        return c;
    }

    private static ObjectNode sessionJson(Session s) {
        ObjectNode o = object().put("sessionId", s.id);
        ArrayNode cs = o.putArray("commands");
        s.commands.values().forEach(c -> cs.add(c.toJson()));
        return o;
    }

    /** One stream's bytes of a log (the daemon's {@code DemuxLogBytes}). */
    static byte[] demux(byte[] log, byte[] mark) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        boolean mine = false;
        for (int i = 0; i < log.length; i++) {
            if (i + 3 <= log.length && (log[i] == 1 || log[i] == 2) && log[i + 1] == log[i] && log[i + 2] == log[i]) {
                mine = log[i] == mark[0];
                i += 2;
                continue;
            }
            if (mine) {
                out.write(log[i]);
            }
        }
        return out.toByteArray();
    }

    /**
     * Follows a command's log over a WebSocket that {@link ToolboxProxy} accepted: binary frames with
     * the log's bytes as they are written, then a 1000 close once the command ended (at once when not
     * following). The client's close ends it early; its pings are answered.
     */
    static void follow(Command c, boolean follow, InputStream in, OutputStream out, Thread owner) {
        java.util.concurrent.atomic.AtomicBoolean closed = new java.util.concurrent.atomic.AtomicBoolean();
        Thread reader = new Thread(() -> {
            try {
                while (true) {
                    WebSockets.Frame f = WebSockets.readFrame(in);
                    if (f.opcode == WebSockets.CLOSE) {
                        break;
                    }
                    if (f.opcode == WebSockets.PING) {
                        synchronized (out) {
                            WebSockets.writeFrame(out, WebSockets.PONG, f.payload, 0, f.payload.length);
                        }
                    }
                }
            } catch (IOException e) {
                // the client went away
            }
            closed.set(true);
            owner.interrupt();
        }, "DaytonaEmulator-log-reader");
        reader.setDaemon(true);
        reader.start();
        int sent = 0;
        try {
            while (!closed.get()) {
                byte[] next = c.since(sent, 200);
                if (next.length > 0) {
                    synchronized (out) {
                        WebSockets.writeFrame(out, WebSockets.BINARY, next, 0, next.length);
                    }
                    sent += next.length;
                    continue;
                }
                if (!follow || c.exitCode() != null) {
                    break;
                }
            }
            if (!closed.get()) {
                synchronized (out) {
                    WebSockets.writeFrame(out, WebSockets.CLOSE, new byte[] {0x03, (byte) 0xe8}, 0, 2);
                }
            }
        } catch (InterruptedException | IOException e) {
            // the client closed, or the connection broke
        }
    }
}
