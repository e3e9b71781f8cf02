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
 * log (once, or followed over a WebSocket by {@link ToolboxProxy}), delete (204; kills the running
 * command). Each command's log is what the daemon's shell labelers write: every line of stdout after
 * {@code 01 01 01}, every line of stderr after {@code 02 02 02}, a last line without its newline given
 * one. Commands run on the sandbox's machine one at a time, in the home (the daemon's working
 * directory), with files uploaded elsewhere linked into place first. An async command's stdin is held
 * open and never written (the daemon keeps it for {@code SendInput}), a sync one's is empty.
 *
 * <p>What a client gets depends on the SDK version it names, as in the daemon
 * ({@code pkg/session/common.go}, {@code toolbox/process/session/log.go} and {@code execute.go}): a
 * client that names none (and sends no {@code X-Daytona-Split-Output: true}) or one before 0.27 gets
 * the output merged, the labels stripped (the followed log too); from 0.167 on (or a {@code dev}
 * build) the log and a sync exec's answer carry {@code stdout} and {@code stderr} apart; in between,
 * or without a version but with the split header, the log is its labelled bytes as plain text.
 *
 * <p>Faults: a lost exec answer starts the command and drops the connection; a dropped stream cuts the
 * followed log after its first bytes (no close frame); hostile framing follows with an endless stdout
 * line.
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
            Format f = Format.of(exchange.getRequestHeaders()::getFirst);
            if (f.combined) {
                call.status(200);
                dev.sandbox4j.emulators.HttpEmulator.sendText(exchange, 200, new String(strip(log), StandardCharsets.UTF_8));
            } else if (f.skipServerDemux) {
                call.status(200);
                dev.sandbox4j.emulators.HttpEmulator.sendText(exchange, 200, new String(log, StandardCharsets.UTF_8));
            } else {
                emu.sendJson(exchange, call, 200, object().put("output", new String(log, StandardCharsets.UTF_8))
                        .put("stdout", new String(demux(log, STDOUT_MARK), StandardCharsets.UTF_8))
                        .put("stderr", new String(demux(log, STDERR_MARK), StandardCharsets.UTF_8)));
            }
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
        Format format = Format.of(exchange.getRequestHeaders()::getFirst);
        Command c = new Command(UUID.randomUUID().toString(), command, emu.maxOutputBytes);
        session.commands.put(c.id, c);
        emu.ledger().executed(s.id, withPrograms(s, command), s.hostNetwork);
        String script = ToolboxScripts.session(command, List.copyOf(s.outsidePaths), async);
        Execution e = Execution.builder(script).language(Language.BASH).budget(emu.maxCommandTime)
                .outputLimit((int) Math.min(Integer.MAX_VALUE, emu.maxOutputBytes)).hardCapBytes(emu.maxOutputBytes)
                .stripControlCharacters(false).listener(c::output).build();
        if (!emu.instant() && emu.faults().takeLostExecResponse()) {
            // the command runs on; the client hears nothing, not even a status line
            start(s, c, e);
            call.status(-1);
            dev.sandbox4j.emulators.HttpEmulator.drop(exchange);
            return;
        }
        if (async) {
            start(s, c, e);
            // Go marshals the response's nil pointers as null
            emu.sendJson(exchange, call, 202, object().put("cmdId", c.id).putNull("output").putNull("stdout")
                    .putNull("stderr").putNull("exitCode"));
            return;
        }
        run(s, c, e);
        byte[] log = c.log();
        ObjectNode answer = object().put("cmdId", c.id);
        if (format.combined) {
            answer.put("output", new String(strip(log), StandardCharsets.UTF_8)).putNull("stdout").putNull("stderr");
        } else if (format.skipServerDemux) {
            answer.put("output", new String(log, StandardCharsets.UTF_8)).putNull("stdout").putNull("stderr");
        } else {
            answer.put("output", new String(log, StandardCharsets.UTF_8))
                    .put("stdout", new String(demux(log, STDOUT_MARK), StandardCharsets.UTF_8))
                    .put("stderr", new String(demux(log, STDERR_MARK), StandardCharsets.UTF_8));
        }
        answer.put("exitCode", c.exitCode());
        emu.sendJson(exchange, call, 200, answer);
    }

    private void start(EmulatedSandbox s, Command c, Execution e) {
        Thread t = new Thread(() -> run(s, c, e), "DaytonaEmulator-session-command");
        t.setDaemon(true);
        t.start();
    }

    /**
     * What the ledger records of a session command: the command, then each uploaded file it names as
     * a word (the program a fixed command runs), so the record holds the code received.
     */
    private static String withPrograms(EmulatedSandbox s, String command) {
        StringBuilder b = new StringBuilder(command);
        List<String> words = List.of(command.split("\\s+"));
        s.uploaded.forEach((path, content) -> {
            if (words.contains(path)) {
                b.append('\n').append(new String(content, StandardCharsets.UTF_8));
            }
        });
        return b.toString();
    }

    /**
     * How the daemon answers a client, by the SDK version it names: {@code X-Daytona-SDK-Version}, else
     * a {@code X-Daytona-SDK-Version~<v>} WebSocket subprotocol (daemon {@code internal/util/version.go}).
     */
    static final class Format {
        /** Stream labels stripped: the output merged ({@code IsCombinedOutput}). */
        final boolean combined;
        /** The labelled log as plain text, no JSON of the streams apart ({@code SkipServerDemux}). */
        final boolean skipServerDemux;

        private Format(boolean combined, boolean skipServerDemux) {
            this.combined = combined;
            this.skipServerDemux = skipServerDemux;
        }

        /** @param header a request header by name (any case), or null when absent */
        static Format of(java.util.function.Function<String, String> header) {
            String version = header.apply("X-Daytona-SDK-Version");
            if (version == null || version.isEmpty()) {
                version = "";
                String protocols = header.apply("Sec-WebSocket-Protocol");
                for (String p : protocols == null ? new String[0] : protocols.split(",")) {
                    p = p.trim();
                    if (p.startsWith("X-Daytona-SDK-Version~")) {
                        version = p.substring("X-Daytona-SDK-Version~".length());
                        break;
                    }
                }
            }
            boolean dev = version.contains("dev");
            Integer vs27 = compare(version, 0, 27);
            boolean combined = (vs27 != null && vs27 < 0 && !dev)
                    || (version.isEmpty() && !"true".equals(header.apply("X-Daytona-Split-Output")));
            boolean skip;
            if (version.isEmpty()) {
                skip = true;
            } else if (dev) {
                skip = false;
            } else {
                Integer vs167 = compare(version, 0, 167);
                skip = vs167 == null || vs167 < 0;
            }
            return new Format(combined, skip);
        }

        /**
         * {@code version} against {@code major.minor.0-0} as Masterminds semver compares them (any
         * release or pre-release of that version or later is not below it); null when it does not parse.
         */
        static Integer compare(String version, int major, int minor) {
            String v = version.startsWith("v") ? version.substring(1) : version;
            int cut = v.length();
            for (char c : new char[] {'-', '+'}) {
                int i = v.indexOf(c);
                if (i >= 0) {
                    cut = Math.min(cut, i);
                }
            }
            String[] parts = v.substring(0, cut).split("\\.", -1);
            if (parts.length < 1 || parts.length > 3) {
                return null;
            }
            int[] n = new int[3];
            try {
                for (int i = 0; i < parts.length; i++) {
                    if (parts[i].isEmpty() || !parts[i].chars().allMatch(Character::isDigit)) {
                        return null;
                    }
                    n[i] = Integer.parseInt(parts[i]);
                }
            } catch (NumberFormatException e) {
                return null;
            }
            int c = n[0] != major ? Integer.compare(n[0], major) : Integer.compare(n[1], minor);
            return Integer.signum(c);
        }
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

    /** A log with its stream labels removed, as the daemon serves it to a client that gets the output merged. */
    static byte[] strip(byte[] log) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (int i = 0; i < log.length; i++) {
            if (i + 3 <= log.length && (log[i] == 1 || log[i] == 2) && log[i + 1] == log[i] && log[i + 2] == log[i]) {
                i += 2;
                continue;
            }
            out.write(log[i]);
        }
        return out.toByteArray();
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
     * the log's bytes as they are written (labels stripped when {@code combined}, a label split across
     * two reads held until it is whole), then a 1000 close once the command ended (at once when not
     * following). The client's close ends it early; its pings are answered. With {@code drop} the
     * connection is cut, without a close frame, once the first bytes went out (or the command ended);
     * with {@code hostile} an endless stdout line of up to {@code hostileBytes} goes out instead.
     */
    static void follow(Command c, boolean follow, boolean combined, boolean drop, boolean hostile, long hostileBytes,
            InputStream in, OutputStream out, Thread owner) {
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
        Stripper stripper = combined ? new Stripper() : null;
        try {
            if (hostile) {
                byte[] chunk = new byte[64 * 1024];
                java.util.Arrays.fill(chunk, (byte) 'x');
                chunk[0] = chunk[1] = chunk[2] = 1;
                for (long n = 0; n < hostileBytes && !closed.get(); n += chunk.length) {
                    synchronized (out) {
                        WebSockets.writeFrame(out, WebSockets.BINARY, chunk, 0, chunk.length);
                    }
                    chunk[0] = chunk[1] = chunk[2] = 'x';
                }
            }
            while (!closed.get() && !hostile) {
                byte[] next = c.since(sent, 200);
                if (next.length > 0) {
                    sent += next.length;
                    byte[] frame = stripper == null ? next : stripper.feed(next, false);
                    if (frame.length > 0) {
                        synchronized (out) {
                            WebSockets.writeFrame(out, WebSockets.BINARY, frame, 0, frame.length);
                        }
                        if (drop) {
                            return; // cut: the socket closes without a close frame
                        }
                    }
                    continue;
                }
                if (!follow || c.exitCode() != null) {
                    break;
                }
            }
            if (drop) {
                return;
            }
            if (stripper != null && !closed.get()) {
                byte[] rest = stripper.feed(new byte[0], true);
                if (rest.length > 0) {
                    synchronized (out) {
                        WebSockets.writeFrame(out, WebSockets.BINARY, rest, 0, rest.length);
                    }
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

    /**
     * Removes stream labels from a followed log as it is read, holding a label's first bytes until
     * the next read shows whether they are one (the daemon's {@code processLogChunkWithPrefixFiltering});
     * at the end what it held is output.
     */
    static final class Stripper {
        private byte[] held = new byte[0];

        byte[] feed(byte[] next, boolean end) {
            byte[] b = new byte[held.length + next.length];
            System.arraycopy(held, 0, b, 0, held.length);
            System.arraycopy(next, 0, b, held.length, next.length);
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            int i = 0;
            while (i < b.length) {
                if (b[i] == 1 || b[i] == 2) {
                    int run = 1;
                    while (run < 3 && i + run < b.length && b[i + run] == b[i]) {
                        run++;
                    }
                    if (run == 3) {
                        i += 3;
                        continue;
                    }
                    if (i + run == b.length && !end) {
                        break; // could be a label's start: held
                    }
                }
                out.write(b[i]);
                i++;
            }
            held = java.util.Arrays.copyOfRange(b, i, b.length);
            return out.toByteArray();
        }
    }
}
