package dev.sandbox4j.docker;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sandbox4j.api.Execution;
import dev.sandbox4j.api.RunRequest;
import dev.sandbox4j.api.RunResult;
import dev.sandbox4j.api.RunStatus;
import dev.sandbox4j.api.Sandbox;
import dev.sandbox4j.api.exception.SandboxConfigurationException;
import dev.sandbox4j.api.exception.SandboxException;
import dev.sandbox4j.api.SandboxRunners;
import dev.sandbox4j.api.SandboxSpec;
import dev.sandbox4j.policy.Language;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;

/**
 * The Docker runner against a real engine: nothing is left on the engine (listed by the run-id label)
 * after a run, a session's close, an interrupt or a budget expiry; what a container holds is checked
 * from inside it; a missing image is an error naming the pull command.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(120)
class DockerSandboxRunnerTest {
    /** Live processes of uid 1000 other than the one asking, from /proc (zombies excluded). */
    static final String OTHERS = "import os\n"
            + "n = 0\n"
            + "for p in os.listdir('/proc'):\n"
            + "    if not p.isdigit() or int(p) == os.getpid(): continue\n"
            + "    try:\n"
            + "        st = dict(l.split(':', 1) for l in open('/proc/%s/status' % p) if ':' in l)\n"
            + "    except OSError:\n"
            + "        continue\n"
            + "    if st['Uid'].split()[0] == '1000' and not st['State'].strip().startswith('Z') and int(st['PPid']) != os.getpid():\n"
            + "        n += 1\n"
            + "print('others', n - 1)\n"; // minus the wrapper shell that runs this

    private DockerSandboxRunner docker;

    @BeforeAll
    void engine() {
        docker = TestEngine.runner();
    }

    @AfterAll
    void close() {
        if (docker != null) {
            docker.close();
        }
    }

    private int onEngine(String runId) throws InterruptedException {
        return docker.driver().labelledResources(runId);
    }

    @Test
    void aRunLeavesNoContainerAndNoVolume() throws Exception {
        RunResult r = docker.run(RunRequest.python("print('hi')"));
        assertEquals(RunStatus.EXITED, r.status());
        assertEquals("hi\n", r.stdout());
        String runId = r.sandboxId().replaceFirst("^sandbox4j-", "");
        assertEquals(0, onEngine(runId), "container or volume of " + r.sandboxId() + " left on the engine");
        assertEquals(0, docker.openSandboxes());
    }

    @Test
    void aSessionKeepsItsContainerUntilClose() throws Exception {
        String runId;
        try (Sandbox s = docker.open(SandboxSpec.defaults())) {
            runId = s.runId();
            assertEquals(2, onEngine(runId), "one container and its work volume while the session is open");
            assertEquals(0, s.exec(Execution.python("open('f', 'w').write('kept')")).exitCode().getAsInt());
            assertEquals("kept", s.exec(Execution.python("print(open('f').read())")).stdout().strip());
        }
        assertEquals(0, onEngine(runId), "the container and its volume are removed at close");
    }

    @Test
    void theBudgetKillsTheWholeTreeAndTheSessionGoesOn() throws Exception {
        String runId;
        try (Sandbox s = docker.open(SandboxSpec.defaults())) {
            runId = s.runId();
            // a double-forked daemon in its own session and process group, then an endless loop
            RunResult r = s.exec(Execution.builder("(setsid sh -c 'sleep 1000 & sleep 1000' &)\nsleep 0.2\nwhile :; do :; done")
                    .language(Language.BASH).budget(Duration.ofSeconds(2)).build());
            assertEquals(RunStatus.TIMED_OUT, r.status());
            RunResult after = s.exec(Execution.python(OTHERS));
            assertEquals("others 0\n", after.stdout(), "processes survived the budget: " + after);
        }
        assertEquals(0, onEngine(runId), "the container of a session whose exec timed out is removed at close");
        RunResult oneShot = docker.run(RunRequest.of(SandboxSpec.defaults(),
                Execution.builder("while True: pass").budget(Duration.ofSeconds(1)).build()));
        assertEquals(RunStatus.TIMED_OUT, oneShot.status());
        assertEquals(0, onEngine(oneShot.sandboxId().replaceFirst("^sandbox4j-", "")), "a timed-out run() leaves nothing");
    }

    @Test
    void nothingOutlivesAnExecThatReturns() throws Exception {
        try (Sandbox s = docker.open(SandboxSpec.defaults())) {
            RunResult r = s.exec(Execution.of(Language.BASH, "(setsid sh -c 'sleep 1000 &' &); nohup sleep 1000 >/dev/null 2>&1 &\necho started"));
            assertEquals("started\n", r.stdout());
            assertEquals("others 0\n", s.exec(Execution.python(OTHERS)).stdout());
        }
    }

    @Test
    void anInterruptRemovesTheContainer() throws Exception {
        AtomicReference<String> runId = new AtomicReference<>();
        AtomicReference<Throwable> thrown = new AtomicReference<>();
        AtomicReference<Thread> self = new AtomicReference<>();
        Thread worker = new Thread(() -> {
            try (Sandbox s = docker.open(SandboxSpec.defaults())) {
                runId.set(s.runId());
                s.exec(Execution.builder("import time\nprint('running', flush=True)\ntime.sleep(100)")
                        .budget(Duration.ofSeconds(60)).listener((stream, text) -> {
                            if (text.contains("running")) {
                                self.get().interrupt(); // the listener runs on the reader's thread
                            }
                        }).build());
            } catch (Throwable t) {
                thrown.set(t);
            }
        });
        self.set(worker);
        worker.start();
        worker.join(60_000);
        assertFalse(worker.isAlive());
        assertTrue(thrown.get() instanceof SandboxException, "interrupted exec: " + thrown.get());
        assertEquals(0, onEngine(runId.get()));
    }

    @Test
    void insideTheContainerCodeIsUnprivileged() {
        String code = "import os\n"
                + "st = dict(l.split(':', 1) for l in open('/proc/self/status') if ':' in l)\n"
                + "print(os.getuid(), os.getgid(), st['CapEff'].strip(), st['CapPrm'].strip(), st['CapAmb'].strip(), st['CapBnd'].strip(), st['NoNewPrivs'].strip())\n"
                + "print(os.getcwd(), sorted(os.listdir('/sys/class/net')))\n";
        // a session: no capability held; the bounding set keeps CAP_KILL (bit 5) for the runner's root kill
        // helper alone, and no-new-privileges means no execve can raise a capability from it
        try (dev.sandbox4j.api.Sandbox s = docker.open(dev.sandbox4j.api.SandboxSpec.defaults())) {
            assertEquals("1000 1000 0000000000000000 0000000000000000 0000000000000000 0000000000000020 1\n/sandbox ['lo']\n",
                    s.exec(dev.sandbox4j.api.Execution.python(code)).stdout());
        }
        // a one-shot (the code is the container's own process, and no kill helper runs in it): not even that
        assertEquals("1000 1000 0000000000000000 0000000000000000 0000000000000000 0000000000000000 1\n/sandbox ['lo']\n",
                docker.run(RunRequest.python(code)).stdout());
    }

    @Test
    void aMissingImageNamesThePullCommandAndNothingIsPulled() throws Exception {
        String image = "sandbox4j-test:missing-" + Long.toHexString(System.nanoTime());
        try (DockerSandboxRunner r = TestEngine.builder().image(image).build()) {
            SandboxConfigurationException e = assertThrows(SandboxConfigurationException.class,
                    () -> r.run(RunRequest.python("print(1)")));
            assertTrue(e.getMessage().contains("`docker pull " + image + "`"), e.getMessage());
            assertThrows(SandboxConfigurationException.class, r::verify, "still missing: the runner did not pull it");
        }
    }

    @Test
    void noEngineIsOneSentenceSayingWhatToStart() {
        try (DockerSandboxRunner r = DockerSandboxRunner.builder().dockerHost("unix:///nonexistent/sandbox4j-docker.sock").build()) {
            SandboxConfigurationException e = assertThrows(SandboxConfigurationException.class, r::verify);
            assertTrue(e.getMessage().contains("no Docker engine answers at unix:///nonexistent/sandbox4j-docker.sock")
                    && e.getMessage().contains("Docker Desktop"), e.getMessage());
        }
    }

    @Test
    void dockerIsFoundByName() {
        try (var r = SandboxRunners.byName("docker", java.util.Map.of("SANDBOX4J_DOCKER_IMAGE", TestEngine.image()))) {
            assertEquals("docker", r.capabilities().runner());
            assertTrue(r.toString().contains(TestEngine.image()), r.toString());
        }
    }

    @Test
    void autoChoosesDockerWhereTheLocalRunnerIsNotAvailableAndSaysSo() {
        // sandbox-local is not on this module's test classpath: auto() passes over it and takes Docker
        try (var r = SandboxRunners.auto(java.util.Map.of("SANDBOX4J_DOCKER_IMAGE", TestEngine.image()))) {
            assertEquals("docker", r.capabilities().runner());
            assertEquals("ok\n", r.run(RunRequest.python("print('ok')")).stdout());
        }
    }

    @Test
    void autoWithNeitherRunnerIsOneSentenceSayingWhatToInstall() {
        SandboxConfigurationException e = assertThrows(SandboxConfigurationException.class, () -> SandboxRunners.auto(
                java.util.Map.of("DOCKER_HOST", "unix:///nonexistent/sandbox4j-docker.sock")));
        assertTrue(e.getMessage().startsWith("no embedded sandbox runner can run code here: on Linux install bubblewrap"),
                e.getMessage());
        assertTrue(e.getMessage().contains("local: not on the classpath") && e.getMessage().contains("docker: docker: no Docker engine"),
                e.getMessage());
    }
}
