package dev.sandbox4j.docker;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sandbox4j.api.Execution;
import dev.sandbox4j.api.RunRequest;
import dev.sandbox4j.api.RunResult;
import dev.sandbox4j.api.SandboxSpec;
import dev.sandbox4j.policy.EgressPolicy;
import dev.sandbox4j.policy.UnsupportedPolicyException;
import dev.sandbox4j.tck.CanaryListener;
import dev.sandbox4j.tck.ContractContext;
import java.net.InetAddress;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;

/**
 * The lock-down after trusted setup on the Docker runner, loopback only: the setup's egress is a CIDR list
 * admitting a canary on the host's loopback, reached through the runner's proxy (the container is on network
 * {@code none}; nothing else reaches the host's loopback). A process the setup leaves behind must be gone
 * before the code runs and reach nothing afterwards, also when the code's own list would still admit the
 * canary (then nothing but the kill stops it); the code's list replaces the setup's in the proxy; and what
 * the runner cannot lock down is refused before any call.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(180)
class DockerLockDownTest {
    private static final String A = "127.0.0.1";
    private static final String B = "127.0.0.2";

    private DockerSandboxRunner docker;
    private CanaryListener canaryA;
    private CanaryListener canaryB;

    @BeforeAll
    void start() throws Exception {
        canaryA = CanaryListener.start(InetAddress.getByName(A));
        canaryB = CanaryListener.start(InetAddress.getByName(B));
        docker = TestEngine.runner();
    }

    @AfterAll
    void stop() throws Exception {
        if (docker != null) {
            docker.close();
        }
        canaryA.close();
        canaryB.close();
    }

    private static EgressPolicy cidrs(String... addresses) {
        EgressPolicy.Builder b = EgressPolicy.builder(EgressPolicy.Default.DENY);
        for (String a : addresses) {
            b.allowCidr(a + "/32");
        }
        return b.build();
    }

    /**
     * A daemon (own session, every catchable signal ignored, streams detached) that tells the canary, through
     * the proxy, {@code <tag>-before} until the code's marker file exists and {@code <tag>-after} once it does,
     * touching a heartbeat file after every try. The setup returns once it reached the canary (the control).
     */
    private String setup(String tag, int port) {
        String daemon = "import os, signal, socket, sys, time\n"
                + ContractContext.pythonConnect()
                + "if os.fork() != 0:\n"
                + "    sys.exit(0)\n"
                + "os.setsid()\n"
                + "for n in range(1, 65):\n"
                + "    try:\n"
                + "        signal.signal(n, signal.SIG_IGN)\n"
                + "    except (OSError, ValueError):\n"
                + "        pass\n"
                + "null = os.open(os.devnull, os.O_RDWR)\n"
                + "for fd in (0, 1, 2):\n"
                + "    os.dup2(null, fd)\n"
                + "open('.daemon-pid', 'w').write(str(os.getpid()))\n"
                + "n = 0\n"
                + "while True:\n"
                + "    after = os.path.exists('.lockdown-done')\n"
                + "    try:\n"
                + "        s = tck_connect('" + A + "', " + port + ", 2)\n"
                + "        s.sendall(b'" + tag + "-' + (b'after' if after else b'before') + b'\\n' + b'z' * 64)\n"
                + "        s.close()\n"
                + "        open('.daemon-after' if after else '.daemon-reached', 'w').close()\n"
                + "    except OSError:\n"
                + "        pass\n"
                + "    n += 1\n"
                + "    open('.daemon-beat', 'w').write(str(n))\n"
                + "    time.sleep(0.05)\n";
        return "python3 - <<'DAEMON'\n" + daemon + "DAEMON\n"
                + "i=0; while [ ! -e .daemon-reached ]; do i=$((i+1)); [ $i -ge 400 ] && exit 3; sleep 0.05; done\n";
    }

    /**
     * The code: marks the lock-down done, then watches for 3 s whether the daemon's pid or heartbeat lives,
     * and while it lives, until it has reached the canary after the mark (so the canary's zero can fail).
     */
    private static final String WATCH = "import os, time\n"
            + "open('.lockdown-done', 'w').close()\n"
            + "def beat():\n"
            + "    try:\n"
            + "        return open('.daemon-beat').read()\n"
            + "    except OSError:\n"
            + "        return ''\n"
            + "pid = open('.daemon-pid').read().strip()\n"
            + "first = beat()\n"
            + "alive = os.path.exists('/proc/' + pid)\n"
            + "until = time.time() + 3\n"
            + "while time.time() < until and not os.path.exists('.daemon-after'):\n"
            + "    time.sleep(0.1)\n"
            + "    alive = alive or beat() != first\n"
            + "print('alive' if alive else 'gone')\n";

    private void assertDaemonGone(String tag, EgressPolicy codeEgress) {
        SandboxSpec spec = SandboxSpec.builder().setupEgress(cidrs(A, B)).egress(codeEgress)
                .setupCommand(setup(tag, canaryA.port())).setupBudget(Duration.ofSeconds(40)).build();
        RunResult r = docker.run(RunRequest.of(spec, Execution.builder(WATCH).budget(Duration.ofSeconds(30)).build()));
        assertTrue(canaryA.bytes(tag + "-before") > 0, "the setup's daemon did not reach the canary under the setup egress,"
                + " so a zero after the lock-down would prove nothing");
        assertEquals(0, r.exitCode().orElse(-1), () -> "the code failed: " + r);
        assertEquals(0, canaryA.bytes(tag + "-after"), "a process of the setup reached the canary after the lock-down");
        assertEquals("gone\n", r.stdout(), "a process the setup started outlived the lock-down: " + r);
    }

    @Test
    void aProcessTheSetupStartedIsGoneBeforeTheCodeUnderDenyAll() {
        assertDaemonGone("deny", EgressPolicy.denyAll());
    }

    /** The code's list still admits the canary: only the kill keeps the setup's daemon from it. */
    @Test
    void aProcessTheSetupStartedIsGoneBeforeTheCodeWhoseListStillAdmitsTheCanary() {
        assertDaemonGone("list", cidrs(A));
    }

    /** The proxy enforces the code's list after the lock-down: B (the setup's and the code's) yes, A (the setup's alone) no. */
    @Test
    void theCodesListReplacesTheSetupsInTheProxy() throws InterruptedException {
        String setup = ContractContext.bashOpenFd3(A, canaryA.port()) + "; printf 'swap-setup\\nx' >&3 && exec 3>&-";
        SandboxSpec spec = SandboxSpec.builder().setupEgress(cidrs(A, B)).egress(cidrs(B)).setupCommand(setup)
                .setupBudget(Duration.ofSeconds(30)).build();
        String code = "import os, socket\n" + ContractContext.pythonConnect()
                + "for tag, host, port in (('swap-a', '" + A + "', " + canaryA.port() + "), ('swap-b', '" + B + "', "
                + canaryB.port() + ")):\n"
                + "    try:\n"
                + "        s = tck_connect(host, port, 5)\n"
                + "        s.sendall(tag.encode() + b'\\n' + b'x' * 64)\n"
                + "        s.close()\n"
                + "        print(tag, 'sent')\n"
                + "    except OSError as e:\n"
                + "        print(tag, 'refused', e)\n";
        RunResult r = docker.run(RunRequest.of(spec, Execution.builder(code).budget(Duration.ofSeconds(30)).build()));
        assertTrue(canaryA.awaitBytes("swap-setup", 10_000), "the setup did not reach A under the setup egress: " + r);
        assertTrue(canaryB.awaitBytes("swap-b", 10_000), "the code did not reach B, which its list admits: " + r);
        assertEquals(0, canaryA.bytes("swap-a"), "the code reached A, which only the setup's list admitted: " + r);
        assertTrue(r.stdout().contains("swap-a refused"), r::toString);
    }

    /**
     * Deny-all for the setup, a list for the code: the container has the proxy's channel from the create on,
     * its proxy refusing everything during the setup, the code's list after.
     */
    @Test
    void aDenyAllSetupBeforeAListReachesNothingAndTheCodeItsList() throws InterruptedException {
        String setup = "(" + ContractContext.bashOpenFd3(B, canaryB.port()) + "; printf 'deny-setup\\nx' >&3) && exit 4;"
                + " exit 0";
        SandboxSpec spec = SandboxSpec.builder().setupEgress(EgressPolicy.denyAll()).egress(cidrs(B)).setupCommand(setup)
                .setupBudget(Duration.ofSeconds(30)).build();
        String code = "import os, socket\n" + ContractContext.pythonConnect()
                + "s = tck_connect('" + B + "', " + canaryB.port() + ", 5)\n"
                + "s.sendall(b'deny-code\\n' + b'x' * 64)\n"
                + "s.close()\n";
        RunResult r = docker.run(RunRequest.of(spec, Execution.builder(code).budget(Duration.ofSeconds(30)).build()));
        assertTrue(canaryB.awaitBytes("deny-code", 10_000), "the code did not reach B, which its list admits: " + r);
        assertEquals(0, canaryB.bytes("deny-setup"), "the setup reached B under deny-all");
    }

    @Test
    void whatTheRunnerCannotLockDownIsRefusedBeforeAnyCall() throws Exception {
        int before = TestEngine.driver(docker).labelledResources();
        // the tests' allow-all is the host network: no engine takes it from a live container
        UnsupportedPolicyException host = assertThrows(UnsupportedPolicyException.class, () -> docker.open(
                SandboxSpec.builder().setupEgress(EgressPolicy.allowAll()).egress(EgressPolicy.denyAll())
                        .setupCommand("true").build()));
        assertTrue(host.getMessage().contains("'host' network mode"), host::getMessage);
        // nothing gives a container on network none an interface
        UnsupportedPolicyException widen = assertThrows(UnsupportedPolicyException.class, () -> docker.open(
                SandboxSpec.builder().setupEgress(cidrs(A)).egress(EgressPolicy.allowAll()).setupCommand("true").build()));
        assertTrue(widen.getMessage().contains("to allow-all"), widen::getMessage);
        assertEquals(before, TestEngine.driver(docker).labelledResources());
    }
}
