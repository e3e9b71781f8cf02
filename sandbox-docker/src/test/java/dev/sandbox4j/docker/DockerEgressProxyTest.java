package dev.sandbox4j.docker;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.sun.net.httpserver.HttpServer;
import dev.sandbox4j.api.Execution;
import dev.sandbox4j.api.RunRequest;
import dev.sandbox4j.api.RunResult;
import dev.sandbox4j.api.RunStatus;
import dev.sandbox4j.api.Sandbox;
import dev.sandbox4j.api.SandboxSpec;
import dev.sandbox4j.api.exception.SandboxConfigurationException;
import dev.sandbox4j.egress.EgressResolver;
import dev.sandbox4j.policy.EgressPolicy;
import dev.sandbox4j.policy.Limits;
import dev.sandbox4j.policy.UnsupportedPolicyException;
import dev.sandbox4j.tck.CanaryListener;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * Issue 31 on the Docker runner, loopback only: {@code allow=allowed.test} through the container's
 * proxy (network {@code none}, the socket bind-mounted, the forwarder run by the container's first
 * process), the refusals the code sees, and no route to a listener on the host's loopback; a network
 * allowance shared by the setup's proxy and the code's, and refused with allow-all.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class DockerEgressProxyTest {
    HttpServer http;
    CanaryListener hostCanary;
    final Queue<String> seen = new ConcurrentLinkedQueue<>();
    DockerSandboxRunner runner;

    @BeforeAll
    void start() throws IOException {
        InetAddress lo = InetAddress.getLoopbackAddress();
        http = HttpServer.create(new InetSocketAddress(lo, 0), 16);
        http.createContext("/", ex -> {
            ex.getRequestBody().transferTo(OutputStream.nullOutputStream()); // an upload is read whole before the answer
            seen.add(ex.getRequestMethod() + " " + ex.getRequestURI() + " host=" + ex.getRequestHeaders().getFirst("Host"));
            byte[] body = ("hello " + ex.getRequestURI().getPath()).getBytes(StandardCharsets.UTF_8);
            ex.sendResponseHeaders(200, body.length);
            try (OutputStream out = ex.getResponseBody()) {
                out.write(body);
            }
        });
        http.start();
        hostCanary = CanaryListener.start(lo);
        InetSocketAddress at = new InetSocketAddress(lo, http.getAddress().getPort());
        runner = TestEngine.runner(b -> b.egressProxy(p -> p
                .resolver(EgressResolver.fixed(Map.of("other.test", List.of(lo), "rebind.test", List.of(lo))))
                .route("allowed.test", 80, at)));
    }

    @AfterAll
    void stop() throws IOException {
        if (runner != null) {
            runner.close();
        }
        http.stop(0);
        hostCanary.close();
    }

    private static String get(String tag, String url) {
        return "try:\n"
                + "    r = urllib.request.urlopen('" + url + "', timeout=20)\n"
                + "    print('" + tag + " OK', r.status, r.read().decode())\n"
                + "except urllib.error.HTTPError as e:\n"
                + "    print('" + tag + " HTTP', e.code, e.headers.get('X-Sandbox4j-Egress-Refusal'))\n"
                + "except Exception as e:\n"
                + "    print('" + tag + " ERR', type(e).__name__)\n";
    }

    @Test
    void allowAllowedTestReachesItsServerAndEverythingElseIsRefused() throws Exception {
        String code = "import socket, urllib.request, urllib.error\n"
                + get("allowed", "http://allowed.test/hi")
                + get("other", "http://other.test/hi")
                + get("raw", "http://127.0.0.1:" + http.getAddress().getPort() + "/raw")
                + get("rebind", "http://rebind.test/hi")
                + "try:\n"
                + "    s = socket.create_connection(('127.0.0.1', " + hostCanary.port() + "), timeout=5)\n"
                + "    s.sendall(b'direct\\n' + b'x' * 1024)\n"
                + "    s.close()\n"
                + "    print('direct SENT')\n"
                + "except Exception as e:\n"
                + "    print('direct ERR', type(e).__name__)\n";
        seen.clear(); // the server is the class's: what other cases sent is not this one's
        RunResult r = runner.run(RunRequest.of(SandboxSpec.builder().egress(EgressPolicy.allowOnly("allowed.test", "rebind.test")).build(),
                Execution.builder(code).budget(Duration.ofSeconds(60)).build()));
        String out = r.stdout() + r.stderr();
        assertEquals(RunStatus.EXITED, r.status(), out);
        assertTrue(r.stdout().contains("allowed OK 200 hello /hi"), out);
        assertTrue(r.stdout().contains("other HTTP 403 host-not-allowed"), out);
        assertTrue(r.stdout().contains("raw HTTP 403 ip-not-allowed"), out);
        assertTrue(r.stdout().contains("rebind HTTP 403 address-not-allowed"), out);
        assertTrue(r.stdout().contains("direct ERR"), "the container reached the host's loopback without the proxy: " + out);
        assertEquals(0, hostCanary.bytes("direct"), out);
        assertEquals(List.of("GET /hi host=allowed.test"), List.copyOf(seen), "what reached the loopback server");
    }

    /**
     * A network allowance cannot be counted under allow-all (the allow-all network, past the proxy), as the
     * code's or the setup's egress: refused before any engine call (a runner with no engine at all refuses it
     * the same way, while it takes the allowance with a list as far as its engine call). Deny-all with an
     * allowance moves nothing and runs.
     */
    @Test
    void aNetworkAllowanceWithAllowAllIsRefusedBeforeAnyEngineCall() throws Exception {
        Limits oneMib = Limits.builder().networkMib(1).build();
        String refusal = "a network limit with allow-all egress (the docker runner counts a sandbox's bytes in its egress proxy,"
                + " and allow-all puts the container on the 'host' network past it: give a domain or CIDR list instead)";
        int before = TestEngine.driver(runner).labelledResources();
        UnsupportedPolicyException code = assertThrows(UnsupportedPolicyException.class, () -> runner.open(
                SandboxSpec.builder().egress(EgressPolicy.allowAll()).limits(oneMib).build()).close());
        assertEquals(List.of(refusal), code.violations());
        // the setup's egress counts too: allow-all there would move bytes past the proxy before the lock-down
        UnsupportedPolicyException setup = assertThrows(UnsupportedPolicyException.class, () -> runner.open(
                SandboxSpec.builder().egress(EgressPolicy.allowOnly("allowed.test")).setupEgress(EgressPolicy.allowAll())
                        .setupCommand("true").limits(oneMib).build()).close());
        assertEquals(List.of(refusal), setup.violations());
        assertEquals(before, TestEngine.driver(runner).labelledResources(), "a refused sandbox left a container or volume");
        assertEquals(0, runner.openSandboxes());
        try (DockerSandboxRunner none = TestEngine.builder().dockerHost("unix:///nonexistent/sandbox4j-docker.sock").build()) {
            UnsupportedPolicyException e = assertThrows(UnsupportedPolicyException.class, () -> none.open(
                    SandboxSpec.builder().egress(EgressPolicy.allowAll()).limits(oneMib).build()).close());
            assertEquals(List.of(refusal), e.violations());
            // the control: the allowance with a list is taken, so the engine is asked for (and there is none)
            assertThrows(SandboxConfigurationException.class, () -> none.open(
                    SandboxSpec.builder().egress(EgressPolicy.allowOnly("allowed.test")).limits(oneMib).build()).close());
        }
        try (Sandbox s = runner.open(SandboxSpec.builder().egress(EgressPolicy.denyAll()).limits(oneMib).build())) {
            assertEquals("ok\n", s.exec(dev.sandbox4j.api.Execution.python("print('ok')")).stdout());
        }
    }

    /**
     * One allowance for the whole sandbox: the setup uploads 700 KiB through its proxy, the lock-down gives the
     * code a new proxy with what is left (about 324 KiB), so the code's 700 KiB upload fails while its 4 KiB one,
     * sent first, goes through. Per proxy, both 700 KiB uploads would pass.
     */
    @Test
    void theAllowanceIsSharedByTheSetupAndTheCodeAcrossTheLockDown() {
        String upload = "import urllib.request, sys\n"
                + "def post(tag, n):\n"
                + "    try:\n"
                + "        r = urllib.request.urlopen(urllib.request.Request('http://allowed.test/' + tag, data=b'x' * n,"
                + " method='POST'), timeout=20)\n"
                + "        print(tag, 'STATUS', r.status)\n"
                + "    except Exception as e:\n"
                + "        print(tag, 'FAILED', type(e).__name__)\n";
        String setup = "python3 - <<'UP' > setup-said.txt 2>&1\n" + upload + "post('setup', 700 << 10)\nUP\n";
        seen.clear();
        RunResult r = runner.run(RunRequest.of(
                SandboxSpec.builder().egress(EgressPolicy.allowOnly("allowed.test"))
                        .setupEgress(EgressPolicy.allowOnly("allowed.test", "rebind.test")).setupCommand(setup)
                        .setupBudget(Duration.ofSeconds(60))
                        .limits(Limits.builder().networkMib(1).build()).build(),
                Execution.builder(upload + "print(open('setup-said.txt').read().strip())\n"
                        + "post('small', 4096)\npost('large', 700 << 10)\n").budget(Duration.ofSeconds(60)).build()));
        assertEquals(RunStatus.EXITED, r.status(), r + " " + r.stderr());
        assertTrue(r.stdout().contains("setup STATUS 200"), "the setup's upload (the control) failed: " + r.stdout());
        assertTrue(r.stdout().contains("small STATUS 200"), "the code's small upload failed: " + r.stdout());
        assertTrue(r.stdout().contains("large FAILED"), "700 KiB went through after the setup used 700 KiB of 1 MiB: " + r.stdout());
        assertTrue(seen.stream().anyMatch(l -> l.startsWith("POST /setup")), "the setup's upload did not reach the server: " + seen);
        assertFalse(seen.stream().anyMatch(l -> l.contains("/large")), "the large upload reached the server: " + seen);
    }
}
