package dev.sandbox4j.emulators.vercel.internal;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.List;
import java.util.function.BooleanSupplier;

/**
 * One command of a session: its record ({@code Command} in the SDK's validators) and its output log,
 * which the wait stream and {@code /logs} read from the start while the command runs. The log keeps at
 * most {@code maxLogChars} characters; later output is counted and dropped, so memory stays bounded
 * whatever the command prints.
 *
 * <p>It also tracks where the command is in its worker's life (queued for the session's machine,
 * starting, in the machine, out of it), so that a kill takes effect whenever it arrives: before the
 * start the command never starts; in the machine its process is killed, also when the kill came
 * before the local runner had started that process; a worker is interrupted only while it waits for
 * the machine.
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

    /**
     * Where the command is: how a kill reaches it. {@code NEW}: its worker has not picked it up yet;
     * {@code QUEUED}: its worker waits for the machine (a kill interrupts that wait, and only that wait);
     * {@code STARTING}: its worker holds the machine and gets it ready (a kill is seen by
     * {@link #startExecuting()}); {@code EXECUTING}: the machine runs it (a kill goes to the machine);
     * {@code LEFT}: out of the machine, about to {@link #finish}.
     */
    private enum Phase { NEW, QUEUED, STARTING, EXECUTING, LEFT }

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
    private Phase phase = Phase.NEW;
    private Thread worker;
    private int killSignal;
    private boolean machineKilled;

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
            phase = Phase.LEFT;
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

    /**
     * The worker {@code t} starts waiting for the machine: a kill from now on interrupts it, until
     * {@link #dequeued()}. False when a kill came first: the command must not start.
     */
    public synchronized boolean queued(Thread t) {
        if (killSignal != 0 || exitCode != null) {
            return false;
        }
        worker = t;
        phase = Phase.QUEUED;
        return true;
    }

    /**
     * The worker holds the machine (or gave up waiting for it): no kill interrupts it any more, and an
     * interrupt a kill sent while it waited is cleared here, on the worker's thread, so it cannot reach
     * the machine's exec (which an interrupt tears down) nor the pool thread's next task.
     */
    public synchronized void dequeued() {
        worker = null;
        phase = Phase.STARTING;
        Thread.interrupted();
    }

    /**
     * Moves the command into the machine, atomically with the check for a kill: false when a kill came
     * before, and then the command must never start. From true on, a kill goes to the machine.
     */
    public synchronized boolean startExecuting() {
        if (killSignal != 0 || exitCode != null) {
            return false;
        }
        phase = Phase.EXECUTING;
        return true;
    }

    /** The machine's exec returned (or failed): a kill from now on only sets the exit code. */
    public synchronized void leftMachine() {
        phase = Phase.LEFT;
        notifyAll();
    }

    /**
     * Asks the command to die with {@code signal}; the first signal asked for is the one reported. A
     * command not started yet never starts ({@link #queued}, {@link #startExecuting()}), and one waiting
     * for the machine behind another is interrupted out of that wait. One in the machine is killed
     * through {@code machineKill}, called under this object's lock so that it cannot hit the next
     * command; when it kills nothing because the machine has not started the process yet, the kill is
     * pending ({@link #killPending()}) and {@link #retryKill} must follow. False when it had already ended.
     */
    public synchronized boolean kill(int signal, BooleanSupplier machineKill) {
        if (exitCode != null) {
            return false;
        }
        if (killSignal == 0) {
            killSignal = signal;
        }
        if (phase == Phase.QUEUED) {
            worker.interrupt();
        } else if (phase == Phase.EXECUTING && !machineKilled) {
            machineKilled = machineKill.getAsBoolean();
        }
        return true;
    }

    /** {@return whether a kill reached the machine before its process started, and is not done yet} */
    public synchronized boolean killPending() {
        return phase == Phase.EXECUTING && killSignal != 0 && !machineKilled;
    }

    /**
     * Retries a pending kill through {@code machineKill} every {@code pollMillis} until it kills the
     * process (as soon as the machine has started it) or the command leaves the machine. Blocks.
     *
     * @throws InterruptedException when the calling thread is interrupted (the emulator is closing)
     */
    public synchronized void retryKill(BooleanSupplier machineKill, long pollMillis) throws InterruptedException {
        while (killPending()) {
            machineKilled = machineKill.getAsBoolean();
            if (!machineKilled) {
                wait(pollMillis); // leftMachine() wakes it at once
            }
        }
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
