package dev.sandbox4j.emulators.e2b;

import static dev.sandbox4j.emulators.e2b.WireTestSupport.JSON;
import static dev.sandbox4j.emulators.e2b.WireTestSupport.json;
import static dev.sandbox4j.emulators.e2b.WireTestSupport.readAll;
import static dev.sandbox4j.emulators.e2b.WireTestSupport.startBody;
import static dev.sandbox4j.emulators.e2b.WireTestSupport.stdout;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.sandbox4j.local.LocalSandboxRunner;
import dev.sandbox4j.tck.CanaryListener;
import java.io.IOException;
import java.net.InetAddress;
import java.util.concurrent.TimeUnit;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.Response;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The egress the emulator received, applied to real local sandboxes and measured by bytes arriving at
 * a loopback listener: the wire requests are plain HTTP, as in the wire tests.
 */
class E2bEgressCanaryTest {
    static final String KEY = WireTestSupport.KEY;
    LocalSandboxRunner local;
    E2bEmulator emulator;
    CanaryListener canary;
    final OkHttpClient http = new OkHttpClient.Builder().readTimeout(60, TimeUnit.SECONDS).build();

    @BeforeEach
    void start() throws IOException {
        local = LocalSandboxRunner.builder().maxAddressSpaceMib(2048).build();
        emulator = E2bEmulator.builder().apiKey(KEY).localRunner(local).build();
        canary = CanaryListener.start(InetAddress.getLoopbackAddress());
    }

    @AfterEach
    void stop() throws IOException {
        try {
            assertEquals(0, emulator.ledger().live(), "leaked: " + emulator.ledger().liveIds());
        } finally {
            emulator.close();
            local.close();
            canary.close();
        }
    }

    private JsonNode create(String body) throws IOException {
        Request r = new Request.Builder().url(emulator.baseUrl() + "/v2/sandboxes").header("X-API-KEY", KEY).post(json(body)).build();
        try (Response res = http.newCall(r).execute()) {
            assertEquals(201, res.code());
            return JSON.readTree(res.body().string());
        }
    }

    private void network(String id, String body) throws IOException {
        Request r = new Request.Builder().url(emulator.baseUrl() + "/sandboxes/" + id + "/network").header("X-API-KEY", KEY)
                .put(json(body)).build();
        try (Response res = http.newCall(r).execute()) {
            assertEquals(204, res.code());
        }
    }

    private void kill(String id) throws IOException {
        Request r = new Request.Builder().url(emulator.baseUrl() + "/sandboxes/" + id).header("X-API-KEY", KEY).delete().build();
        try (Response res = http.newCall(r).execute()) {
            assertEquals(204, res.code());
        }
    }

    /** Runs the canary as {@code python3 -c}, tagged; returns what the code said. */
    private String probe(JsonNode sandbox, String tag) throws IOException {
        String code = "import socket\n"
                + "try:\n"
                + "    s = socket.create_connection(('127.0.0.1', " + canary.port() + "), timeout=5)\n"
                + "    s.sendall(b'" + tag + "\\n' + b'x' * 1024)\n"
                + "    s.close()\n"
                + "    print('SENT')\n"
                + "except Exception as e:\n"
                + "    print('BLOCKED', type(e).__name__)\n";
        Request r = new Request.Builder().url(emulator.baseUrl() + "/process.Process/Start")
                .header("E2b-Sandbox-Id", sandbox.get("sandboxID").asText()).header("E2b-Sandbox-Port", "49983")
                .header("X-Access-Token", sandbox.get("envdAccessToken").asText()).header("Connect-Timeout-Ms", "30000")
                .post(startBody("{\"process\":{\"cmd\":\"python3\",\"args\":[\"-c\"," + JSON.writeValueAsString(code) + "]}}"))
                .build();
        try (Response res = http.newCall(r).execute()) {
            return stdout(readAll(res.body().byteStream()), "stdout");
        }
    }

    @Test
    void denyAllSendsNothingAndANetworkUpdateAppliesToTheNextCommand() throws Exception {
        JsonNode sb = create("{\"templateID\":\"base\",\"allow_internet_access\":false}");
        String said = probe(sb, "denied");
        assertEquals(0, canary.bytes("denied"), "bytes reached the host under deny-all; the code said " + said);

        network(sb.get("sandboxID").asText(), "{\"allowOut\":[\"127.0.0.1\"],\"denyOut\":[\"0.0.0.0/0\"]}");
        said = probe(sb, "allowed");
        assertTrue(canary.awaitBytes("allowed", 10_000), "the allowed target was not reached; the code said " + said);

        network(sb.get("sandboxID").asText(), "{\"allow_internet_access\":false}");
        said = probe(sb, "denied-again");
        assertEquals(0, canary.bytes("denied-again"), "the lock-down did not apply; the code said " + said);
        kill(sb.get("sandboxID").asText());
    }

    @Test
    void aDomainAllowListIsNoWayToTheHostWhileNoConfigIsAllowAll() throws Exception {
        JsonNode domains = create("{\"templateID\":\"base\",\"network\":{\"allowOut\":[\"example.com\"],\"denyOut\":[\"0.0.0.0/0\"]}}");
        String said = probe(domains, "domains");
        assertEquals(0, canary.bytes("domains"), "the code said " + said);
        kill(domains.get("sandboxID").asText());

        JsonNode open = create("{\"templateID\":\"base\"}");
        said = probe(open, "open");
        assertTrue(canary.awaitBytes("open", 10_000), "no egress config is allow-all in E2B; the code said " + said);
        kill(open.get("sandboxID").asText());
    }
}
