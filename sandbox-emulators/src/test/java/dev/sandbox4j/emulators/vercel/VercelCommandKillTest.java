package dev.sandbox4j.emulators.vercel;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.sandbox4j.api.Execution;
import dev.sandbox4j.api.RunResult;
import dev.sandbox4j.emulators.Machine;
import dev.sandbox4j.emulators.vercel.State.Session;
import dev.sandbox4j.emulators.vercel.internal.CommandRun;
import dev.sandbox4j.policy.EgressPolicy;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A kill takes effect at any point of a command's life (vercel.md section 7): the command is gone, its
 * exit code is 128 + the signal (137 for SIGKILL), the session's machine stays usable and nothing is
 * left running. The machines are the real local sandboxes, with an exec that can be held at its start,
 * before the local runner has started the process: the window a kill used to be lost in.
 */
class VercelCommandKillTest {
    private static final String TOKEN = VercelEmulatorWireTest.TOKEN;
    private static final String TEAM = VercelEmulatorWireTest.TEAM;

    private TestMachines local;
    private final List<HeldMachine> opened = new CopyOnWriteArrayList<>();
    private VercelEmulator emulator;
    private Wire wire;

    @BeforeEach
    void start() throws IOException {
        local = new TestMachines();
        Machine.Factory factory = new Machine.Factory() {
            @Override
            public Machine open(boolean hostNetwork, Map<String, String> env, Duration lifetime) {
                return open(hostNetwork ? EgressPolicy.allowAll() : EgressPolicy.denyAll(), env, lifetime);
            }

            @Override
            public Machine open(EgressPolicy egress, Map<String, String> env, Duration lifetime) {
                HeldMachine m = new HeldMachine(local.open(egress, env, lifetime));
                opened.add(m);
                return m;
            }

            @Override
            public void close() {
                local.close();
            }
        };
        emulator = VercelEmulator.builder().token(TOKEN).teamId(TEAM).projectId(VercelEmulatorWireTest.PROJECT)
                .machines(factory).build();
        wire = new Wire(emulator, TOKEN, TEAM);
    }

    @AfterEach
    void stop() throws InterruptedException {
        int live = emulator.ledger().live();
        int left = local.openLocalSandboxesSettled(Duration.ofSeconds(30));
        emulator.close();
        assertEquals(0, live, "sandboxes left running: " + emulator.ledger());
        assertEquals(0, left, "local sandboxes left open");
    }

    /**
     * The kill arrives once the command is in the machine but before the local runner started its
     * process (held here until the emulator has taken the kill): it must still kill it, and report 137.
     */
    @Test
    void killBeforeTheLocalProcessStartedKillsItOnceItStarts() throws Exception {
        String session = createSession();
        HeldMachine machine = opened.get(opened.size() - 1);
        machine.holdNextExecUntil(() -> killAsked(session));

        String id = startDetached(session, "echo up; sleep 60", true);
        assertTrue(machine.execEntered.await(30, TimeUnit.SECONDS), "the command never reached the machine");

        Wire.Response killed = kill(session, id, 9);
        assertEquals(200, killed.status, killed.body);
        assertEquals(137, killed.json().get("command").get("exitCode").asInt(), killed.body);

        JsonNode waited = wire.get(cmdPath(session, id), "wait=true").json().get("command");
        assertEquals(137, waited.get("exitCode").asInt(), waited.toString());
        assertTrue(waited.get("durationMs").isNumber(), waited.toString());
        assertSessionStillRunsCommands(session);
        assertEquals(200, wire.postEmpty("/v2/sandboxes/sessions/" + session + "/stop").status);
    }

    /**
     * A command queued behind another one and killed there never starts: 137 without running, and
     * the next command of the session runs normally (the kill's interrupt does not outlive it).
     */
    @Test
    void killOfAQueuedCommandNeverStartsIt() throws Exception {
        String session = createSession();
        String first = startDetached(session, "sleep 60", false);
        String queued = startDetached(session, "touch never-ran", false);
        Wire.Response killed = kill(session, queued, 9);
        assertEquals(137, killed.json().get("command").get("exitCode").asInt(), killed.body);
        assertEquals(137, kill(session, first, 9).json().get("command").get("exitCode").asInt());

        assertSessionStillRunsCommands(session);
        String ls = startDetached(session, "test -e never-ran; echo $?", false);
        assertEquals(0, wire.get(cmdPath(session, ls), "wait=true").json().get("command").get("exitCode").asInt());
        assertEquals("1\n", VercelEmulatorWireTest.stdout(Wire.lines(wire.stream(wire.request(
                cmdPath(session, ls) + "/logs", null).GET().build()).body()), "stdout"), "the killed command ran");
        assertEquals(200, wire.postEmpty("/v2/sandboxes/sessions/" + session + "/stop").status);
    }

