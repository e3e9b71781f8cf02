package dev.sandbox4j.docker;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sandbox4j.api.Execution;
import dev.sandbox4j.api.RunRequest;
import dev.sandbox4j.api.RunResult;
import dev.sandbox4j.api.RunStatus;
import dev.sandbox4j.api.Sandbox;
import dev.sandbox4j.api.SandboxSpec;
import dev.sandbox4j.policy.Language;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;

/**
 * Hostile code against the Docker runner's containment (issue 27): code that kills the wrapper that ran
 * it, or every process it can, leaves nothing alive past its exec; vsock sockets and io_uring are denied
 * by the runner's own seccomp profile while the families the runner needs still work.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(180)
class DockerContainmentTest {
    /** Daemons in their own sessions, output detached (so the exec's stream ends), and a CPU burner. */
    private static final String DAEMONS = "nohup setsid sleep 1000 >/dev/null 2>&1 &\n"
            + "nohup setsid sleep 1001 >/dev/null 2>&1 &\n"
            + "(setsid sh -c 'while :; do :; done' >/dev/null 2>&1 &)\n";

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

    @Test
    void codeThatKillsItsWrapperLeavesNothingAlive() throws Exception {
        try (Sandbox s = docker.open(SandboxSpec.defaults())) {
            RunResult r = s.exec(Execution.builder(DAEMONS + "kill -9 $PPID\necho after").language(Language.BASH)
                    .budget(Duration.ofSeconds(20)).build());
            assertNotEquals(RunStatus.TIMED_OUT, r.status(), "the stream ends with the wrapper: " + r);
            RunResult after = s.exec(Execution.python(DockerSandboxRunnerTest.OTHERS));
            assertEquals("others 0\n", after.stdout(), "processes outlived an exec whose wrapper was killed: " + after);
        }
    }

    @Test
    void codeThatKillsEveryProcessItCanLeavesNothingAlive() throws Exception {
        try (Sandbox s = docker.open(SandboxSpec.defaults())) {
            // the wrapper and everything else of the uid first, then the daemons, then a budget expiry
            RunResult r = s.exec(Execution.builder("kill -9 -1\n" + DAEMONS + "while :; do :; done").language(Language.BASH)
                    .budget(Duration.ofSeconds(3)).build());
            // the engine ends the stream about 2 s after the wrapper dies, so this is EXITED 137 or TIMED_OUT
            assertTrue(r.status() == RunStatus.TIMED_OUT || r.exitCode().orElse(0) == 137, r.toString());
            RunResult after = s.exec(Execution.python(DockerSandboxRunnerTest.OTHERS));
            assertEquals("others 0\n", after.stdout(), "processes outlived a budget expiry: " + after);
            // and at end of stream: the code kills every process it can, leaves daemons and returns
            RunResult quick = s.exec(Execution.builder("kill -9 -1\n" + DAEMONS + "echo done").language(Language.BASH)
                    .budget(Duration.ofSeconds(20)).build());
            assertEquals("done\n", quick.stdout(), quick.toString());
            RunResult after2 = s.exec(Execution.python(DockerSandboxRunnerTest.OTHERS));
            assertEquals("others 0\n", after2.stdout(), "processes outlived an exec that killed its wrapper: " + after2);
        }
    }

    @Test
    void aSurvivorThatForksToThePidsLimitEndsWithTheContainer() throws Exception {
        Sandbox s = docker.open(SandboxSpec.defaults());
        try {
            // kills its wrapper, then fills the pids limit with sleeping children: no exec can start after it
            RunResult r = s.exec(Execution.builder("import os, time\n"
                    + "os.kill(os.getppid(), 9)\n"
                    + "os.close(1); os.close(2)\n"
                    + "while True:\n"
                    + "    try:\n"
                    + "        if os.fork() == 0:\n"
                    + "            time.sleep(1000); os._exit(0)\n"
                    + "    except OSError:\n"
                    + "        time.sleep(0.01)\n").budget(Duration.ofSeconds(20)).build());
            // the kill helper either ends every process or cannot start, and then the container is killed
            RunResult next;
            try {
                next = s.exec(Execution.python(DockerSandboxRunnerTest.OTHERS));
            } catch (dev.sandbox4j.api.exception.SandboxNotFoundException gone) {
                assertTrue(gone.getMessage().contains("killed"), gone.getMessage());
                return;
            }
            assertEquals("others 0\n", next.stdout(), "after " + r + ": " + next);
        } finally {
            s.close();
        }
    }

    @Test
    void vsockAndIoUringAreDeniedAndTheFamiliesCodeNeedsWork() {
        RunResult r = docker.run(RunRequest.python("import ctypes, socket\n"
                + "libc = ctypes.CDLL(None, use_errno=True)\n"
                + "libc.syscall.restype = ctypes.c_long\n"
                + "def sock(family, kind):\n"
                + "    fd = libc.socket(family, kind, 0)\n"
                + "    e = ctypes.get_errno()\n"
                + "    if fd >= 0: libc.close(fd)\n"
                + "    return 'ok' if fd >= 0 else 'denied'\n"
                + "params = ctypes.create_string_buffer(120)\n"
                + "fd = libc.syscall(425, 4, params)\n" // io_uring_setup on x86_64 and aarch64 alike
                + "print('io_uring', 'ok' if fd >= 0 else 'denied')\n"
                + "print('vsock', sock(40, socket.SOCK_STREAM), sock(40, socket.SOCK_DGRAM))\n"
                + "print('packet', sock(17, socket.SOCK_RAW))\n"
                + "print('unix', sock(1, socket.SOCK_STREAM), 'inet', sock(2, socket.SOCK_STREAM), 'inet6', sock(10, socket.SOCK_DGRAM),"
                + " 'netlink', sock(16, socket.SOCK_RAW))\n"));
        assertEquals(RunStatus.EXITED, r.status(), r.toString());
        assertEquals("io_uring denied\nvsock denied denied\npacket denied\nunix ok inet ok inet6 ok netlink ok\n", r.stdout(),
                r.toString());
    }
}
