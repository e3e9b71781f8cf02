package dev.sandbox4j.docker;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.sun.net.httpserver.HttpServer;
import dev.sandbox4j.api.Execution;
import dev.sandbox4j.api.RunRequest;
import dev.sandbox4j.api.RunResult;
import dev.sandbox4j.api.RunStatus;
import dev.sandbox4j.api.SandboxSpec;
import dev.sandbox4j.egress.EgressResolver;
import dev.sandbox4j.policy.EgressPolicy;
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
 * process), the refusals the code sees, and no route to a listener on the host's loopback.
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
}
