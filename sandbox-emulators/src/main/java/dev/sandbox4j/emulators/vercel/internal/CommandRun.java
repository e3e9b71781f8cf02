package dev.sandbox4j.emulators.vercel.internal;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.List;

/**
 * One command of a session: its record ({@code Command} in the SDK's validators) and its output log,
 * which the wait stream and {@code /logs} read from the start while the command runs. The log keeps at
 * most {@code maxLogChars} characters; later output is counted and dropped, so memory stays bounded
 * whatever the command prints.
 */
public final class CommandRun {
    /** One {@code {"stream":..., "data":...}} line. */
    public static final class Chunk {
        private final String stream;
        private final String data;

        Chunk(String stream, String data) {
            this.stream = stream;
            this.data = data;
        }

        public String stream() {
            return stream;
        }

        public String data() {
            return data;
        }
    }

    /** What a reader gets: a chunk, the end of the command, or that the session went away. */
    public enum Next { CHUNK, FINISHED, SESSION_GONE }

    private static final int MAX_CHUNK_CHARS = 64 * 1024;

    private final String id;
    private final String name;
    private final List<String> args;
    private final String cwd;
    private final String sessionId;
    private final long startedAt;
    private final long maxLogChars;

    // guarded by this
    private final List<Chunk> log = new ArrayList<>();
    private long loggedChars;
    private long droppedChars;
    private Integer exitCode;
    private Long durationMs;
    private boolean sessionGone;
    private boolean endedWithSession;
    private Thread worker;
    private boolean executing;
    private int killSignal;

    public CommandRun(String id, String name, List<String> args, String cwd, String sessionId, long startedAt,
            long maxLogChars) {
        this.id = id;
        this.name = name;
        this.args = List.copyOf(args);
        this.cwd = cwd;
        this.sessionId = sessionId;
        this.startedAt = startedAt;
        this.maxLogChars = maxLogChars;
    }

    public String id() {
        return id;
    }

    public void stdout(String text) {
        append("stdout", text);
    }

    public void stderr(String text) {
        append("stderr", text);
    }

    private synchronized void append(String stream, String text) {
        for (int i = 0; i < text.length(); i += MAX_CHUNK_CHARS) {
            String part = text.substring(i, Math.min(text.length(), i + MAX_CHUNK_CHARS));
            if (loggedChars + part.length() > maxLogChars) {
                droppedChars += text.length() - i;
                break;
            }
            loggedChars += part.length();
            log.add(new Chunk(stream, part));
        }
        notifyAll();
    }

    /** Records the exit. Idempotent: the first exit wins. */
    public synchronized void finish(int code, long endedAt) {
        if (exitCode == null) {
            exitCode = code;
            durationMs = Math.max(0, endedAt - startedAt);
            worker = null;
            endedWithSession = sessionGone;
        }
        notifyAll();
    }

    /** The session stopped under this command: readers that have not seen its end get a stream error. */
    public synchronized void sessionGone() {
        sessionGone = true;
        notifyAll();
    }

    public synchronized boolean finished() {
        return exitCode != null;
    }

    public synchronized void worker(Thread t) {
        worker = t;
    }

    /** Marks the command as running in the machine (true) or back out of it (false). */
    public synchronized void executing(boolean on) {
        executing = on;
    }

    /**
     * Asks the command to die with {@code signal}. A command still queued behind another is
     * interrupted; one running in the machine is killed through {@code machineKill}, called under this
     * object's lock so that it cannot hit the next command. False when it had already ended.
     */
    public synchronized boolean kill(int signal, Runnable machineKill) {
        if (exitCode != null) {
            return false;
        }
        if (killSignal == 0) {
            killSignal = signal;
        }
        if (executing) {
            machineKill.run();
        } else if (worker != null) {
            worker.interrupt();
        }
        return true;
    }

    /** The signal a kill asked for, or 0. */
    public synchronized int killSignal() {
        return killSignal;
    }

    /**
     * Waits until the log has an entry at {@code index}, the command ended or the session went away.
     * A finished command is reported only after every logged chunk was read.
     */
    public synchronized Next await(int index, long timeoutMillis) throws InterruptedException {
        long deadline = System.nanoTime() + timeoutMillis * 1_000_000L;
        while (true) {
            if (index < log.size()) {
                return Next.CHUNK;
            }
            if (exitCode != null && !endedWithSession) {
                return Next.FINISHED;
            }
            if (sessionGone) {
                return Next.SESSION_GONE;
            }
            long left = (deadline - System.nanoTime()) / 1_000_000L;
            if (left <= 0) {
                return null;
            }
            wait(left);
        }
    }

    public synchronized Chunk chunk(int index) {
        return log.get(index);
    }

    /** Waits for the exit; false on timeout. */
    public synchronized boolean awaitFinished(long timeoutMillis) throws InterruptedException {
        long deadline = System.nanoTime() + timeoutMillis * 1_000_000L;
        while (exitCode == null) {
            long left = (deadline - System.nanoTime()) / 1_000_000L;
            if (left <= 0) {
                return false;
            }
            wait(left);
        }
        return exitCode != null;
    }

    public synchronized long droppedChars() {
        return droppedChars;
    }

    /** The {@code Command} object: {@code exitCode} null while running, {@code durationMs} once ended. */
    public synchronized ObjectNode json() {
        ObjectNode c = JsonNodeFactory.instance.objectNode();
        c.put("id", id);
        c.put("name", name);
        ArrayNode a = c.putArray("args");
        args.forEach(a::add);
        c.put("cwd", cwd);
        c.put("sessionId", sessionId);
        if (exitCode == null) {
            c.putNull("exitCode");
        } else {
            c.put("exitCode", exitCode);
        }
        c.put("startedAt", startedAt);
        if (durationMs != null) {
            c.put("durationMs", durationMs);
        }
        return c;
    }
}
