package dev.sandbox4j.emulators.modal.internal;

import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * One exec as the router knows it: what was asked (kept for the conformance record), and once it ended,
 * its output bytes and exit status. Output is complete when {@link #done()} completes: the local runner
 * hands it over at the end of the command, so stdio streams deliver it then.
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
    private volatile byte[] stdout = new byte[0];
    private volatile byte[] stderr = new byte[0];

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

    /** Records the end once; later calls (a terminate after the command ended) change nothing. */
    synchronized void finish(byte[] out, byte[] err, Exit exit) {
        if (done.isDone()) {
            return;
        }
        stdout = out;
        stderr = err;
        done.complete(exit);
    }

    public CompletableFuture<Exit> done() {
        return done;
    }

    /** The bytes of a descriptor (router enum: 0 stdout, 1 stderr); empty until done. */
    public byte[] output(int fd) {
        return fd == 0 ? stdout : stderr;
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
