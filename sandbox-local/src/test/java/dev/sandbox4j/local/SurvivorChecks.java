package dev.sandbox4j.local;

import dev.sandbox4j.api.Execution;
import dev.sandbox4j.api.RunResult;
import dev.sandbox4j.api.Sandbox;
import dev.sandbox4j.api.SandboxSpec;
import dev.sandbox4j.api.RunStatus;
import dev.sandbox4j.policy.EgressPolicy;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * Code that tries to outlive its exec (issue 27, finding 1), for {@link SurvivorTest} (as the JVM's user)
 * and {@link SurvivorMain} (as a user that is not root, without cgroups). Each check starts a daemon
 * (double fork, setsid, every catchable signal ignored) that connects to a loopback listener of the
 * test's and holds the connection; on x86_64 the code then tries to take over the sandbox's PID 1 through
 * {@code /proc/1/mem} (clear its parent-death signal, report exit 0 to bubblewrap, keep reaping), as the
 * second review did. The daemon is dead when its connection reads end of stream: each check requires
 * that within {@link #DEAD_WITHIN} of the path that ends the exec. Plain exceptions (no JUnit), so the
 * checks run in a child JVM too.
 */
final class SurvivorChecks {
    /** An upper bound, not a wait: a dead daemon's connection ends at once. */
    static final Duration DEAD_WITHIN = Duration.ofSeconds(20);
    private static final int ACCEPT_MILLIS = 60_000;

    private SurvivorChecks() {
    }

    /**
     * The hostile code: {@code then} runs in the exec's first process once the daemon is connected
     * (and, on x86_64, after the attempt on PID 1, whose outcome it prints as {@code pid1 ...}).
     */
    static String code(int port, String then) {
        return "import errno, os, signal, socket, struct, sys, time\n"
                + "r, w = os.pipe()\n"
                + "pid = os.fork()\n"
                + "if pid == 0:\n"
                + "    os.setsid()\n"
                + "    if os.fork() != 0:\n"
                + "        os._exit(0)\n"
                + "    for s in range(1, 65):\n"
                + "        try:\n"
                + "            signal.signal(s, signal.SIG_IGN)\n"
                + "        except (OSError, ValueError):\n"
                + "            pass\n"
                + "    os.close(r)\n"
                + "    c = socket.create_connection(('127.0.0.1', " + port + "))\n"
                + "    c.sendall(b'alive\\n')\n"
                + "    os.write(w, b'x')\n"
                + "    os.close(w)\n"
                + "    while True:\n"
                + "        time.sleep(3600)\n"
                + "os.close(w)\n"
                + "os.waitpid(pid, 0)\n"
                + "os.read(r, 1)\n"
                + "def attack():\n"
                + "    if os.uname().machine != 'x86_64':\n"
                + "        return 'no attack on ' + os.uname().machine\n"
                + "    try:\n"
                + "        mem = os.open('/proc/1/mem', os.O_RDWR)\n"
                + "    except OSError as e:\n"
                + "        return 'mem ' + errno.errorcode[e.errno]\n"
                + "    pc = int(open('/proc/1/syscall').read().split()[-1], 16)\n"
                + "    efd = [int(f) for f in os.listdir('/proc/1/fd') if 'eventfd' in os.readlink('/proc/1/fd/' + f)]\n"
                + "    if not efd:\n"
                + "        return 'mem writable, no eventfd'\n"
                // prctl(PR_SET_PDEATHSIG, 0); write(efd, &1, 8) (bwrap reads exit 0); loop wait4(-1)
                + "    sc = bytes.fromhex('bf0100000031f6b89d0000000f056a01bf') + struct.pack('<i', efd[0])\n"
                + "    sc += bytes.fromhex('4889e6ba08000000b8010000000f05bfffffffff31f631d24531d2b83d0000000f05ebeb')\n"
                + "    os.pwrite(mem, sc, pc)\n"
                + "    return 'mem written'\n"
                + "print('pid1', attack(), flush=True)\n"
                + then;
    }

    /** A loopback listener the daemon connects to. */
    static final class Listener implements AutoCloseable {
        private final ServerSocket server;
        private Socket daemon;

        Listener() throws IOException {
            server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
            server.setSoTimeout(ACCEPT_MILLIS);
        }

        int port() {
            return server.getLocalPort();
        }

        /** Waits for the daemon's connection and its first line. */
        void connected() throws IOException {
            daemon = server.accept();
            daemon.setSoTimeout(ACCEPT_MILLIS);
            byte[] b = daemon.getInputStream().readNBytes(6);
            if (!"alive\n".equals(new String(b, StandardCharsets.US_ASCII))) {
                throw new AssertionError("the daemon did not report: " + new String(b, StandardCharsets.US_ASCII));
            }
        }

        /** Fails unless the daemon's connection ends (the daemon died) within {@link #DEAD_WITHIN}. */
        void assertDaemonDead(String when) throws IOException {
            if (daemon == null) {
                connected();
            }
            daemon.setSoTimeout((int) DEAD_WITHIN.toMillis());
            InputStream in = daemon.getInputStream();
            try {
                int b = in.read();
                if (b != -1) {
                    throw new AssertionError(when + ": the daemon is still sending (" + b + ")");
                }
            } catch (SocketTimeoutException e) {
                throw new AssertionError(when + ": the daemon is still alive " + DEAD_WITHIN.toSeconds() + " s later");
            } catch (IOException e) {
                // reset: closed by the kernel as its process died
            }
        }

        @Override
        public void close() throws IOException {
            if (daemon != null) {
                daemon.close();
            }
            server.close();
        }
    }

    private static Execution exec(String code, Duration budget) {
        return Execution.builder(code).budget(budget).build();
    }

    private static SandboxSpec allowAll() {
        return SandboxSpec.builder().egress(EgressPolicy.allowAll()).build();
    }

    private static void expect(boolean ok, String what, RunResult r) {
        if (!ok) {
            throw new AssertionError(what + ": " + r + " stdout=" + r.stdout() + " stderr=" + r.stderr());
        }
    }

    /** The code cannot open PID 1's memory for writing. */
    static void pid1IsNotWritable(LocalSandboxRunner runner) {
        try (Sandbox s = runner.open(SandboxSpec.defaults())) {
            RunResult r = s.exec(exec("import errno, os\n"
                    + "for f in ('/proc/1/mem', '/proc/1/syscall'):\n"
                    + "    try:\n"
                    + "        os.close(os.open(f, os.O_RDWR if f.endswith('mem') else os.O_RDONLY))\n"
                    + "        print(f, 'opened')\n"
                    + "    except OSError as e:\n"
                    + "        print(f, errno.errorcode[e.errno])\n", Duration.ofSeconds(60)));
            expect(r.succeeded() && r.stdout().equals("/proc/1/mem EACCES\n/proc/1/syscall EACCES\n"),
                    "PID 1 must not be dumpable", r);
        }
    }

    /** The code exits by itself (0, or what a taken-over PID 1 reports); its daemon is dead when exec returns. */
    static void normalExit(LocalSandboxRunner runner) throws IOException {
        try (Listener l = new Listener(); LocalSandbox s = runner.openLocal(allowAll())) {
            RunResult r = s.exec(exec(code(l.port(), "print('exiting')\n"), Duration.ofSeconds(60)));
            expect(r.status() == RunStatus.EXITED && r.stdout().contains("exiting"), "the code exits", r);
            l.assertDaemonDead("after the exec returned " + r.stdout().strip().replace('\n', ' '));
            // the lock-down: the next exec runs without network, and nothing of the last one is left
            s.setEgress(EgressPolicy.denyAll());
            RunResult next = s.exec(exec("print('locked')", Duration.ofSeconds(60)));
            expect(next.succeeded(), "the exec after setEgress", next);
        }
    }

    /** The budget runs out; the daemon is dead when exec returns. */
    static void budget(LocalSandboxRunner runner) throws IOException {
        try (Listener l = new Listener(); Sandbox s = runner.open(allowAll())) {
            RunResult r = s.exec(exec(code(l.port(), "time.sleep(3600)\n"), Duration.ofSeconds(6)));
            expect(r.status() == RunStatus.TIMED_OUT && r.stdout().contains("pid1"), "the budget ends the exec after the attack", r);
            l.assertDaemonDead("after the budget");
        }
    }

    /** The output cap is hit; the daemon is dead when exec returns. */
    static void outputCap(LocalSandboxRunner runner) throws IOException {
        try (Listener l = new Listener(); Sandbox s = runner.open(allowAll())) {
            RunResult r = s.exec(exec(code(l.port(), "while True:\n    sys.stdout.write('x' * 65536)\n"),
                    Duration.ofSeconds(60)));
            expect(r.status() == RunStatus.OUTPUT_LIMIT, "the output cap ends the exec", r);
            l.assertDaemonDead("after the output cap");
        }
    }

    /** The calling thread is interrupted mid-exec; the daemon is dead when exec returns. */
    static void interrupt(LocalSandboxRunner runner) throws Exception {
        try (Listener l = new Listener(); Sandbox s = runner.open(allowAll())) {
            CompletableFuture<Object> done = new CompletableFuture<>();
            Thread t = new Thread(() -> {
                try {
                    done.complete(s.exec(exec(code(l.port(), "time.sleep(3600)\n"), Duration.ofSeconds(600))));
                } catch (RuntimeException e) {
                    done.complete(e);
                }
            });
            t.start();
            l.connected();
            t.interrupt();
            done.get(60, TimeUnit.SECONDS);
            l.assertDaemonDead("after the interrupted exec returned");
        }
    }

    /** The sandbox is closed mid-exec; the daemon is dead when close returns. */
    static void close(LocalSandboxRunner runner) throws Exception {
        try (Listener l = new Listener()) {
            Sandbox s = runner.open(allowAll());
            CompletableFuture<Object> done = CompletableFuture.supplyAsync(() -> {
                try {
                    return s.exec(exec(code(l.port(), "time.sleep(3600)\n"), Duration.ofSeconds(600)));
                } catch (RuntimeException e) {
                    return e;
                }
            });
            l.connected();
            s.close();
            l.assertDaemonDead("after close()");
            done.get(60, TimeUnit.SECONDS);
        }
    }

    /** Every check by name, in order (for the child JVM). */
    static Map<String, Check> all() {
        Map<String, Check> m = new LinkedHashMap<>();
        m.put("pid1IsNotWritable", SurvivorChecks::pid1IsNotWritable);
        m.put("normalExit", SurvivorChecks::normalExit);
        m.put("budget", SurvivorChecks::budget);
        m.put("outputCap", SurvivorChecks::outputCap);
        m.put("interrupt", SurvivorChecks::interrupt);
        m.put("close", SurvivorChecks::close);
        return m;
    }

    interface Check {
        void run(LocalSandboxRunner runner) throws Exception;
    }
}
