package dev.sandbox4j.local;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import com.sun.net.httpserver.HttpsConfigurator;
import com.sun.net.httpserver.HttpsServer;
import dev.sandbox4j.api.Execution;
import dev.sandbox4j.api.RunResult;
import dev.sandbox4j.api.RunStatus;
import dev.sandbox4j.api.Sandbox;
import dev.sandbox4j.api.SandboxSpec;
import dev.sandbox4j.egress.EgressResolver;
import dev.sandbox4j.policy.EgressPolicy;
import dev.sandbox4j.policy.HeaderRule;
import dev.sandbox4j.policy.Language;
import dev.sandbox4j.policy.SecretRef;
import dev.sandbox4j.tck.CanaryListener;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.cert.Certificate;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * Issue 31 on the local runner, loopback only: {@code allow=allowed.test} through the sandbox's own
 * egress proxy (its resolver and routes set by the test, so {@code allowed.test} is a loopback server),
 * the refusals the code sees, no other route out (a listener on the host's loopback is not reachable:
 * the sandbox has its own network namespace), which clients use the proxy as shipped, and a header
 * rule's secret reaching a loopback HTTPS server while nothing inside the sandbox holds it.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class LocalEgressProxyTest {
    /** Not a real key; long and unusual enough that finding it anywhere means it leaked. */
    static final String SECRET = "sk-test-7f3c9a1e5b2d4086-brokered";

    Path workRoot;
    Path keyDir;
    HttpServer http;
    HttpsServer https;
    CanaryListener hostCanary;
    final Queue<String> seen = new ConcurrentLinkedQueue<>();
    LocalSandboxRunner runner;

    @BeforeAll
    void start() throws Exception {
        workRoot = TestDirs.workRoot();
        InetAddress lo = InetAddress.getLoopbackAddress();
        http = HttpServer.create(new InetSocketAddress(lo, 0), 16);
        http.createContext("/", ex -> answer(ex, "http"));
        http.start();
        keyDir = Files.createTempDirectory("sandbox4j-egress-test-");
        KeyStore serverKeys = serverKeys(keyDir);
        https = HttpsServer.create(new InetSocketAddress(lo, 0), 16);
        KeyManagerFactory kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
        kmf.init(serverKeys, "changeit".toCharArray());
        SSLContext ctx = SSLContext.getInstance("TLS");
        ctx.init(kmf.getKeyManagers(), null, null);
        https.setHttpsConfigurator(new HttpsConfigurator(ctx));
        https.createContext("/", ex -> answer(ex, "https"));
        https.start();
        KeyStore trust = KeyStore.getInstance("PKCS12");
        trust.load(null, null);
        Certificate cert = serverKeys.getCertificate("api");
        trust.setCertificateEntry("api", cert);
        hostCanary = CanaryListener.start(lo);
        InetSocketAddress httpAt = new InetSocketAddress(lo, http.getAddress().getPort());
        InetSocketAddress httpsAt = new InetSocketAddress(lo, https.getAddress().getPort());
        runner = LocalSandboxRunner.builder().workRoot(workRoot).maxAddressSpaceMib(2048)
                .egressProxy(b -> b
                        // what DNS would say: both names are on this machine's loopback (a private answer)
                        .resolver(EgressResolver.fixed(Map.of("other.test", List.of(lo), "rebind.test", List.of(lo))))
                        // the application's own choice (never DNS): allowed.test and api.test are these servers
                        .route("allowed.test", 80, httpAt)
                        .route("api.test", 443, httpsAt)
                        .upstreamTrustStore(trust))
                .build();
    }

    /** A self-signed certificate for api.test made by the JDK's keytool, in a PKCS12 key store. */
    private static KeyStore serverKeys(Path dir) throws Exception {
        Path ks = dir.resolve("server.p12");
        Process p = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "keytool").toString(),
                "-genkeypair", "-alias", "api", "-keyalg", "EC", "-groupname", "secp256r1", "-dname", "CN=api.test",
                "-ext", "SAN=dns:api.test", "-validity", "2", "-keystore", ks.toString(), "-storetype", "PKCS12",
                "-storepass", "changeit", "-keypass", "changeit").redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(60, TimeUnit.SECONDS) && p.exitValue() == 0, "keytool failed: " + out);
        KeyStore k = KeyStore.getInstance("PKCS12");
        try (InputStream in = Files.newInputStream(ks)) {
            k.load(in, "changeit".toCharArray());
        }
        return k;
    }

    private void answer(HttpExchange ex, String scheme) throws IOException {
        try (InputStream in = ex.getRequestBody()) {
            in.readAllBytes();
        }
        String auth = ex.getRequestHeaders().getFirst("Authorization");
        seen.add(scheme + " " + ex.getRequestMethod() + " " + ex.getRequestURI() + " host=" + ex.getRequestHeaders().getFirst("Host")
                + " auth=" + auth);
        byte[] body = ("hello from " + scheme + " " + ex.getRequestURI().getPath()).getBytes(StandardCharsets.UTF_8);
        ex.sendResponseHeaders(200, body.length);
        try (OutputStream out = ex.getResponseBody()) {
            out.write(body);
        }
    }

    @AfterAll
    void stop() throws IOException {
        try {
            if (runner != null) {
                runner.close();
            }
            assertEquals(0, TestDirs.entries(workRoot), "sandbox directories left behind");
        } finally {
            http.stop(0);
            https.stop(0);
            hostCanary.close();
            TestDirs.delete(workRoot);
            TestDirs.delete(keyDir);
        }
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

    /** A network allowance cannot be counted under allow-all (the host's network, past the proxy): refused before anything. */
    @Test
    void aNetworkAllowanceWithAllowAllIsRefusedBeforeAnythingIsMade() throws IOException {
        dev.sandbox4j.policy.Limits oneMib = dev.sandbox4j.policy.Limits.builder().networkMib(1).build();
        long before = TestDirs.entries(workRoot);
        org.junit.jupiter.api.Assertions.assertThrows(dev.sandbox4j.policy.UnsupportedPolicyException.class, () -> runner.open(
                SandboxSpec.builder().egress(EgressPolicy.allowAll()).limits(oneMib).build()).close());
        // the setup's egress counts too: allow-all there would move bytes past the proxy before the lock-down
        org.junit.jupiter.api.Assertions.assertThrows(dev.sandbox4j.policy.UnsupportedPolicyException.class, () -> runner.open(
                SandboxSpec.builder().egress(EgressPolicy.allowOnly("allowed.test")).setupEgress(EgressPolicy.allowAll())
                        .setupCommand("true").limits(oneMib).build()).close());
        assertEquals(before, TestDirs.entries(workRoot), "a refused sandbox left a directory");
        assertEquals(0, runner.openSandboxes());
    }

    /**
     * One allowance for the whole sandbox: the setup uploads 700 KiB through its proxy, the lock-down
     * gives the code a new proxy with what is left (about 324 KiB), so the code's 700 KiB upload fails
     * while its 4 KiB one, sent first, goes through. Per proxy, both 700 KiB uploads would pass.
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
        RunResult r = runner.run(dev.sandbox4j.api.RunRequest.of(
                SandboxSpec.builder().egress(EgressPolicy.allowOnly("allowed.test"))
                        .setupEgress(EgressPolicy.allowOnly("allowed.test", "rebind.test")).setupCommand(setup)
                        .setupBudget(Duration.ofSeconds(60))
                        .limits(dev.sandbox4j.policy.Limits.builder().networkMib(1).build()).build(),
                Execution.builder(upload + "print(open('setup-said.txt').read().strip())\n"
                        + "post('small', 4096)\npost('large', 700 << 10)\n").budget(Duration.ofSeconds(60)).build()));
        assertEquals(RunStatus.EXITED, r.status(), r + " " + r.stderr());
        assertTrue(r.stdout().contains("setup STATUS 200"), "the setup's upload (the control) failed: " + r.stdout());
        assertTrue(r.stdout().contains("small STATUS 200"), "the code's small upload failed: " + r.stdout());
        assertTrue(r.stdout().contains("large FAILED"), "700 KiB went through after the setup used 700 KiB of 1 MiB: " + r.stdout());
        assertFalse(seen.stream().anyMatch(l -> l.contains("/large")), "the large upload reached the server: " + seen);
    }

    @Test
    void allowAllowedTestReachesItsServerAndEverythingElseIsRefused() throws Exception {
        int httpPort = http.getAddress().getPort();
        String code = "import socket, urllib.request, urllib.error\n"
                + get("allowed", "http://allowed.test/hi")
                + get("other", "http://other.test/hi")
                + get("raw", "http://127.0.0.1:" + httpPort + "/raw")
                + get("rebind", "http://rebind.test/hi")
                // no proxy: straight at a listener on the host's loopback
                + "try:\n"
                + "    s = socket.create_connection(('127.0.0.1', " + hostCanary.port() + "), timeout=5)\n"
                + "    s.sendall(b'direct\\n' + b'x' * 1024)\n"
                + "    s.close()\n"
                + "    print('direct SENT')\n"
                + "except Exception as e:\n"
                + "    print('direct ERR', type(e).__name__)\n";
        seen.clear();
        RunResult r = runner.run(dev.sandbox4j.api.RunRequest.of(
                SandboxSpec.builder().egress(EgressPolicy.allowOnly("allowed.test", "rebind.test")).build(),
                Execution.builder(code).budget(Duration.ofSeconds(60)).build()));
        String out = r.stdout() + r.stderr();
        assertEquals(RunStatus.EXITED, r.status(), out);
        assertTrue(r.stdout().contains("allowed OK 200 hello from http /hi"), out);
        assertTrue(r.stdout().contains("other HTTP 403 host-not-allowed"), out);
        assertTrue(r.stdout().contains("raw HTTP 403 ip-not-allowed"), out);
        assertTrue(r.stdout().contains("rebind HTTP 403 address-not-allowed"), out);
        assertTrue(r.stdout().contains("direct ERR"), "the sandbox reached the host's loopback without the proxy: " + out);
        assertEquals(0, hostCanary.bytes("direct"), "bytes reached the host's loopback listener directly: " + out);
        assertEquals(List.of("http GET /hi host=allowed.test auth=null"), List.copyOf(seen), "what reached the loopback servers");
    }

    @Test
    void curlUsesTheProxyAsShippedAndNodeFetchDoesNotAndFailsVisibly() {
        assertTrue(runner.capabilities().supports(Language.BASH));
        String code = "curl -s -o /dev/null -w 'curl %{http_code}\\n' http://allowed.test/curl\n"
                + "curl -s -o /dev/null -w 'curl-refused %{http_code}\\n' http://other.test/curl\n"
                + "node -e \"fetch('http://allowed.test/node').then(r => console.log('node', r.status),"
                + " e => console.log('node ERR', (e.cause && e.cause.code) || e.name))\"\n";
        seen.clear();
        RunResult r = runner.run(dev.sandbox4j.api.RunRequest.of(
                SandboxSpec.builder().egress(EgressPolicy.allowOnly("allowed.test")).build(),
                Execution.builder(code).language(Language.BASH).budget(Duration.ofSeconds(60)).build()));
        String out = r.stdout() + r.stderr();
        assertTrue(r.stdout().contains("curl 200"), out);
        assertTrue(r.stdout().contains("curl-refused 403"), out);
        // Node 20's fetch ignores HTTP_PROXY: with no DNS and no route, it fails (here: the name does not resolve)
        assertTrue(r.stdout().contains("node ERR"), out);
        assertEquals(List.of("http GET /curl host=allowed.test auth=null"), List.copyOf(seen), "what reached the loopback servers");
    }

    @Test
    void aHeaderRulesSecretReachesTheHttpsServerAndIsNowhereInTheSandbox() throws Exception {
        EgressPolicy policy = EgressPolicy.builder().allowDomain("api.test")
                .headerRule(HeaderRule.of("api.test", "Authorization", SecretRef.of("api-key", () -> SECRET), "Bearer "))
                .build();
        seen.clear();
        try (Sandbox sb = runner.open(SandboxSpec.builder().egress(policy).build())) {
            RunResult call = sb.exec(Execution.builder("import urllib.request, urllib.error, os\n"
                    + get("api", "https://api.test/v1/data")
                    + "print('bundle', os.environ.get('SSL_CERT_FILE'))\n").budget(Duration.ofSeconds(60)).build());
            String out = call.stdout() + call.stderr();
            assertTrue(call.stdout().contains("api OK 200 hello from https /v1/data"), out);
            assertEquals(List.of("https GET /v1/data host=api.test auth=Bearer " + SECRET), List.copyOf(seen),
                    "the brokered header did not arrive as the rule says");
            // a second exec, in the same sandbox: every file the code can write, its environment, every process
            String search = "import os\n"
                    + "needle = bytes.fromhex('" + java.util.HexFormat.of().formatHex(SECRET.getBytes(StandardCharsets.UTF_8)) + "')\n"
                    + "hits = []\n"
                    + "for top in ('/sandbox', '/tmp', '/dev/shm', '/sandbox4j-egress'):\n"
                    + "    for d, _, files in os.walk(top):\n"
                    + "        for f in files:\n"
                    + "            p = os.path.join(d, f)\n"
                    + "            try:\n"
                    + "                with open(p, 'rb') as fh:\n"
                    + "                    data = fh.read()\n"
                    + "            except OSError:\n"
                    + "                continue\n"
                    + "            if needle in data:\n"
                    + "                hits.append(p)\n"
                    + "            if b'PRIVATE KEY' in data:\n"
                    + "                hits.append('key:' + p)\n"
                    + "for k, v in os.environ.items():\n"
                    + "    if needle.decode() in v or needle.decode() in k:\n"
                    + "        hits.append('env:' + k)\n"
                    + "procs = 0\n"
                    + "for pid in os.listdir('/proc'):\n"
                    + "    if not pid.isdigit():\n"
                    + "        continue\n"
                    + "    for part in ('cmdline', 'environ'):\n"
                    + "        try:\n"
                    + "            with open('/proc/%s/%s' % (pid, part), 'rb') as fh:\n"
                    + "                if needle in fh.read():\n"
                    + "                    hits.append('proc:%s/%s' % (pid, part))\n"
                    + "            procs += part == 'cmdline'\n"
                    + "        except OSError:\n"
                    + "            pass\n"
                    + "print('procs', procs, 'egress-files', sorted(os.listdir('/sandbox4j-egress')))\n"
                    + "print('hits', hits)\n";
            RunResult r = sb.exec(Execution.builder(search).budget(Duration.ofSeconds(60)).build());
            String said = r.stdout() + r.stderr();
            assertTrue(r.stdout().contains("hits []"), "the secret (or a private key) is inside the sandbox: " + said);
            // the forwarder and the code itself were looked at, so the search covered more than itself
            assertTrue(r.stdout().matches("(?s).*procs [3-9].*"), said);
            assertTrue(r.stdout().contains("ca-bundle.pem"), said);
            assertFalse(said.contains(SECRET));
        }
    }
}
