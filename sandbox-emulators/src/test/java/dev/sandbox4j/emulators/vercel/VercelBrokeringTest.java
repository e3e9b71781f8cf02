package dev.sandbox4j.emulators.vercel;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpsConfigurator;
import com.sun.net.httpserver.HttpsServer;
import dev.sandbox4j.api.Execution;
import dev.sandbox4j.api.RunRequest;
import dev.sandbox4j.api.RunResult;
import dev.sandbox4j.api.SandboxSpec;
import dev.sandbox4j.egress.EgressResolver;
import dev.sandbox4j.emulators.LocalMachines;
import dev.sandbox4j.local.LocalSandboxRunner;
import dev.sandbox4j.policy.EgressPolicy;
import dev.sandbox4j.policy.HeaderRule;
import dev.sandbox4j.policy.SecretRef;
import dev.sandbox4j.vercel.VercelSandboxRunner;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
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
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * Transforms with {@code match}, applied as Vercel applies them: a loopback HTTPS server stands for
 * {@code api.test} (the local runner's egress proxy routes the name there and trusts its certificate), and
 * records the brokered headers of each request the code in the emulated sandbox makes. Loopback only.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class VercelBrokeringTest {
    private static final String TOKEN = "brokering-token-6c1f0a";
    private static final String TEAM = "team_b";
    private static final String PROJECT = "prj_b";
    /** Not real keys; unusual enough that finding one where it should not be means it leaked there. */
    private static final String KEY = "sk-scoped-3e7a91c4d0";
    private static final String OTHER = "sk-other-8b2d64f1aa";
    private static final String OTHER2 = "sk-other2-51c0e9b7f3";
    /** The requests the code makes, one per line of its output: method and path. */
    private static final List<String> REQUESTS = List.of("GET /v1/models", "POST /v1/models", "GET /v2/models", "GET /v1",
            "DELETE /v1/models");

    private Path keyDir;
    private HttpsServer https;
    private final Queue<String> seen = new ConcurrentLinkedQueue<>();
    private LocalSandboxRunner local;
    private VercelEmulator emulator;
    private Wire wire;

    @BeforeAll
    void start() throws Exception {
        InetAddress lo = InetAddress.getLoopbackAddress();
        keyDir = Files.createTempDirectory("sandbox4j-vercel-brokering-");
        KeyStore serverKeys = serverKeys(keyDir);
        KeyManagerFactory kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
        kmf.init(serverKeys, "changeit".toCharArray());
        SSLContext ctx = SSLContext.getInstance("TLS");
        ctx.init(kmf.getKeyManagers(), null, null);
        https = HttpsServer.create(new InetSocketAddress(lo, 0), 16);
        https.setHttpsConfigurator(new HttpsConfigurator(ctx));
        https.createContext("/", this::answer);
        https.start();
        KeyStore trust = KeyStore.getInstance("PKCS12");
        trust.load(null, null);
        trust.setCertificateEntry("api", serverKeys.getCertificate("api"));
        InetSocketAddress at = new InetSocketAddress(lo, https.getAddress().getPort());
        local = LocalSandboxRunner.builder().maxAddressSpaceMib(2048)
                .egressProxy(b -> b.resolver(EgressResolver.fixed(Map.of())).route("api.test", 443, at).upstreamTrustStore(trust))
                .build();
        emulator = VercelEmulator.builder().token(TOKEN).teamId(TEAM).projectId(PROJECT)
                .machines(LocalMachines.using(local)).build();
        wire = new Wire(emulator, TOKEN, TEAM);
    }

    @BeforeEach
    void clear() {
        seen.clear();
    }

    @AfterAll
    void stop() throws IOException {
        try {
            if (emulator != null) {
                emulator.close();
            }
            if (local != null) {
                assertEquals(0, local.openSandboxes(), "local sandboxes left open");
                local.close();
            }
        } finally {
            if (https != null) {
                https.stop(0);
            }
            try (var files = Files.walk(keyDir)) {
                files.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
            }
        }
    }

    /** A self-signed certificate for api.test made by the JDK's keytool. */
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

    private void answer(HttpExchange ex) throws IOException {
        try (InputStream in = ex.getRequestBody()) {
            in.readAllBytes();
        }
        seen.add(ex.getRequestMethod() + " " + ex.getRequestURI().getPath() + " key=" + ex.getRequestHeaders().getFirst("X-Api-Key")
                + " other=" + ex.getRequestHeaders().getFirst("X-Other"));
        byte[] body = "ok".getBytes(StandardCharsets.UTF_8);
        ex.sendResponseHeaders(200, body.length);
        try (OutputStream out = ex.getResponseBody()) {
            out.write(body);
        }
    }

    /** Python making {@link #REQUESTS} in order, each sending its own forged X-Api-Key, one line of output each. */
    private static String code() {
        StringBuilder c = new StringBuilder("import urllib.request\n");
        for (String r : REQUESTS) {
            String[] mp = r.split(" ");
            c.append("try:\n")
                    .append("    q = urllib.request.Request('https://api.test").append(mp[1]).append("', method='").append(mp[0])
                    .append("', data=").append(mp[0].equals("POST") ? "b'x'" : "None").append(", headers={'X-Api-Key': 'forged'})\n")
                    .append("    print('").append(r).append("', urllib.request.urlopen(q, timeout=20).status)\n")
                    .append("except Exception as e:\n")
                    .append("    print('").append(r).append(" ERR', type(e).__name__)\n");
        }
        return c.toString();
    }

    /** Creates a session with {@code policy} (wire JSON), runs {@link #code()} in it, stops it; returns the output. */
    private String runUnder(String policy) throws Exception {
        Wire.Response created = wire.post("/v3/sandboxes", "{\"projectId\":\"" + PROJECT + "\",\"networkPolicy\":" + policy + "}");
        assertEquals(200, created.status, created.body);
        assertFalse(created.body.contains(KEY) || created.body.contains(OTHER), "a header value echoed");
        String session = created.json().get("session").get("id").asText();
        try {
            Wire.Response run = wire.post("/v2/sandboxes/sessions/" + session + "/cmd",
                    "{\"command\":\"python3\",\"args\":[\"-c\"," + Wire.JSON.writeValueAsString(code()) + "],\"wait\":true,\"logs\":true}");
            assertEquals(200, run.status, run.body);
            assertFalse(run.body.contains(KEY) || run.body.contains(OTHER), "a header value in the sandbox's output");
            return run.body;
        } finally {
            wire.postEmpty("/v2/sandboxes/sessions/" + session + "/stop");
        }
    }

    @Test
    void aMatchedTransformsHeaderArrivesOnlyForItsMethodsAndPath() throws Exception {
        String out = runUnder("{\"allow\":{\"api.test\":[{\"match\":{\"method\":[\"GET\",\"POST\"],\"path\":{\"startsWith\":\"/v1/\"}},"
                + "\"transform\":[{\"headers\":{\"X-Api-Key\":\"" + KEY + "\"}}]}]}}");
        // every request reached the server; the header is the secret inside the match, and the sandbox's own
        // forged value is removed outside it (Vercel would pass that on; the emulator's proxy is stricter)
        assertEquals(List.of("GET /v1/models key=" + KEY + " other=null", "POST /v1/models key=" + KEY + " other=null",
                "GET /v2/models key=null other=null", "GET /v1 key=null other=null", "DELETE /v1/models key=null other=null"),
                List.copyOf(seen), out);
    }

    @Test
    void theFirstMatchingRuleIsTheOnlyOneAppliedAsOnVercel() throws Exception {
        // the scoped rule first: on /v1/ only its headers (the rule after it, with another X-Other, is not
        // applied), elsewhere the later rule's
        String out = runUnder("{\"allow\":{\"api.test\":["
                + "{\"match\":{\"path\":{\"startsWith\":\"/v1/\"}},\"transform\":[{\"headers\":{\"X-Api-Key\":\"" + KEY + "\",\"X-Other\":\"" + OTHER + "\"}}]},"
                + "{\"transform\":[{\"headers\":{\"X-Other\":\"" + OTHER2 + "\"}}]}]}}");
        assertEquals(List.of("GET /v1/models key=" + KEY + " other=" + OTHER, "POST /v1/models key=" + KEY + " other=" + OTHER,
                "GET /v2/models key=null other=" + OTHER2, "GET /v1 key=null other=" + OTHER2,
                "DELETE /v1/models key=" + KEY + " other=" + OTHER), List.copyOf(seen), out);
    }

    @Test
    void rulesTheProxyCannotApplyAsVercelWouldGiveNoNetworkRatherThanOtherHeaders() throws Exception {
        // an unscoped rule first shadows the scoped one on Vercel: the key never goes. The proxy would add both
        // headers on /v1/, so the emulator runs the code with no network at all.
        String shadowed = "{\"allow\":{\"api.test\":[{\"transform\":[{\"headers\":{\"X-Other\":\"" + OTHER + "\"}}]},"
                + "{\"match\":{\"path\":{\"startsWith\":\"/v1/\"}},\"transform\":[{\"headers\":{\"X-Api-Key\":\"" + KEY + "\"}}]}]}}";
        // a match the proxy has no form for
        String exact = "{\"allow\":{\"api.test\":[{\"match\":{\"path\":{\"exact\":\"/v1/models\"}},"
                + "\"transform\":[{\"headers\":{\"X-Api-Key\":\"" + KEY + "\"}}]}]}}";
        for (String policy : List.of(shadowed, exact)) {
            String out = runUnder(policy);
            assertEquals(List.of(), List.copyOf(seen), out);
            assertTrue(out.contains("GET /v1/models ERR"), out);
        }
    }

    @Test
    void theAdaptersScopedRulesReachTheServerExactlyInScope() throws Exception {
        // an unscoped rule before a scoped one: the adapter puts their overlap first, so nothing is shadowed
        EgressPolicy policy = EgressPolicy.builder().allowDomain("api.test")
                .headerRule(HeaderRule.of("api.test", "X-Other", SecretRef.of("other", () -> OTHER)))
                .headerRule(HeaderRule.builder("api.test", "X-Api-Key", SecretRef.of("key", () -> KEY)).methods("GET", "DELETE")
                        .pathPrefix("/v1/").build())
                .build();
        try (VercelSandboxRunner runner = VercelSandboxRunner.builder().token(TOKEN).teamId(TEAM).projectId(PROJECT)
                .baseUrl(emulator.baseUrl() + "/api").build()) {
            RunResult r = runner.run(RunRequest.of(SandboxSpec.builder().egress(policy).build(),
                    Execution.builder(code()).budget(Duration.ofSeconds(90)).build()));
            assertEquals(java.util.OptionalInt.of(0), r.exitCode(), r.stdout() + r.stderr());
            assertFalse((r.stdout() + r.stderr()).contains(KEY));
        }
        assertEquals(List.of("GET /v1/models key=" + KEY + " other=" + OTHER, "POST /v1/models key=null other=" + OTHER,
                "GET /v2/models key=null other=" + OTHER, "GET /v1 key=null other=" + OTHER,
                "DELETE /v1/models key=" + KEY + " other=" + OTHER), List.copyOf(seen));
    }
}
