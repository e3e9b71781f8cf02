package dev.sandbox4j.emulators.modal.internal;

import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * One exec as the router knows it: what was asked (kept for the conformance record), its output bytes
 * as the command writes them (the local runner's listener appends them while it runs, so stdio reads
 * deliver them then, as Modal's router does), its stdin as the client wrote it, and once it ended its
 * exit status. The output is complete when {@link #done()} completes.
 */
public final class Exec {
    private final String execId;
    private final String taskId;
    private final List<String> argv;
    private final int stdoutConfig;
    private final int stderrConfig;
    private final Integer timeoutSecs;
    private final String workdir;
    private final List<String> envNames;
    private final CompletableFuture<Exit> done = new CompletableFuture<>();
    private final java.io.ByteArrayOutputStream[] output = {new java.io.ByteArrayOutputStream(), new java.io.ByteArrayOutputStream()};
    private final java.io.ByteArrayOutputStream stdin = new java.io.ByteArrayOutputStream();
    private boolean stdinClosed;
    private volatile boolean takesStdin;
    /** Past this much stdin is refused (the emulator keeps it in memory). */
    static final int MAX_STDIN = 64 << 20;

    public Exec(String execId, String taskId, List<String> argv, int stdoutConfig, int stderrConfig, Integer timeoutSecs,
            String workdir, List<String> envNames) {
        this.execId = execId;
        this.taskId = taskId;
        this.argv = List.copyOf(argv);
        this.stdoutConfig = stdoutConfig;
        this.stderrConfig = stderrConfig;
        this.timeoutSecs = timeoutSecs;
        this.workdir = workdir;
        this.envNames = List.copyOf(envNames);
    }

    /** How a command ended: an exit code, or the signal that killed it. */
    public static final class Exit {
        private final Integer code;
        private final Integer signal;

        private Exit(Integer code, Integer signal) {
            this.code = code;
            this.signal = signal;
        }

        public static Exit code(int code) {
            return new Exit(code, null);
        }

        public static Exit signal(int signal) {
            return new Exit(null, signal);
        }

        public boolean isSignal() {
            return signal != null;
        }

        public int value() {
            return signal != null ? signal : code;
        }

        @Override
        public String toString() {
            return signal != null ? "signal " + signal : "code " + code;
        }
    }

    /**
     * Records the end once; later calls (a terminate after the command ended) change nothing. {@code out}
     * and {@code err} are the whole output as the machine's result holds it: what the listener already
     * appended stays, and only what lies past it is added (a machine that hands output over at the end).
     */
    synchronized void finish(byte[] out, byte[] err, Exit exit) {
        if (done.isDone()) {
            return;
        }
        byte[][] whole = {out, err};
        for (int fd = 0; fd < 2; fd++) {
            int have = output[fd].size();
            if (whole[fd].length > have) {
                output[fd].write(whole[fd], have, whole[fd].length - have);
            }
        }
        done.complete(exit);
        notifyAll();
    }

    /** Output the command wrote on {@code fd} (router enum: 0 stdout, 1 stderr), while it runs. */
    synchronized void append(int fd, byte[] bytes) {
        if (done.isDone() || bytes.length == 0) {
            return;
        }
        output[fd].write(bytes, 0, bytes.length);
        notifyAll();
    }

    public CompletableFuture<Exit> done() {
        return done;
    }

    /** The bytes of a descriptor so far (router enum: 0 stdout, 1 stderr). */
    public synchronized byte[] output(int fd) {
        return output[fd].toByteArray();
    }

    /**
     * The bytes of {@code fd} from {@code offset}, waiting up to {@code waitMillis} until there are some;
     * empty when there are none yet, null at the end (the exec ended and everything was read).
     */
    public synchronized byte[] read(int fd, long offset, long waitMillis) throws InterruptedException {
        long until = System.currentTimeMillis() + waitMillis;
        while (output[fd].size() <= offset && !done.isDone()) {
            long left = until - System.currentTimeMillis();
            if (left <= 0) {
                return new byte[0];
            }
            wait(left);
        }
        if (output[fd].size() <= offset) {
            return null;
        }
        byte[] all = output[fd].toByteArray();
        return java.util.Arrays.copyOfRange(all, (int) offset, all.length);
    }

    /**
     * Writes stdin at {@code offset} (a resend of bytes already taken is skipped, a gap refused), closing
     * it at {@code eof}. Returns null when taken, else why not.
     */
    public synchronized String writeStdin(long offset, byte[] data, boolean eof) {
        if (stdinClosed) {
            return data.length == 0 && eof ? null : "stdin is closed";
        }
        if (offset > stdin.size()) {
            return "offset " + offset + " is past the " + stdin.size() + " bytes written";
        }
        int skip = (int) Math.min(data.length, stdin.size() - offset);
        if (stdin.size() + (data.length - skip) > MAX_STDIN) {
            return "more than " + MAX_STDIN + " bytes of stdin";
        }
        stdin.write(data, skip, data.length - skip);
        if (eof) {
            stdinClosed = true;
            notifyAll();
        }
        return null;
    }

    /** Marks this exec as one that reads stdin (the filesystem tool's WriteFile). */
    void takeStdin() {
        takesStdin = true;
    }

    boolean takesStdin() {
        return takesStdin;
    }

    public synchronized long stdinWritten() {
        return stdin.size();
    }

    public synchronized boolean stdinClosed() {
        return stdinClosed;
    }

    /** Waits until stdin is closed (EOF) and returns it whole, or null when the exec ended first. */
    public synchronized byte[] awaitStdin(long waitMillis) throws InterruptedException {
        long until = System.currentTimeMillis() + waitMillis;
        while (!stdinClosed && !done.isDone()) {
            long left = until - System.currentTimeMillis();
            if (left <= 0) {
                return null;
            }
            wait(left);
        }
        return stdinClosed ? stdin.toByteArray() : null;
    }

    public String execId() {
        return execId;
    }

    public String taskId() {
        return taskId;
    }

    public List<String> argv() {
        return argv;
    }

    public int stdoutConfig() {
        return stdoutConfig;
    }

    public int stderrConfig() {
        return stderrConfig;
    }

    public Integer timeoutSecs() {
        return timeoutSecs;
    }

    public String workdir() {
        return workdir;
    }

    public List<String> envNames() {
        return envNames;
    }
}
