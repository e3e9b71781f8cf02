package dev.sandbox4j.emulators.vercel;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.parallel.Isolated;

/** The bearer token and brokered header values never reach the emulator's logs, answers or sandboxes. */
@Isolated("it swaps System.err to read the emulator's log lines")
class VercelEmulatorSecretsTest {
    private static final String TOKEN = "tok-SECRET-a8f3e1c9d2b7";
    private static final String HEADER_SECRET = "sk-SECRET-brokered-44e1";

    @Test
    void secretsStayOutOfLogsAnswersAndTheSandbox() throws Exception {
        PrintStream original = System.err;
        ByteArrayOutputStream captured = new ByteArrayOutputStream();
        StringBuilder answers = new StringBuilder();
        System.setErr(new PrintStream(captured, true, StandardCharsets.UTF_8));
        try (TestMachines machines = new TestMachines();
                VercelEmulator emulator = VercelEmulator.builder().token(TOKEN).teamId("team_s").projectId("prj_s")
                        .machines(machines).build()) {
            Wire wire = new Wire(emulator, TOKEN, "team_s");
            // refused requests: a wrong token (whose value is our secret plus a suffix) and a wrong team
            answers.append(new Wire(emulator, TOKEN + "x", "team_s").post("/v3/sandboxes", "{}").body);
            answers.append(new Wire(emulator, TOKEN, "team_other").post("/v3/sandboxes", "{}").body);
            // a policy brokering a credential, and a refused one carrying it too
            String policy = "{\"allow\":{\"api.example.com\":[{\"transform\":[{\"headers\":{\"Authorization\":\"Bearer "
                    + HEADER_SECRET + "\"}}]}]}}";
            answers.append(wire.post("/v3/sandboxes", "{\"projectId\":\"prj_s\",\"networkPolicy\":{\"allow\":{\"a.com\":"
                    + "[{\"transform\":[{\"headers\":{\"X\":\"" + HEADER_SECRET + "\"}}],\"forwardURL\":\"https://p.example\"}]}}}").body);
            Wire.Response created = wire.post("/v3/sandboxes", "{\"projectId\":\"prj_s\",\"networkPolicy\":" + policy + "}");
            assertEquals(200, created.status, created.body);
            answers.append(created.body);
            String session = created.json().get("session").get("id").asText();
            answers.append(wire.post("/v2/sandboxes/sessions/" + session + "/network-policy", policy).body);
            answers.append(wire.get("/v2/sandboxes/sessions/" + session, null).body);
            // what the sandbox sees: its environment and every file it can read under its work directory
            Wire.Response run = wire.post("/v2/sandboxes/sessions/" + session + "/cmd", "{\"command\":\"bash\",\"args\":"
                    + "[\"-c\",\"env; cat /proc/1/environ; grep -r . . 2>/dev/null\"],\"wait\":true,\"logs\":true}");
            answers.append(run.body);
            // a failure path that logs: a client that leaves before its (slowed) answer
            emulator.faults().slow(Duration.ofMillis(300));
            java.net.http.HttpClient.newHttpClient().sendAsync(wire.request("/v2/sandboxes/sessions/" + session, null)
                    .timeout(Duration.ofMillis(50)).GET().build(), java.net.http.HttpResponse.BodyHandlers.discarding())
                    .exceptionally(t -> null).get();
            emulator.faults().reset();
            answers.append(wire.postEmpty("/v2/sandboxes/sessions/" + session + "/stop").body);
        } finally {
            System.setErr(original);
        }
        String logs = captured.toString(StandardCharsets.UTF_8);
        assertTrue(answers.toString().contains("Authorization"), "the header name is echoed");
        for (String secret : new String[] {TOKEN, HEADER_SECRET}) {
            assertFalse(logs.contains(secret), "a secret in the logs: " + logs);
            assertFalse(answers.toString().contains(secret), "a secret in an answer or the sandbox's output");
        }
    }
}
