package dev.sandbox4j.emulators.vercel;

import static dev.sandbox4j.emulators.HttpEmulator.JSON;
import static dev.sandbox4j.emulators.HttpEmulator.cut;
import static dev.sandbox4j.emulators.HttpEmulator.drop;
import static dev.sandbox4j.emulators.HttpEmulator.object;
import static dev.sandbox4j.emulators.HttpEmulator.sendJson;
import static dev.sandbox4j.emulators.vercel.VercelPaths.SESSION_CWD;
import static dev.sandbox4j.emulators.vercel.VercelWire.body;
import static dev.sandbox4j.emulators.vercel.VercelWire.expect;
import static dev.sandbox4j.emulators.vercel.VercelWire.sendError;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpExchange;
import dev.sandbox4j.api.Execution;
import dev.sandbox4j.api.OutputListener;
import dev.sandbox4j.api.RunResult;
import dev.sandbox4j.api.RunStatus;
import dev.sandbox4j.api.exception.SandboxInterruptedException;
import dev.sandbox4j.emulators.Machine;
import dev.sandbox4j.emulators.vercel.Requests.BadRequest;
import dev.sandbox4j.emulators.vercel.Requests.CommandParams;
import dev.sandbox4j.emulators.vercel.State.Session;
import dev.sandbox4j.emulators.vercel.internal.CommandLine;
import dev.sandbox4j.emulators.vercel.internal.CommandRun;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A session's commands ({@code /v2/sandboxes/sessions/{id}/cmd...}): run, with or without
 * {@code wait}/{@code logs} as NDJSON, get with {@code wait}, logs and kill. Each command runs on the
 * session's machine on a worker thread, one at a time, under the network policy in force when it starts.
 * A kill takes effect whenever it arrives and answers once the command is gone, with 128 + the signal
 * as its exit code (137 for SIGKILL; the local sandbox kills with SIGKILL whatever the signal): a
 * command not started yet never starts, and one whose process the local runner was still starting is
 * killed as soon as that process exists.
 */
final class Commands {
    private static final Logger log = LoggerFactory.getLogger(VercelEmulator.class);
    /** How often a kill that came before the local process started is tried again, until it has started. */
    private static final long KILL_RETRY_MILLIS = 5;
    private final VercelEmulator emu;

    Commands(VercelEmulator emu) {
        this.emu = emu;
    }

    void route(HttpExchange ex, String method, Session s, List<String> sub, Map<String, String> query)
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

    private void runCommand(HttpExchange ex, Session s) throws Exception {
        JsonNode body = body(ex);
        if (body == null || !emu.running(ex, s)) {
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
        CommandRun run = new CommandRun("cmd_" + emu.random(24), p.command, p.args, cwd, s.id, now, emu.maxLogChars);
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
            emu.ledger().executed(s.id, String.join(" ", argv), s.policy.grantsHostNetwork());
        }
        boolean dropStream = !emu.instant() && p.wait && emu.faults().takeDroppedStream();
        boolean hostile = !emu.instant() && p.wait && emu.faults().hostileFraming();
        if (emu.instant()) {
            run.finish(0, now); // recorded, not run: it ended as it started
        } else {
            // the output goes to the command's log as the machine hands it over, so the wait stream and
            // /logs send it while the command runs, as Vercel does (not at the end)
            Execution execution = CommandLine.toExecution(p.command, p.args, env, p.cwd, s::machinePath,
                    s.machine.workPath(), Duration.ofMillis(budgetMs), emu.maxLogChars).toBuilder()
                    .listener((stream, text) -> {
                        if (stream == OutputListener.Stream.STDOUT) {
                            run.stdout(text);
                        } else {
                            run.stderr(text);
                        }
                    }).build();
            emu.workers.execute(() -> execute(s, run, execution));
        }
        if (emu.faults().takeLostExecResponse()) {
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
        int code;
        try {
            if (!run.queued(Thread.currentThread())) {
                throw new InterruptedException(); // killed before its worker picked it up
            }
            try {
                s.execLock.lockInterruptibly(); // a kill while queued behind another command interrupts this
            } finally {
                run.dequeued(); // from here on no kill interrupts this thread
            }
            try {
                synchronized (s) {
                    if (s.status.equals("stopped")) {
                        throw new InterruptedException();
                    }
                }
                s.applyEgress(); // the policy in force when the command starts
                if (!run.startExecuting()) {
                    throw new InterruptedException(); // killed before it started: it never starts
                }
                try {
                    code = runOn(s.machine, execution, run);
                } finally {
                    run.leftMachine();
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

    /**
     * Runs one command on the machine, its output going to the command's log as it is written (the
     * execution's listener); the exit code (137 for
     * the per-command timeout's SIGKILL, or a kill without a code).
     */
    private static int runOn(Machine machine, Execution execution, CommandRun run) throws InterruptedException {
        RunResult r;
        try {
            r = machine.exec(execution);
        } catch (SandboxInterruptedException e) {
            // the local runner tore the sandbox down; the emulator only gets here when stopping
            throw new InterruptedException("interrupted");
        }
        // the output already reached the log through the execution's listener, chunk by chunk
        return r.status() == RunStatus.TIMED_OUT ? 137 : r.exitCode().orElse(137);
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
        if (run.kill(sig, s.machine::killRunning)) {
            if (run.killPending()) {
                // in the machine, whose local runner had not started the process yet: kill it as soon
                // as it has, on a worker of its own so that the kill holds after this answer too
                retryKill(s, run);
            }
            // The local sandbox kills with SIGKILL whatever the signal; answer once it is gone.
            run.awaitFinished(10_000);
        }
        ObjectNode out = object();
        out.set("command", run.json());
        sendJson(ex, 200, out);
    }

    /** Retries the machine kill of {@code run} until its process is killed or it left the machine. */
    private void retryKill(Session s, CommandRun run) {
        try {
            emu.workers.execute(() -> {
                try {
                    run.retryKill(s.machine::killRunning, KILL_RETRY_MILLIS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt(); // the emulator is closing; its stop kills the command
                } catch (RuntimeException e) {
                    // the machine is going away, and its close kills the command
                    log.debug("VercelEmulator: could not kill {}: {}", run.id(), e.toString());
                }
            });
        } catch (java.util.concurrent.RejectedExecutionException e) {
            log.debug("VercelEmulator: closing; {} dies with its machine", run.id());
        }
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

    private static final byte[] NEWLINE = {'\n'};
}