    private String createSession() throws Exception {
        Wire.Response r = wire.post("/v3/sandboxes", VercelEmulatorWireTest.CREATE_A);
        assertEquals(200, r.status, r.body);
        return r.json().get("session").get("id").asText();
    }

    private String startDetached(String session, String script, boolean sudo) throws Exception {
        Wire.Response r = wire.post("/v2/sandboxes/sessions/" + session + "/cmd", "{\"command\":\"bash\",\"args\":[\"-c\","
                + Wire.JSON.writeValueAsString(script) + "],\"env\":{},\"sudo\":" + sudo + ",\"timeout\":50000}");
        assertEquals(200, r.status, r.body);
        JsonNode cmd = r.json().get("command");
        assertTrue(cmd.get("exitCode").isNull(), r.body);
        return cmd.get("id").asText();
    }

    private Wire.Response kill(String session, String id, int signal) throws Exception {
        return wire.post(cmdPath(session, id) + "/kill", "{\"signal\":" + signal + "}");
    }

    private static String cmdPath(String session, String id) {
        return "/v2/sandboxes/sessions/" + session + "/cmd/" + id;
    }

    /** The machine is still there and free: a new command runs to its own exit code. */
    private void assertSessionStillRunsCommands(String session) throws Exception {
        String id = startDetached(session, "exit 4", false);
        JsonNode done = wire.get(cmdPath(session, id), "wait=true").json().get("command");
        assertEquals(4, done.get("exitCode").asInt(), done.toString());
    }

    /** Whether the emulator has taken a kill for some command of the session. */
    private boolean killAsked(String session) {
        Session s = emulator.sessions.get(session);
        List<CommandRun> runs;
        synchronized (s) {
            runs = List.copyOf(s.commands.values());
        }
        return runs.stream().anyMatch(r -> r.killSignal() != 0);
    }

    /** A local sandbox whose next exec can be held before it reaches the local runner. */
    static final class HeldMachine implements Machine {
        final Machine delegate;
        final CountDownLatch execEntered = new CountDownLatch(1);
        private volatile BooleanSupplier release;

        HeldMachine(Machine delegate) {
            this.delegate = delegate;
        }

        /** Holds the next exec until {@code release} is true (at most 30 s, then it goes on anyway). */
        void holdNextExecUntil(BooleanSupplier release) {
            this.release = release;
        }

        @Override
        public RunResult exec(Execution execution) {
            BooleanSupplier r = release;
            if (r != null) {
                release = null;
                execEntered.countDown();
                long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
                while (!r.getAsBoolean() && System.nanoTime() < end) {
                    try {
                        Thread.sleep(5);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                        break;
                    }
                }
            }
            return delegate.exec(execution);
        }

        @Override
        public boolean killRunning() {
            return delegate.killRunning();
        }

        @Override
        public String workPath() {
            return delegate.workPath();
        }

        @Override
        public java.nio.file.Path workDirectory() {
            return delegate.workDirectory();
        }

        @Override
        public void writeFile(String relativePath, byte[] content) throws IOException {
            delegate.writeFile(relativePath, content);
        }

        @Override
        public void writeFile(String relativePath, byte[] content, int mode) throws IOException {
            delegate.writeFile(relativePath, content, mode);
        }

        @Override
        public void mkdir(String relativePath) throws IOException {
            delegate.mkdir(relativePath);
        }

        @Override
        public dev.sandbox4j.api.SandboxFile readFile(String relativePath, long maxBytes) throws IOException {
            return delegate.readFile(relativePath, maxBytes);
        }

        @Override
        public List<dev.sandbox4j.api.FileEntry> listFiles(String relativeDirectory) throws IOException {
            return delegate.listFiles(relativeDirectory);
        }

        @Override
        public void setNetwork(boolean hostNetwork) {
            delegate.setNetwork(hostNetwork);
        }

        @Override
        public void setEgress(EgressPolicy egress) {
            delegate.setEgress(egress);
        }

        @Override
        public boolean isClosed() {
            return delegate.isClosed();
        }

        @Override
        public void close() {
            delegate.close();
        }
    }
}
